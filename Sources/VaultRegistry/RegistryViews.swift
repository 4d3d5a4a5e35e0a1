import FoundationEssentials
import Glibc
import VaultCore

// The registry's read views: members, rejoin plans, devices, a batch's operations, the log.

extension DeviceRegistry {
    /// The user-level view of a conversation (the seed's `getMembers`): one row per user.
    public struct MemberView: Sendable, Equatable {
        public let userDid: String
        public let deviceCount: Int
        public let deviceIds: [String]
        public let isAdmin: Bool
        public let joinedAt: String
    }

    public func members(conversation: String) throws -> [MemberView] {
        try require(conversations: "conversations")
        let d = dialect
        return try read { db in
            guard try db.bool("SELECT count(*) FROM members WHERE convo_id = ?", [.text(conversation)]) else {
                throw VaultError.notInRegistry("conversation \(QuotedInput(conversation))", registry: path)
            }
            // One row per open membership, grouped here: the engines' string aggregates differ.
            let rows = try db.rows("""
                SELECT user_did, device_id, is_admin, joined_at FROM members WHERE convo_id = ? AND left_at IS NULL
                ORDER BY user_did\(d.byteOrder), device_id\(d.byteOrder)
                """, [.text(conversation)])
            var views: [MemberView] = []
            var start = rows.startIndex
            while start < rows.endIndex {
                let user = rows[start].text("user_did")
                let end = rows[start...].firstIndex { $0.text("user_did") != user } ?? rows.endIndex
                let group = rows[start..<end]
                views.append(MemberView(userDid: user, deviceCount: group.count, deviceIds: group.map { $0.text("device_id") },
                                        isAdmin: group.contains { $0.bool("is_admin") }, joinedAt: group.map { $0.text("joined_at") }.max()!))
                start = end
            }
            return views
        }
    }

    /// The seed's auto-rejoin for a newly registered device: the conversations it must be added
    /// to (every conversation its user is in and it is not), as `mls.add` operations, and, when
    /// there are none, why.
    public struct RejoinPlan: Sendable {
        public let operations: [JSONValue]
        /// Set when `operations` is empty.
        public let emptyBecause: EmptyRejoin?
    }

    public enum EmptyRejoin: Hashable, Sendable {
        /// The device is already in every conversation its user is in.
        case alreadyEverywhere
        /// The user's memberships were all closed by revocations: these batches closed them,
        /// in these conversations.
        case closedByRevocation(batches: [String], conversations: [String])
        /// The user is in no conversation, and no revocation closed one (never joined, or left).
        case userInNoConversation
        /// The device has published no key packages (`key_packages_available` is 0): the server
        /// adds a device only with one (seed 003, `addMember`), so it can join none of these
        /// conversations until it publishes some.
        case noKeyPackages(conversations: [String])
    }

    /// The rejoin plan of `device`. A device the registry lacks, or a revoked one, is an error.
    public func rejoinPlan(user: String, device: String) throws -> RejoinPlan {
        try require(conversations: "conversations to rejoin")
        let d = dialect
        return try read { db in
            guard let row = try db.rows("SELECT device_mls_did, is_active, key_packages_available FROM user_devices WHERE user_did = ? AND device_id = ?",
                                        [.text(user), .text(device)]).first else {
                throw VaultError.notInRegistry("device \(QuotedInput("\(user)#\(device)"))", registry: path)
            }
            guard row.bool("is_active") else {
                throw VaultError.revokedDeviceRejoins(user: user, device: device)
            }
            let mlsDid = row.text("device_mls_did")
            let missing = try db.strings("""
                SELECT convo_id FROM members WHERE user_did = ? AND left_at IS NULL
                AND convo_id NOT IN (SELECT convo_id FROM members WHERE user_did = ? AND device_id = ? AND left_at IS NULL)
                GROUP BY convo_id ORDER BY convo_id\(d.byteOrder)
                """, [.text(user), .text(user), .text(device)])
            // A plan naming a device the server cannot add would fail at its first operation.
            if !missing.isEmpty, row.int("key_packages_available") <= 0 {
                return RejoinPlan(operations: [], emptyBecause: .noKeyPackages(conversations: missing))
            }
            let operations: [JSONValue] = missing.map { convo in
                .object([("op", .string("mls.add")), ("convo", .string(convo)), ("member", .string(mlsDid))])
            }
            guard operations.isEmpty else { return RejoinPlan(operations: operations, emptyBecause: nil) }
            let inAny = try db.bool("SELECT count(*) FROM members WHERE user_did = ? AND left_at IS NULL", [.text(user)])
            guard !inAny else { return RejoinPlan(operations: [], emptyBecause: .alreadyEverywhere) }
            // A revocation closes a device's memberships at its own time: that is how a closed
            // membership is told from one the user left.
            let closed = try db.rows("""
                SELECT r.batch_id, m.convo_id FROM revocations r
                JOIN members m ON m.user_did = r.user_did AND m.device_id = r.device_id AND m.left_at = r.revoked_at
                WHERE r.user_did = ? ORDER BY r.id, m.convo_id\(d.byteOrder)
                """, [.text(user)])
            guard !closed.isEmpty else { return RejoinPlan(operations: [], emptyBecause: .userInNoConversation) }
            var batches: [String] = [], conversations: [String] = []
            for row in closed {
                let batch = row.text("batch_id"), convo = row.text("convo_id")
                if !batches.contains(batch) { batches.append(batch) }
                if !conversations.contains(convo) { conversations.append(convo) }
            }
            return RejoinPlan(operations: [], emptyBecause: .closedByRevocation(batches: batches, conversations: conversations.sorted()))
        }
    }

    /// One device as `registry devices` lists it.
    public struct DeviceView: Sendable, Equatable {
        /// The user's id: Catbird's DID, Family Medical's `user_id`.
        public let userDid, deviceId: String
        /// Catbird's only.
        public let deviceMlsDid: String?
        public let deviceName: String?
        /// Family Medical's only ("iPad Air").
        public let deviceType: String?
        public let isActive: Bool
        /// When it registered (Family Medical's `first_seen_at`); nil when its row holds none,
        /// which both seeds' tables allow (shown as unknown, never as 1970).
        public let registeredAt: Timestamp?
        public let lastSeenAt: Timestamp?
        /// From the device's row, or (Family Medical's, which keeps none) the revocation log.
        public let revokedAt: Timestamp?
        public let revocationReason: String?
        /// Conversations the device is in now; Catbird's only.
        public let openMemberships: Int?
    }

    /// Which devices `devices(matching:)` lists; every set field must match.
    public struct DeviceFilter: Sendable {
        public enum State: Sendable { case any, active, revoked }
        public var user: String?
        public var state: State = .any
        /// Devices whose last sign of life (``DeviceRegistry/lastSignOfLife``) is before this.
        public var notSeenSince: Timestamp?
        /// A part of the device id (in any case) or name (as names are matched, in any case,
        /// spacing and width).
        public var search: String?

        public init(user: String? = nil, state: State = .any, notSeenSince: Timestamp? = nil, search: String? = nil) {
            self.user = user
            self.state = state
            self.notSeenSince = notSeenSince
            self.search = search
        }
    }

    /// The devices that match, by user and device id.
    public func devices(matching filter: DeviceFilter) throws -> [DeviceView] {
        let t = table
        var conditions: [String] = [], arguments: [RegistryValue] = []
        if let user = filter.user {
            guard let id = t.canonicalID(user) else { throw VaultError.notARegistryID("user", user, schema) }
            conditions.append("d.\(t.user) = \(t.id)")
            arguments.append(.text(id))
        }
        switch filter.state {
        case .any: break
        case .active: conditions.append("d.is_active")
        case .revoked: conditions.append("NOT d.is_active")
        }
        if let since = filter.notSeenSince { conditions.append(t.notSeenSince("d")); arguments.append(.time(Self.timeText(since))) }
        // Catbird's row has its conversations and its revocation; Family Medical's keeps its
        // type, and its revocation is the log's last row for it.
        // Times as the rules read them (``RegistryDialect/time(_:)``): shown as chosen.
        let columns = t.hasConversations ? """
            d.user_did, d.device_id, d.device_mls_did, d.device_name, NULL AS device_type, d.is_active, \(t.time("d", "registered_at")) AS registered_at,
            \(t.time("d", "last_seen")) AS last_seen, \(t.time("d", "revoked_at")) AS revoked_at, d.revocation_reason,
            (SELECT count(*) FROM members m WHERE m.user_did = d.user_did AND m.device_id = d.device_id AND m.left_at IS NULL) AS open
            """ : """
            d.user_id AS user_did, d.device_id, NULL AS device_mls_did, d.device_name, d.device_type, d.is_active,
            \(t.time("d", "first_seen_at")) AS registered_at, \(t.time("d", "last_seen_at")) AS last_seen,
            CASE WHEN d.is_active THEN NULL ELSE (SELECT r.revoked_at FROM revocations r WHERE \(t.isLogged("d", "r")) ORDER BY r.id DESC LIMIT 1) END AS revoked_at,
            CASE WHEN d.is_active THEN NULL ELSE (SELECT r.reason FROM revocations r WHERE \(t.isLogged("d", "r")) ORDER BY r.id DESC LIMIT 1) END AS revocation_reason,
            NULL AS open
            """
        let rows = try read { db in
            try db.rows("""
                SELECT \(columns) FROM user_devices d
                \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
                ORDER BY d.\(t.user)\(t.idOrder), d.device_id\(t.idOrder)
                """, arguments)
        }
        // The text match is Swift's, not the database's lower(), which may fold only ASCII
        // ("ÁNGELA"); a name is read as `--name` reads it (``VaultRevocation/folded(_:)``: a
        // trial found "Straße Mac" by `--name "STRASSE MAC"` and not by `--match strasse`).
        // Text that reads as nothing (a space, a soft hyphen) is part of no name.
        let idSearch = filter.search?.lowercased(), nameSearch = filter.search.map(VaultRevocation.folded)
        return rows.compactMap { row in
            let id = row.text("device_id"), name = row.optionalText("device_name")
            if let idSearch, let nameSearch, !id.lowercased().contains(idSearch),
               nameSearch.isEmpty || name.map({ VaultRevocation.folded($0).contains(nameSearch) }) != true { return nil }
            func time(_ column: String) -> Timestamp? { row.optionalText(column).flatMap(Timestamp.init(rfc3339:)) }
            return DeviceView(userDid: row.text("user_did"), deviceId: id, deviceMlsDid: row.optionalText("device_mls_did"), deviceName: name,
                              deviceType: row.optionalText("device_type"), isActive: row.bool("is_active"),
                              registeredAt: time("registered_at"), lastSeenAt: time("last_seen"), revokedAt: time("revoked_at"),
                              revocationReason: row.optionalText("revocation_reason"), openMemberships: row["open"] == .null ? nil : row.int("open"))
        }
    }

    /// The devices of `user` called `name`, as support hears it ("I don't recognize that
    /// iPad"): in any case and spacing, as the vault's names are matched
    /// (``VaultRevocation/folded(_:)``), so that names a listing shows alike are alike here (a
    /// trial: "kitchen ipad" took "Kitchen iPad", an exact match first, beside "kitchen ipad "
    /// with a trailing space, which a listing shows the same). One device, or devices all
    /// revoked already (so that the same revoke run again changes nothing), are the answer; a name that an
    /// active device shares with any other (a device set up again under the name of the one
    /// revoked, two iPads) is refused with each one's id, state and last sign of life, so the
    /// one meant is given by id. A name no device of the user has is refused with the names
    /// it has.
    public func devices(named name: String, user: String) throws -> [DeviceReference] {
        // A blank name matched the devices the app left blank (a trial: `--name "$UNSET"`
        // revoked one): it is no name.
        let spoken = VaultRevocation.folded(name)
        guard !spoken.isEmpty else { throw VaultError.deviceNameBlank(listing: "device-revoker registry devices --user USER") }
        let devices = try self.devices(matching: DeviceFilter(user: user))
        guard !devices.isEmpty else { throw VaultError.noDeviceNamed(name, user: user, names: [], registry: path) }
        let named = devices.filter { $0.deviceName.map(VaultRevocation.folded) == spoken }
        guard !named.isEmpty else {
            throw VaultError.noDeviceNamed(name, user: user, names: Set(devices.compactMap(\.deviceName)).sorted(), registry: path)
        }
        guard named.count == 1 || named.allSatisfy({ !$0.isActive }) else {
            throw VaultError.ambiguousRegistryDevice(name, named.map {
                "\($0.userDid)#\($0.deviceId) (\($0.isActive ? "active" : "revoked"), last seen \(($0.lastSeenAt ?? $0.registeredAt)?.rfc3339 ?? "never"))"
            })
        }
        return named.map { DeviceReference(user: $0.userDid, device: $0.deviceId) }
    }

    public struct LogEntry: Sendable, Equatable {
        public let batchID, revokedAt, userDid, deviceID, selector: String
        public let reason: String?
    }

    /// The `mls.remove` operations a batch stored, as JSON Lines, exactly as `revoke` gave them,
    /// handed to `write` a stored row (up to ``operationsPerRow`` lines) at a time: a batch's
    /// operations grow with the registry and are never all in memory. They are read
    /// ``operationRowsPerRead`` rows a transaction and written between transactions: a reader
    /// of a SQLite registry keeps the app from writing, and the output may be a slow pipe.
    /// (A batch's rows never change once written.)
    public func operations(batch: String, to write: (UnsafeRawBufferPointer) throws -> Void) throws {
        try require(conversations: "MLS operations")
        let d = dialect
        var next = 0
        while true {
            let rows = try read { db in
                if next == 0 {
                    guard try db.bool("SELECT count(*) FROM revocations WHERE batch_id = ?", [.text(batch)]) else {
                        throw VaultError.notInRegistry("batch \(QuotedInput(batch))", registry: path)
                    }
                    guard try db.bool(d.tableExists, [.text("batch_operations")]) else {
                        throw VaultError.operationsNotKept(batch: batch)
                    }
                    // The chained record of the batch holds its operations' digest: rows changed
                    // since, however well formed (a removal added by hand), are not written out
                    // (a re-trial), as `log --verify` finds them changed.
                    if try db.bool(d.tableExists, [.text("revocation_batches")]),
                       let recorded = try db.strings("SELECT operations_digest FROM revocation_batches WHERE batch_id = ?", [.text(batch)]).first,
                       try Self.operationsDigest(db: db, batchID: batch) != recorded {
                        throw VaultError.storedOperationsBroken(batch: batch, row: nil)
                    }
                }
                return try db.rows("SELECT seq, operation FROM batch_operations WHERE batch_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
                                   [.text(batch), .int(next), .int(Self.operationRowsPerRead)])
            }
            for row in rows {
                let stored = Array((row.text("operation") + "\n").utf8)
                try Self.checkStoredOperations(stored, batch: batch, row: row.int("seq"))
                try stored.withUnsafeBytes(write)
                next = row.int("seq") + 1
            }
            if rows.count < Self.operationRowsPerRead { return }
        }
    }

    /// A row of stored operations is what ``writeOperations`` wrote: JSON Lines of objects whose
    /// members are all strings, `op` among them. The database is an input like any other: a
    /// row changed by hand with a raw line break or escape in it forged a line of the tool's and
    /// wrote raw control bytes to the terminal (a hostile trial), and the app would have read
    /// operations the tool never made. Such a row is refused, and nothing of it written.
    private static func checkStoredOperations(_ stored: [UInt8], batch: String, row: Int) throws {
        for line in stored.split(separator: 0x0a) {
            guard let value = try? JSONValue(parsing: Array(line), what: "a stored operation"), case .object(let members) = value,
                  members.contains(where: { $0.key == "op" }), members.allSatisfy({ if case .string = $0.value { true } else { false } }) else {
                throw VaultError.storedOperationsBroken(batch: batch, row: row)
            }
        }
    }

    /// Rows of operations read in one transaction: 32 rows of 1,000 operations are about 3 MB.
    static let operationRowsPerRead = 32

    /// All of a batch's operations at once, for what knows the batch is small (tests).
    func operations(batch: String) throws -> [UInt8] {
        var all: [UInt8] = []
        try operations(batch: batch) { all.append(contentsOf: $0) }
        return all
    }

    public func log(batch: String?) throws -> [LogEntry] {
        let entries = try read { db in
            try db.rows("""
                SELECT batch_id, revoked_at, user_did, device_id, reason, selector FROM revocations
                \(batch == nil ? "" : "WHERE batch_id = ?") ORDER BY id
                """, batch.map { [.text($0)] } ?? []).map { row in
                LogEntry(batchID: row.text("batch_id"), revokedAt: row.text("revoked_at"), userDid: row.text("user_did"), deviceID: row.text("device_id"),
                         selector: row.text("selector"), reason: row.optionalText("reason"))
            }
        }
        if let batch, entries.isEmpty { throw VaultError.notInRegistry("batch \(QuotedInput(batch))", registry: path) }
        return entries
    }
}

extension VaultError.Code {
    /// A rejoin plan was asked for a revoked device.
    public static let revokedDeviceRejoins = VaultError.Code(name: "revokedDeviceRejoins", category: .refused)
    /// A batch's operations were asked for, and the registry did not keep them when it ran.
    public static let operationsNotKept = VaultError.Code(name: "operationsNotKept", category: .refused)
    /// A batch's stored operations are not what the tool wrote (changed by hand).
    public static let storedOperationsBroken = VaultError.Code(name: "storedOperationsBroken", category: .authentication)
}

extension VaultError {
    static func revokedDeviceRejoins(user: String, device: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.revokedDeviceRejoins, "device \(user)#\(device) is revoked; a revoked device rejoins nothing", file: file, line: line)
    }

    static func storedOperationsBroken(batch: String, row: Int?, file: String = #fileID, line: UInt = #line) -> VaultError {
        let what = row.map { "(row \($0)) are not what the tool wrote: not JSON Lines of operations" } ?? "were changed after the batch was recorded: their digest is not the one its chained record holds"
        return VaultError(.storedOperationsBroken, "the operations stored for batch \(QuotedInput(batch)) \(what); none was written to a file (on standard output, none from there on)",
                   hint: "'device-revoker registry log --verify' checks the registry's records; the batch's devices are listed by 'registry log --batch'", file: file, line: line)
    }

    static func operationsNotKept(batch: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.operationsNotKept, "batch '\(batch)' was made before the registry kept operations; they cannot be produced again", file: file, line: line)
    }
}
