import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// A server-side device registry: the Catbird seed's `user_devices` and `members` tables (seed
/// 003) plus revocation state and an append-only `revocations` log, in SQLite (the embedded
/// default) or PostgreSQL (where the chat app's registry lives, issue 13).
/// docs/device-registry.md states the schema and the rules.
///
/// Every rule is written here once, in SQL both engines accept, over ``RegistryEngine``; only
/// the engines' dialect and bulk loading differ. Times are RFC 3339 UTC text with whole seconds
/// (`2025-11-19T10:00:00Z`) on the way in and out: SQLite stores that text (so text order is
/// time order), PostgreSQL a `timestamptz`. Every revocation is one transaction that waits for
/// other revokers, so concurrent revokers never lose updates, and a killed run leaves the
/// database entirely before or entirely after its batch.
public final class DeviceRegistry: Sendable {
    public let location: RegistryLocation
    let engine: any RegistryEngine

    /// How messages name the registry.
    public var path: String { location.displayName }

    /// How a command uses the registry.
    public enum Access: Sendable {
        /// Make the registry when missing (`init`); an existing database must be a registry,
        /// empty, or (PostgreSQL) hold the app's own tables, which then gain what revocation needs.
        case create
        /// Change an existing registry; schema migrations run first.
        case readWrite
        /// Read only (views, the log, dry runs): nothing migrated or created.
        case readOnly
    }

    /// Opens a SQLite registry.
    public convenience init(path: String, access: Access) throws {
        try self.init(location: .sqlite(path: path), access: access)
    }

    /// Opens a registry. A database that is not one (another application's) is refused before
    /// anything is written to it. `schema` is for `.create`: the device table a new registry
    /// holds (Catbird's when nil), or the one an existing registry must hold (any when nil).
    public init(location: RegistryLocation, access: Access, schema: RegistrySchema? = nil) throws {
        self.location = location
        switch location {
        case .sqlite(let path): engine = try SQLiteRegistryEngine(path: path, access: access, schema: schema)
        case .postgres(let connection): engine = try PostgresRegistryEngine(connection: connection, access: access, schema: schema)
        }
        found = try Self.keepGuards(engine, access, registry: location.displayName)
    }

    /// What `init` put back or dropped (see ``RegistryGuard``), and what it found and left.
    let found: Found

    /// Which app's device table the registry holds.
    public var schema: RegistrySchema { engine.schema }

    /// How the rules' SQL reaches the device table.
    var table: DeviceTable { DeviceTable.of(engine.schema, engine.dialect) }

    /// Refuses what the registry's schema does not have: `what` names it ("conversations").
    func require(conversations what: String) throws {
        guard table.hasConversations else { throw VaultError.notInSchema(what, schema, registry: path) }
    }

    /// The registry's time text for a timestamp (whole seconds, UTC).
    public static func timeText(_ time: Timestamp) -> String {
        Timestamp(seconds: time.seconds).rfc3339
    }

    /// Runs `body` in one writing transaction (see ``RegistryEngine``); `commit` false rolls
    /// back (dry runs, refusals). A read-only registry's transaction can only read (and fill
    /// temporary tables).
    /// A writing transaction first holds the tables it changes and reads the catalog again, and
    /// refuses as opening did (``keepGuards(_:_:registry:)``): a trigger, rule or policy made
    /// after the registry was opened would otherwise rewrite the change unseen (a trial: a rule
    /// made meanwhile had an import report rows it never wrote).
    /// `logging` false for a writer that leaves the log alone (an import), which then holds
    /// only the app's tables: a role may import with no right to write the log.
    func transaction<T>(writing: Bool = true, logging: Bool = true, retrying: Bool = true, _ body: (RegistrySession) throws -> (T, commit: Bool)) throws -> T {
        guard writing else { return try engine.transaction(writing: false, retrying: retrying, body) }
        return try engine.transaction(writing: true, retrying: retrying) { session in
            try Self.holdWrittenTables(engine, session, logging: logging, registry: location.displayName)
            return try body(session)
        }
    }

    /// Runs `body` on one consistent view, changing nothing.
    func read<T>(_ body: (RegistrySession) throws -> T) throws -> T {
        try engine.transaction(writing: false, retrying: true) { (try body($0), false) }
    }

    var dialect: RegistryDialect { engine.dialect }
}

// MARK: - Import

extension DeviceRegistry {
    /// The two files `import` reads.
    public enum ImportKind: Sendable {
        /// Catbird's devices and memberships; Family Medical's devices (seed 002's columns).
        case devices, members, familyMedicalDevices

        /// The columns of a row, in the order ``forEachImportRow(_:in:now:_:)`` gives them.
        var columns: [String] {
            switch self {
            // The table's columns, then whether the row gave its last_seen_at (an update keeps
            // the registry's when it did not).
            case .familyMedicalDevices: ["device_id", "user_id", "device_name", "device_type", "first_seen_at", "last_seen_at", "is_active", "last_seen_given"]
            case .devices: ["user_did", "device_id", "device_mls_did", "device_name", "signature_public_key", "key_packages_available",
                            "last_seen", "registered_at", "is_active", "revoked_at", "revocation_reason"]
            case .members: ["convo_id", "member_mls_did", "user_did", "device_id", "joined_at", "left_at", "is_admin"]
            }
        }
    }

    /// An import file: its name for messages, and a way to read it a line at a time.
    public typealias LineSource = (name: String, forEachLine: ((Int, ArraySlice<UInt8>) throws -> Void) throws -> Void)

    /// Loads JSON Lines whose keys are the column names, devices first, in one transaction: a
    /// bad line names its file and line number, and nothing is imported. With `upsert`, a row
    /// already there is updated instead of refused: an active device's descriptive columns (MLS
    /// DID, name, signature key, key packages, last seen, which never moves back) and a
    /// membership's admin flag. A revoked device is left exactly as it is, and what a revocation
    /// wrote (is_active, revoked_at, revocation_reason, left_at) is never changed, so
    /// re-importing an old export cannot bring a revoked device back or erase its key.
    ///
    /// Rows stream into a temporary staging table (COPY on PostgreSQL), are checked there as a
    /// set, and reach the registry in one statement per table (issue 13).
    /// `beforeCommit` gets the counts inside the transaction, before it commits: a report that
    /// cannot be written (a closed pipe, a full disk) then rolls the import back, so the same
    /// import can run again instead of finding its rows already there.
    public func importRows(devices: LineSource?, members: LineSource?, now: Timestamp, upsert: Bool = false,
                           beforeCommit: ((devices: Int, members: Int)) throws -> Void = { _ in }) throws -> (devices: Int, members: Int) {
        if members != nil { try require(conversations: "memberships to import") }
        let deviceKind: ImportKind = table.hasConversations ? .devices : .familyMedicalDevices
        // Not retried: a file read once (standard input, a pipe) cannot be read again.
        return try transaction(logging: false, retrying: false) { session in
            var counts = (devices: 0, members: 0)
            var repeats = (devices: false, members: false)
            if let devices { (counts.devices, repeats.devices) = try stage(deviceKind, from: devices, now: now, into: session) }
            if let members { (counts.members, repeats.members) = try stage(.members, from: members, now: now, into: session) }
            if let devices, deviceKind == .familyMedicalDevices {
                try checkStagedFamilyMedicalDevices(devices.name, repeats: repeats.devices, upsert: upsert, in: session)
                try writeStagedFamilyMedicalDevices(upsert: upsert, in: session)
            } else if let devices {
                try checkStagedDevices(devices.name, repeats: repeats.devices, upsert: upsert, in: session)
                try writeStagedDevices(upsert: upsert, in: session)
            }
            if let members { try checkStagedMembers(members.name, repeats: repeats.members, upsert: upsert, in: session) }
            if members != nil { try writeStagedMembers(upsert: upsert, in: session) }
            try beforeCommit(counts)
            return (counts, true)
        }
    }

    /// The same, from files already in memory (tests, small imports).
    public func importRows(deviceLines devices: (name: String, bytes: [UInt8])?, memberLines members: (name: String, bytes: [UInt8])?,
                           now: Timestamp, upsert: Bool = false) throws -> (devices: Int, members: Int) {
        func source(_ file: (name: String, bytes: [UInt8])) -> LineSource {
            (file.name, { try LineReader.forEachLine(in: file.bytes, name: file.name, $0) })
        }
        return try importRows(devices: devices.map(source), members: members.map(source), now: now, upsert: upsert)
    }

    private static func stagingTable(_ kind: ImportKind) -> String { kind == .members ? "import_members" : "import_devices" }

    /// The columns that key a row of `kind`: a Family Medical device's id is its key, whoever its user.
    private static func key(_ kind: ImportKind) -> [String] {
        switch kind {
        case .devices: ["user_did", "device_id"]
        case .members: ["convo_id", "member_mls_did"]
        case .familyMedicalDevices: ["device_id"]
        }
    }

    /// Fills the staging table of `kind` with the file's rows, each with its line number;
    /// returns how many, and whether two of them have the same key (a device, a membership).
    private func stage(_ kind: ImportKind, from file: LineSource, now: Timestamp, into session: RegistrySession) throws -> (rows: Int, repeats: Bool) {
        let table = Self.stagingTable(kind), d = dialect
        let columns = switch kind {
        case .devices: """
            user_did TEXT NOT NULL, device_id TEXT NOT NULL, device_mls_did TEXT NOT NULL, device_name TEXT,
            signature_public_key \(d.blobType) NOT NULL, key_packages_available INTEGER NOT NULL, last_seen \(d.timeType),
            registered_at \(d.timeType) NOT NULL, is_active \(d.boolType) NOT NULL, revoked_at \(d.timeType), revocation_reason TEXT
            """
        case .members: """
            convo_id TEXT NOT NULL, member_mls_did TEXT NOT NULL, user_did TEXT NOT NULL, device_id TEXT NOT NULL,
            joined_at \(d.timeType) NOT NULL, left_at \(d.timeType), is_admin \(d.boolType) NOT NULL
            """
        case .familyMedicalDevices: """
            device_id \(d.uuidType) NOT NULL, user_id \(d.uuidType) NOT NULL, device_name TEXT NOT NULL, device_type TEXT,
            first_seen_at \(d.timeType) NOT NULL, last_seen_at \(d.timeType) NOT NULL, is_active \(d.boolType) NOT NULL,
            last_seen_given \(d.boolType) NOT NULL
            """
        }
        let key = Self.key(kind).joined(separator: ", ")
        // IF NOT EXISTS and DELETE rather than DROP: an unqualified DROP could reach a real
        // table of the same name. The key's index, from an earlier import on this connection,
        // is dropped by its temporary schema's name and built again after the load.
        try session.execute("""
            CREATE TEMP TABLE IF NOT EXISTS \(table) (line INTEGER PRIMARY KEY, \(columns))\(d.tableSuffix);
            DELETE FROM \(table);
            DROP INDEX IF EXISTS \(d.temporarySchema).\(table)_by_key;
            DROP INDEX IF EXISTS \(d.temporarySchema).\(table)_by_user_key;
            """)
        var count = 0
        try session.load(table, columns: ["line"] + kind.columns) { add in
            count = try Self.forEachImportLine(kind, in: file, now: now) { line, row in try add([.int(line)] + row) }
        }
        // A unique index finds a repeated key for free; only a file that has one pays for the
        // query that names its line (``repeatsAnEarlierLine(_:_:)``).
        let repeats = try !session.createUniqueIndex("CREATE UNIQUE INDEX \(table)_by_key ON \(table) (\(key))")
        if repeats { try session.execute("CREATE INDEX \(table)_by_key ON \(table) (\(key))") }
        // The file's own devices are checked for one signature key used twice by a user: an
        // index makes each line's look-up a probe, where a user with 20,000 new devices made
        // it a scan of them all, each.
        if kind == .devices { try session.execute("CREATE INDEX \(table)_by_user_key ON \(table) (user_did, signature_public_key, line)") }
        if d.analyzesTemporaryTables { try session.execute("ANALYZE \(table)") }
        return (count, repeats)
    }

    /// The first line of a staged file that breaks a rule, as the error it earns; nothing when
    /// every line is fine. Each check is one query; the earliest line wins, as a line-by-line
    /// import would have found it. The earliest is asked for with min(), not ORDER BY … LIMIT 1:
    /// hoping a limit would stop early, PostgreSQL's planner walks the staging table by line and
    /// probes the registry once a row, which is the whole cost when, as almost always, no line
    /// breaks the rule; min() lets it join the tables whole. One statement, so one snapshot
    /// finds the line and reads it.
    private func firstProblem(_ file: String, in session: RegistrySession, _ checks: [StagingCheck]) throws {
        var earliest: (line: Int, error: VaultError)?
        for check in checks {
            guard let row = try session.rows("""
                SELECT * FROM (\(check.sql)) problem WHERE line = (SELECT min(line) FROM (\(check.sql)) problems)
                """, []).first else { continue }
            let line = row.int("line")
            if earliest.map({ line < $0.line }) ?? true { earliest = (line, check.error(row)) }
        }
        guard let (line, error) = earliest else { return }
        throw error.withContext(prefix: "\(file) line \(line): ", hint: error.code == .alreadyImported ? nil : "nothing was imported")
    }

    /// A query for the lines of a staged file that break a rule, and the error a line earns.
    /// The query is used as a subquery, and names the line's number `line`.
    private typealias StagingCheck = (sql: String, error: (RegistryRow) -> VaultError)

    /// The lines whose key (a device, a membership) an earlier line of the same file has.
    private static func repeatsAnEarlierLine(_ kind: ImportKind, _ what: String) -> StagingCheck {
        let table = stagingTable(kind)
        let sameKey = key(kind).map { "t.\($0) = s.\($0)" }
        return ("SELECT s.line FROM \(table) s WHERE EXISTS (SELECT 1 FROM \(table) t WHERE \(sameKey.joined(separator: " AND ")) AND t.line < s.line)",
                { _ in .sameAsAnEarlierLine(what) })
    }

    private func checkStagedDevices(_ file: String, repeats: Bool, upsert: Bool, in session: RegistrySession) throws {
        var checks: [StagingCheck] = repeats ? [Self.repeatsAnEarlierLine(.devices, "device")] : []
        // Two checks with one message, not one with OR: each EXISTS can then become a join.
        let sameKey: (RegistryRow) -> VaultError = { _ in .signatureKeyOfAnotherDevice() }
        checks += [
            ("""
             SELECT s.line FROM import_devices s WHERE EXISTS (SELECT 1 FROM user_devices d\(dialect.bySignatureKey)
                 WHERE d.signature_public_key = s.signature_public_key AND d.user_did = s.user_did AND d.device_id <> s.device_id)
             """, sameKey),
            ("""
             SELECT s.line FROM import_devices s
             WHERE EXISTS (SELECT 1 FROM import_devices t WHERE t.user_did = s.user_did AND t.signature_public_key = s.signature_public_key AND t.line < s.line)
             """, sameKey),
        ]
        if upsert {
            // As Family Medical's: only a revoke revokes; the update below leaves is_active alone,
            // so a row saying an active device is inactive was dropped without a word.
            checks.append(("""
                SELECT s.line FROM import_devices s JOIN user_devices d ON d.user_did = s.user_did AND d.device_id = s.device_id
                WHERE d.is_active AND NOT s.is_active
                """, { _ in .importWouldRevoke() }))
        } else {
            checks.append(("SELECT s.line FROM import_devices s JOIN user_devices d ON d.user_did = s.user_did AND d.device_id = s.device_id",
                           { _ in .alreadyImported() }))
        }
        try firstProblem(file, in: session, checks)
    }

    private func checkStagedMembers(_ file: String, repeats: Bool, upsert: Bool, in session: RegistrySession) throws {
        var checks: [StagingCheck] = repeats ? [Self.repeatsAnEarlierLine(.members, "membership")] : []
        // A membership's device must be in the registry and, for a new open membership, active:
        // the registry's own rule (a trigger). Both in one join of the file with the devices.
        checks.append(("""
             SELECT s.line, s.user_did, s.device_id, d.is_active FROM import_members s
             LEFT JOIN user_devices d ON d.user_did = s.user_did AND d.device_id = s.device_id
             WHERE d.user_did IS NULL OR (s.left_at IS NULL AND NOT d.is_active
                 AND NOT EXISTS (SELECT 1 FROM members m WHERE m.convo_id = s.convo_id AND m.member_mls_did = s.member_mls_did))
             """, { row in
                 let device = "\(row.text("user_did"))#\(row.text("device_id"))"
                 return row["is_active"] == .null ? .importedDeviceNotInRegistry(device) : .revokedDeviceJoins(device)
             }))
        if !upsert {
            checks.append(("""
                SELECT s.line FROM import_members s JOIN members m ON m.convo_id = s.convo_id AND m.member_mls_did = s.member_mls_did
                """, { _ in .alreadyImported() }))
        }
        try firstProblem(file, in: session, checks)
    }

    private func writeStagedDevices(upsert: Bool, in session: RegistrySession) throws {
        let columns = ImportKind.devices.columns.joined(separator: ", ")
        if upsert {
            // Only an active device changes, and last_seen never moves back.
            try session.execute("""
                UPDATE user_devices SET device_mls_did = s.device_mls_did, device_name = coalesce(s.device_name, user_devices.device_name),
                    signature_public_key = s.signature_public_key, key_packages_available = s.key_packages_available,
                    last_seen = CASE WHEN s.last_seen IS NOT NULL AND (\(table.time("user_devices", "last_seen")) IS NULL
                                     OR s.last_seen > \(table.time("user_devices", "last_seen")))
                                THEN s.last_seen ELSE user_devices.last_seen END
                FROM import_devices s
                WHERE user_devices.user_did = s.user_did AND user_devices.device_id = s.device_id AND user_devices.is_active
                """)
        }
        try insertStagedDevices(columns, sameDevice: "d.user_did = s.user_did AND d.device_id = s.device_id", upsert: upsert, in: session)
    }

    /// Inserts the staged devices in the file's order; with `upsert`, only those the registry
    /// lacks (a device the app registered meanwhile is the app's: left as it is).
    private func insertStagedDevices(_ columns: String, sameDevice: String, upsert: Bool, in session: RegistrySession) throws {
        try session.execute("""
            INSERT INTO user_devices (\(columns)) SELECT \(columns) FROM import_devices s
            \(upsert ? "WHERE NOT EXISTS (SELECT 1 FROM user_devices d WHERE \(sameDevice))" : "")
            ORDER BY s.line\(upsert ? " ON CONFLICT DO NOTHING" : "")
            """)
    }

    /// A Family Medical device's id is its key: a line repeating one, or naming one the
    /// registry has (under any user without `upsert`, under another user with it), is refused.
    private func checkStagedFamilyMedicalDevices(_ file: String, repeats: Bool, upsert: Bool, in session: RegistrySession) throws {
        var checks: [StagingCheck] = repeats ? [Self.repeatsAnEarlierLine(.familyMedicalDevices, "device")] : []
        if upsert {
            checks.append(("SELECT s.line FROM import_devices s JOIN user_devices d ON d.device_id = s.device_id AND d.user_id <> s.user_id",
                           { _ in .deviceOfAnotherUser() }))
            // Only a revoke revokes (with its guard rails and its log): a row saying an active
            // device is inactive would otherwise be dropped without a word.
            checks.append(("SELECT s.line FROM import_devices s JOIN user_devices d ON d.device_id = s.device_id WHERE d.is_active AND NOT s.is_active",
                           { _ in .importWouldRevoke() }))
        } else {
            checks.append(("SELECT s.line FROM import_devices s JOIN user_devices d ON d.device_id = s.device_id", { _ in .alreadyImported() }))
        }
        try firstProblem(file, in: session, checks)
    }

    /// As Catbird's: with `upsert`, an active device's name, type and last seen (which never
    /// moves back) change; a revoked one stays exactly as it is.
    private func writeStagedFamilyMedicalDevices(upsert: Bool, in session: RegistrySession) throws {
        let columns = ImportKind.familyMedicalDevices.columns.dropLast().joined(separator: ", ")
        if upsert {
            try session.execute("""
                UPDATE user_devices SET device_name = s.device_name, device_type = coalesce(s.device_type, user_devices.device_type),
                    last_seen_at = CASE WHEN s.last_seen_given AND (s.last_seen_at > \(table.time("user_devices", "last_seen_at"))
                                                                        OR \(table.time("user_devices", "last_seen_at")) IS NULL) THEN s.last_seen_at
                                   ELSE user_devices.last_seen_at END
                FROM import_devices s
                WHERE user_devices.device_id = s.device_id AND user_devices.user_id = s.user_id AND user_devices.is_active
                """)
        }
        try insertStagedDevices(columns, sameDevice: "d.device_id = s.device_id", upsert: upsert, in: session)
    }

    private func writeStagedMembers(upsert: Bool, in session: RegistrySession) throws {
        let columns = ImportKind.members.columns.joined(separator: ", ")
        if upsert {
            try session.execute("""
                UPDATE members SET is_admin = s.is_admin FROM import_members s
                WHERE members.convo_id = s.convo_id AND members.member_mls_did = s.member_mls_did
                """)
        }
        try session.execute("""
            INSERT INTO members (\(columns)) SELECT \(columns) FROM import_members s
            \(upsert ? "WHERE NOT EXISTS (SELECT 1 FROM members m WHERE m.convo_id = s.convo_id AND m.member_mls_did = s.member_mls_did)" : "")
            ORDER BY s.line\(upsert ? " ON CONFLICT DO NOTHING" : "")
            """)
    }

    /// Parses an import file a line at a time, in the column order of ``ImportKind/columns``,
    /// and hands each row to `body`. Blank lines are skipped; it returns the number of rows.
    /// Separate from the database so the parser can be fuzzed and tested on its own.
    public static func forEachImportRow(_ kind: ImportKind, in file: (name: String, bytes: [UInt8]), now: Timestamp,
                                        _ body: ([RegistryValue]) throws -> Void) throws -> Int {
        try forEachImportLine(kind, in: (file.name, { try LineReader.forEachLine(in: file.bytes, name: file.name, $0) }), now: now) { try body($1) }
    }

    /// The same, with each row's line number.
    static func forEachImportLine(_ kind: ImportKind, in file: LineSource, now: Timestamp,
                                  _ body: (Int, [RegistryValue]) throws -> Void) throws -> Int {
        var count = 0
        try file.forEachLine { number, line in
            do {
                guard var reader = try JSONObjectReader(line: line) else { return }
                let row = switch kind {
                case .devices: try deviceRow(&reader, now: now)
                case .members: try memberRow(&reader, now: now)
                case .familyMedicalDevices: try familyMedicalDeviceRow(&reader, now: now)
                }
                try reader.finish()
                try body(number, row)
            } catch let error as VaultError {
                throw error.withContext(prefix: "\(file.name) line \(number): ", hint: "nothing was imported")
            }
            count += 1
        }
        return count
    }

    /// How far an imported time may be after the import's own: an export taken on a server
    /// whose clock runs a little ahead is fine; a time days ahead was never seen, and a
    /// `last_seen` in the future would keep a device out of every `--not-seen-since` for good.
    static let clockSkewAllowed: Int64 = 86_400

    private static func deviceRow(_ reader: inout JSONObjectReader, now: Timestamp) throws -> [RegistryValue] {
        let key = try reader.string("signature_public_key")
        guard let keyBytes = Hex.decode(key), !keyBytes.isEmpty else { throw reader.invalid("signature_public_key", "should be hex") }
        let user = try reader.id("user_did", as: .user), device = try reader.id("device_id", as: .device)
        let mlsDid = try reader.text("device_mls_did"), name = try reader.optionalText("device_name")
        // The server writes it as `format!("{}#{}", user_did, device_id)` (seed 003,
        // registerDevice): any other is a row from elsewhere, and an operation naming it would
        // add or remove a member that is not this device.
        guard isMLSDid(mlsDid, of: user, device) else { throw reader.invalid("device_mls_did", "should be \(user)#\(device), its user_did and device_id") }
        if let name, DisplayRule.imitatesEscape(name) { throw reader.invalid("device_name", DisplayRule.imitatesEscapeReason) }
        let keyPackages = try reader.optionalInt("key_packages_available") ?? 0
        // The seed's column is a PostgreSQL INT: what it cannot hold is refused here, by line.
        guard (0...Int(Int32.max)).contains(keyPackages) else {
            throw reader.invalid("key_packages_available", keyPackages < 0 ? "is negative" : "is larger than \(Int32.max)")
        }
        let latest = Timestamp(seconds: now.seconds + clockSkewAllowed)
        let lastSeen = try reader.pastTime("last_seen", latest: latest)
        let givenRegistered = try reader.pastTime("registered_at", latest: latest)
        let isActive = try reader.optionalBool("is_active") ?? true
        let revokedAt = try reader.pastTime("revoked_at", latest: latest), reason = try reader.optionalText("revocation_reason")
        // A missing registration stands at the import's time, or at the row's earliest time
        // before it: a row revoked or seen before now registered then at the latest (the import's
        // time after its revocation was a row this import itself refuses: a re-trial).
        let registered = givenRegistered ?? ([lastSeen, revokedAt].compactMap { $0 } + [timeText(now)]).min()!
        // An active device with revocation state would be reported revoked by one view and
        // revoked again by the next batch.
        if isActive, revokedAt != nil { throw reader.invalid("revoked_at", "is set on an active device (is_active is true)") }
        if isActive, reason != nil { throw reader.invalid("revocation_reason", "is set on an active device (is_active is true)") }
        // Only against a registered_at the row gives: the import's time stands in for a missing one.
        if let lastSeen, let givenRegistered, lastSeen < givenRegistered { throw reader.invalid("last_seen", "is before registered_at") }
        if let revokedAt, let givenRegistered, revokedAt < givenRegistered { throw reader.invalid("revoked_at", "is before registered_at") }
        return [
            .text(user), .text(device), .text(mlsDid), RegistryValue(name), .bytes(keyBytes), .int(keyPackages),
            RegistryValue(time: lastSeen), .time(registered), .bool(isActive), RegistryValue(time: revokedAt), RegistryValue(reason),
        ]
    }

    /// Seed 002's row: UUIDs (kept in lower case), a name, a type, when first and last seen
    /// (the app's defaults, now, where missing), and whether active.
    private static func familyMedicalDeviceRow(_ reader: inout JSONObjectReader, now: Timestamp) throws -> [RegistryValue] {
        func uuid(_ key: String) throws -> String {
            guard let id = DeviceTable.canonicalUUID(try reader.string(key)) else {
                throw reader.invalid(key, "should be a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")
            }
            return id
        }
        let device = try uuid("device_id"), user = try uuid("user_id")
        let name = try reader.text("device_name"), type = try reader.optionalText("device_type")
        // What a parent reads in Settings > Devices: a name of only white space, or of characters
        // that show as nothing (a trial: a soft hyphen alone was imported, and no `--name` could
        // then pick the device), names nothing, as the names typed to pick one are read.
        guard !VaultRevocation.folded(name).isEmpty, name.unicodeScalars.contains(where: { !DisplayRule.escapes($0) && !$0.properties.isWhitespace }) else { throw reader.invalid("device_name", "is empty or only spaces and invisible characters") }
        guard !DisplayRule.imitatesEscape(name) else { throw reader.invalid("device_name", DisplayRule.imitatesEscapeReason) }
        let latest = Timestamp(seconds: now.seconds + clockSkewAllowed)
        let givenFirst = try reader.pastTime("first_seen_at", latest: latest), givenLast = try reader.pastTime("last_seen_at", latest: latest)
        if let givenFirst, let givenLast, givenLast < givenFirst { throw reader.invalid("last_seen_at", "is before first_seen_at") }
        // As the app's defaults: a device seen first when it was last seen, or now; last when first.
        let now = timeText(now)
        let firstSeen = givenFirst ?? givenLast.map { min($0, now) } ?? now, lastSeen = givenLast ?? firstSeen
        return [.text(device), .text(user), .text(name), RegistryValue(type), .time(firstSeen), .time(lastSeen),
                .bool(try reader.optionalBool("is_active") ?? true), .bool(givenLast != nil)]
    }

    /// Whether `did` is the MLS DID the server gives a user's device, `USER_DID#DEVICE_ID`,
    /// byte for byte: the operations name it as stored, and a canonically equivalent spelling
    /// (é composed or not) is another member to the app.
    private static func isMLSDid(_ did: String, of user: String, _ device: String) -> Bool {
        did.utf8.elementsEqual(user.utf8 + [UInt8(ascii: "#")] + device.utf8)
    }

    private static func memberRow(_ reader: inout JSONObjectReader, now: Timestamp) throws -> [RegistryValue] {
        let convo = try reader.id("convo_id", as: .conversation), member = try reader.id("member_mls_did", as: .member)
        let user = try reader.id("user_did", as: .user), device = try reader.id("device_id", as: .device)
        // The server adds a member by its device's MLS DID (seed 003, autoRejoin): a membership
        // naming another device would have that device removed when this one is revoked.
        guard isMLSDid(member, of: user, device) else { throw reader.invalid("member_mls_did", "should be \(user)#\(device), the MLS DID of its user_did and device_id") }
        let latest = Timestamp(seconds: now.seconds + clockSkewAllowed)
        let joined = try reader.pastTime("joined_at", latest: latest), left = try reader.pastTime("left_at", latest: latest)
        if let left, let joined, left < joined { throw reader.invalid("left_at", "is before joined_at") }
        return [.text(convo), .text(member), .text(user), .text(device), .time(joined ?? timeText(now)), RegistryValue(time: left),
                .bool(try reader.optionalBool("is_admin") ?? false)]
    }
}

extension JSONObjectReader {
    /// A string column: NUL is refused, because C strings (and some SQL drivers) stop there and
    /// two different ids would become one.
    mutating func text(_ key: String) throws -> String {
        let value = try string(key)
        guard !value.utf8.contains(0) else { throw invalid(key, "contains a NUL character") }
        return value
    }

    mutating func optionalText(_ key: String) throws -> String? {
        guard let value = try optionalString(key) else { return nil }
        guard !value.utf8.contains(0) else { throw invalid(key, "contains a NUL character") }
        return value
    }

    /// A user DID, device id or conversation id the selectors can address (``DeviceRegistry/idProblem(_:as:)``).
    mutating func id(_ key: String, as kind: DeviceRegistry.IdKind) throws -> String {
        let value = try string(key)
        if let problem = DeviceRegistry.idProblem(value, as: kind) { throw invalid(key, problem) }
        return value
    }

    /// An optional time, as the registry's text (whose order is time order), no later than `latest`.
    mutating func pastTime(_ key: String, latest: Timestamp) throws -> String? {
        guard try optionalString(key) != nil else { return nil }
        let time = try timestamp(key)
        guard time.seconds <= latest.seconds else { throw invalid(key, "is in the future (\(DeviceRegistry.timeText(time)))") }
        return DeviceRegistry.timeText(time)
    }

    mutating func optionalBool(_ key: String) throws -> Bool? {
        guard let value = optional(key) else { return nil }
        guard case .bool(let flag) = value else { throw invalid(key, "should be true or false") }
        return flag
    }
}

extension VaultError.Code {
    /// An imported membership would put a revoked device back in a conversation: the registry's
    /// own rule (a trigger), refused before any row is written.
    public static let revokedDeviceJoins = VaultError.Code(name: "revokedDeviceJoins", category: .refused)
}

extension VaultError {
    /// An import line whose key (a device, a membership: `what`) an earlier line of the same file has.
    static func sameAsAnEarlierLine(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "an earlier line has the same \(what)", file: file, line: line)
    }

    /// An import row that would make an active device inactive: only a revoke revokes.
    static func importWouldRevoke(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "is_active is false for a device the registry has active: an import never revokes; revoke it with 'device-revoker registry revoke'",
                   file: file, line: line)
    }

    /// An imported Family Medical device whose id the registry has under another user.
    static func deviceOfAnotherUser(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "the registry has this device id under another user", file: file, line: line)
    }

    /// An imported device whose user already has another device with its signature key.
    static func signatureKeyOfAnotherDevice(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "this user already has another device with the same signature key", file: file, line: line)
    }

    /// An imported membership of a device (`user#device`) the registry does not have.
    static func importedDeviceNotInRegistry(_ device: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notInRegistry, "the registry has no device \(QuotedInput(device))", file: file, line: line)
    }

    /// An imported open membership of a revoked device (`user#device`).
    static func revokedDeviceJoins(_ device: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.revokedDeviceJoins, "device \(device) is revoked; it cannot join a conversation", file: file, line: line)
    }
}
