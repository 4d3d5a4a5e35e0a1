import FoundationEssentials
import Glibc
import VaultCore

extension DeviceRegistry {
    /// Which devices a revocation takes.
    public enum Selector: Sendable {
        /// `(user_did, device_id)` pairs.
        case devices([(user: String, device: String)])
        /// Devices as a list file gives them, read while the selection is made: a list as
        /// long as the registry is never held whole.
        case deviceList(any DeviceList)
        case user(String)
        /// Devices whose last sign of life (``DeviceRegistry/lastSignOfLife``) is before the time.
        case notSeenSince(Timestamp)
        case signatureKeys([[UInt8]])

        /// Whether it lists devices one by one (read into the database before the revocation).
        var isList: Bool {
            switch self {
            case .devices, .deviceList: true
            case .user, .notSeenSince, .signatureKeys: false
            }
        }

        /// How the log records it.
        public var description: String {
            switch self {
            case .devices(let pairs): "devices (\(pairs.count) listed)"
            case .deviceList: "devices (a list)"
            case .user(let did): "user \(did)"
            case .notSeenSince(let time): "not seen since \(DeviceRegistry.timeText(time))"
            case .signatureKeys(let keys): "signature keys (\(keys.count) listed)"
            }
        }
    }

    /// Devices listed one by one, as a file lists them (``Selector/deviceList(_:)``).
    public protocol DeviceList: Sendable {
        /// Hands `entry` each listed device with its place in the list (1-based: a line number,
        /// or an option's position); an error thrown stops the revocation before any change.
        func forEach(_ entry: (_ item: Int, _ user: String, _ device: String) throws -> Void) throws
    }

    /// Why a "not seen since" cutoff cannot be meant, or nil: one after `now` selects every
    /// device, even one seen a second ago (`2205-01-01` for `2025-01-01` once revoked half a
    /// registry).
    public static func cutoffProblem(_ cutoff: Timestamp, now: Timestamp) -> String? {
        cutoff.seconds > now.seconds ? "is in the future (now is \(timeText(now))): every device would count as not seen since" : nil
    }

    /// The two ids a registry device is addressed by.
    public enum IdKind: Sendable {
        /// A conversation's id (`convo_id`) or a member's MLS DID: addressed by `members
        /// --convo`, and named in every operation and plan, so held to the same rule (a hostile
        /// trial imported them holding ESC, U+2028 and U+202E).
        case user, device, conversation, member
    }

    /// Why `id` cannot be a registry user DID or device id, or nil when it can: the one rule
    /// for what the selectors can address, which `import` enforces on every row so that no
    /// device is stored under an id `USER_DID#DEVICE_ID` (``deviceReference(_:)``) or a list
    /// file (``ListFile``) would read as another. A list line is trimmed and a line starting
    /// with `#` is a comment, so an id must not be empty, start or end with white space, or
    /// (a user's) start with `#`; the reference is split at its last `#`, so a device id has
    /// none (a DID may: `did:web:x#frag`); a control character would break the line or drive
    /// the terminal that shows the id.
    public static func idProblem(_ id: String, as kind: IdKind) -> String? {
        // The usual id, printable ASCII with no space at either end, is checked byte by byte:
        // the general path below was a tenth of revoking from a list of 100,000 devices.
        let bytes = id.utf8
        if let first = bytes.first, let last = bytes.last, first != 0x20, last != 0x20, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            if kind == .device, bytes.contains(UInt8(ascii: "#")) { return "contains '#', which separates the user from the device in USER_DID#DEVICE_ID" }
            return first == UInt8(ascii: "#") ? "starts with '#', which starts a comment in a list file" : nil
        }
        if id.isEmpty { return "is empty" }
        // ASCII's controls are C0 and DEL; Unicode's properties only past ASCII (they were a
        // tenth of reading a large --devices-file).
        if id.unicodeScalars.contains(where: { $0.isASCII ? $0.value < 0x20 || $0.value == 0x7F : $0.properties.generalCategory == .control }) {
            return "contains a control character"
        }
        // Line and paragraph separators and invisible format characters (bidirectional
        // controls, zero-width ones, the byte order mark): an id shown must read as what it is.
        if id.unicodeScalars.contains(where: { !$0.isASCII && [.lineSeparator, .paragraphSeparator, .format].contains($0.properties.generalCategory) }) {
            return "contains an invisible or line-breaking character"
        }
        if kind == .device, id.contains("#") { return "contains '#', which separates the user from the device in USER_DID#DEVICE_ID" }
        let listed = ListFile.entry(Array(id.utf8)[...])
        if listed == nil, id.hasPrefix("#") { return "starts with '#', which starts a comment in a list file" }
        if listed != id { return listed == nil ? "is only white space" : "starts or ends with white space" }
        return nil
    }

    /// A registry device as people write it, `USER_DID#DEVICE_ID`, split at its last `#`; nil
    /// when either side is not an id the registry can hold (``idProblem(_:as:)``).
    public static func deviceReference(_ text: String) -> (user: String, device: String)? {
        referenceParts(text).flatMap { idProblem($0.user, as: .user) == nil && idProblem($0.device, as: .device) == nil ? $0 : nil }
    }

    /// Why `text` is not a device reference (``deviceReference(_:)``), or nil when it is.
    public static func deviceReferenceProblem(_ text: String) -> String? {
        guard let (user, device) = referenceParts(text) else { return "there is no '#' between the user and the device" }
        if let problem = idProblem(user, as: .user) { return "the user DID \(problem)" }
        if let problem = idProblem(device, as: .device) { return "the device id \(problem)" }
        return nil
    }

    private static func referenceParts(_ text: String) -> (user: String, device: String)? {
        // In ASCII a byte is a character: the last '#' is found among the bytes. Elsewhere a '#'
        // followed by a combining mark is another character, as it always was.
        let ascii = text.utf8.allSatisfy { $0 < 0x80 }
        guard let hash = ascii ? text.utf8.lastIndex(of: UInt8(ascii: "#")) : text.lastIndex(of: "#") else { return nil }
        return (String(text[..<hash]), String(text[text.index(after: hash)...]))
    }

    /// A share of the registry's active devices, in hundredths of a percent (basis points):
    /// exact, so a batch at the threshold is never refused by a rounding error.
    public struct Share: Sendable, Hashable, Comparable {
        public let basisPoints: Int
        public init(basisPoints: Int) { self.basisPoints = basisPoints }

        /// A batch may revoke at most this share of the active devices unless told otherwise.
        public static let defaultLimit = Share(basisPoints: 1000)

        /// `part` of `whole`, rounded up, so a share just over a limit never reads as the limit.
        public init(_ part: Int, of whole: Int) {
            basisPoints = whole == 0 ? 10000 : (part * 10000 + whole - 1) / whole
        }

        /// Whether `part` of `whole` is more than this share (exactly, not rounded).
        public func isExceeded(by part: Int, of whole: Int) -> Bool { part * 10000 > basisPoints * whole }

        /// As people write it: `10%`, `2.5%`, `0.01%`.
        public var text: String {
            let whole = basisPoints / 100, fraction = basisPoints % 100
            return fraction == 0 ? "\(whole)%" : fraction % 10 == 0 ? "\(whole).\(fraction / 10)%" : "\(whole).\(fraction < 10 ? "0" : "")\(fraction)%"
        }

        /// A percentage as written on a command line (`10`, `2.5`, `0.01`, at most two decimals,
        /// 0 to 100); nil otherwise.
        public init?(percent text: String) {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
                  parts[0].count <= 3, parts.count == 1 || parts[1].count <= 2, let whole = Int(parts[0]) else { return nil }
            let fraction = parts.count == 2 ? Int(parts[1] + String(repeating: "0", count: 2 - parts[1].count)) ?? 0 : 0
            let points = whole * 100 + fraction
            guard points <= 10000 else { return nil }
            basisPoints = points
        }

        public static func < (lhs: Share, rhs: Share) -> Bool { lhs.basisPoints < rhs.basisPoints }
    }

    /// How large a batch may be: at most `limit` of the registry's active devices, unless the
    /// run names the exact count it expects (`expected`), or overrides the guard rails.
    public struct SizeLimit: Sendable {
        public var limit: Share
        /// The number of devices the person running it expects to revoke; any other count is
        /// refused, whatever the share and whatever else is overridden.
        public var expected: Int?
        public init(limit: Share = .defaultLimit, expected: Int? = nil) {
            self.limit = limit
            self.expected = expected
        }
    }

    /// What a revocation touches, and what it would leave broken.
    public struct BlastRadius: Sendable, Equatable {
        public var devices = 0
        public var users = 0
        public var conversations = 0
        public var memberships = 0
        /// Users whose every active device is in the batch (DIDs, sorted).
        public var usersLeftWithoutDevice: [String] = []
        /// Conversations that have an active admin device now and would have none after (ids, sorted).
        public var conversationsLeftWithoutAdmin: [String] = []
        /// Selected devices that are already revoked (nothing to do for them).
        public var alreadyRevoked = 0
        /// Listed devices or keys the registry does not have.
        public var notFound = 0
        /// Selected devices kept because each is its user's last active device.
        public var sparedLastDevices = 0
        /// When nothing is left to revoke and selected devices were revoked before: the latest
        /// batches that revoked them (up to three, the last first), whose stored operations a
        /// run cut off before writing its `--ops` file can still write (Catbird's registry).
        public var revokedEarlierBy: [String] = []
        /// What the list named that the registry does not have, in the list's order.
        public var unmatched: [Unmatched] = []
        /// The registry's active devices before the batch (measured only when the batch has
        /// devices): what the batch's share is of.
        public var activeDevices = 0
        // The batch's devices are not held here: as many as the registry is large, they are
        // read a piece at a time by ``DeviceRegistry/forEachBatchDevice(of:_:)``.
    }

    /// One registry device, by its two ids.
    public struct DeviceReference: Sendable, Equatable {
        public let user: String
        public let device: String
        public init(user: String, device: String) {
            self.user = user
            self.device = device
        }

        /// `USER_DID#DEVICE_ID`, as the selectors read it.
        public var text: String { "\(user)#\(device)" }
    }

    /// A listed device, key or user the registry does not have: a mistyped stolen device must
    /// never be skipped unnoticed.
    public struct Unmatched: Sendable, Equatable {
        /// The entry's place in the list given (1-based); the tool turns it into a line number.
        public let item: Int
        /// The entry as the registry compares it: `USER_DID#DEVICE_ID`, a key's hex, a DID; quoted
        /// only through ``QuotedInput``, which withholds one that reads as a secret (a parent or
        /// vault key given as the list).
        public let entry: QuotedInput
        /// For a device: whether its user is registered at all.
        public let userKnown: Bool
        /// For a device whose user is registered: that user's devices closest to the one typed
        /// (ids, closest first, at most three), so a typo can be corrected.
        public let closest: [String]
    }

    /// The guard rails and checks a run may be told to go past, each with its own option.
    public struct Overrides: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let usersWithoutDevice = Overrides(rawValue: 1)
        public static let conversationsWithoutAdmin = Overrides(rawValue: 2)
        /// Listed entries the registry does not have.
        public static let unmatched = Overrides(rawValue: 4)
        /// A batch larger than its ``SizeLimit``'s share.
        public static let largeBatch = Overrides(rawValue: 8)
        /// Every guard rail (`--force`).
        public static let guardRails: Overrides = [.usersWithoutDevice, .conversationsWithoutAdmin, .largeBatch]
        public static let all: Overrides = [.guardRails, .unmatched]
    }

    /// A guard rail a registry revocation trips, with how much it would break. The tools name
    /// the option that overrides it.
    public enum Refusal: Hashable, Sendable {
        /// These users (DIDs) would have no active device left.
        case wouldLeaveUsersWithoutDevice([String])
        /// These conversations would have no active admin device left.
        case wouldLeaveConversationsWithoutAdmin([String])
        /// These listed entries are not in the registry.
        case unmatched([QuotedInput])
        /// The batch would revoke `devices` of the registry's `active` devices, more than `limit`.
        case tooLarge(devices: Int, active: Int, limit: Share)
        /// The run expected to revoke `expected` devices, and the batch has `devices`.
        case unexpectedCount(expected: Int, devices: Int)

        /// The case's name, for JSON: scripts match on it, not on the wording.
        public var kind: String {
            switch self {
            case .wouldLeaveUsersWithoutDevice: "wouldLeaveUsersWithoutDevice"
            case .wouldLeaveConversationsWithoutAdmin: "wouldLeaveConversationsWithoutAdmin"
            case .unmatched: "unmatched"
            case .tooLarge: "tooLarge"
            case .unexpectedCount: "unexpectedCount"
            }
        }

        /// The ids the guard rail is about.
        public var ids: [String] {
            switch self {
            case .wouldLeaveUsersWithoutDevice(let ids), .wouldLeaveConversationsWithoutAdmin(let ids): ids
            case .unmatched(let entries): entries.map(\.reported)
            case .tooLarge, .unexpectedCount: []
            }
        }

        public var reason: String {
            switch self {
            case .wouldLeaveUsersWithoutDevice(let users):
                "\(users.count) user\(users.count == 1 ? "" : "s") would be left with no active device (\(Self.sample(users)))"
            case .wouldLeaveConversationsWithoutAdmin(let conversations):
                "\(conversations.count) conversation\(conversations.count == 1 ? "" : "s") would be left with no active admin device (\(Self.sample(conversations)))"
            case .unmatched(let entries):
                "\(entries.count) listed entr\(entries.count == 1 ? "y is" : "ies are") not in the registry (\(Self.sample(entries.map(\.reported))))"
            case .tooLarge(let devices, let active, let limit):
                "the batch would revoke \(devices) of the registry's \(active) active device\(active == 1 ? "" : "s") (\(Share(devices, of: active).text)), more than \(limit.text)"
            case .unexpectedCount(let expected, let devices):
                "the batch would revoke \(devices) device\(devices == 1 ? "" : "s"), not the \(expected) expected"
            }
        }

        /// The first few ids, enough to recognise the case in one line.
        private static func sample(_ ids: [String]) -> String {
            let shown = ids.prefix(3).map { $0.count > 100 ? $0.prefix(100) + "…" : $0 }.joined(separator: ", ")
            return ids.count > 3 ? "\(shown) and \(ids.count - 3) more" : shown
        }
    }

    public struct RevocationResult: Sendable {
        public let batchID: String
        public let radius: BlastRadius
        /// Whether the batch was written (false for dry runs, refusals and empty batches).
        public let applied: Bool
        /// Guard rails that refused the batch (unless forced).
        public let refusals: [Refusal]
        /// `mls.remove` operations, when asked for.
        public let operations: [JSONValue]
        /// With a given time (`nowGiven`): how many of the batch's devices registered, and how
        /// many of their open memberships began, after it. Rows the registry's own import
        /// refuses (a revocation before its device), said as a warning: a time given on purpose
        /// may still be older than the data (a test's, a replay's).
        public var recordedAfterTime = (devices: 0, memberships: 0)
    }

    /// Revokes the selected active devices in one transaction: inactive with time and reason,
    /// their open memberships closed, one log row each under one batch id, and the batch's
    /// `mls.remove` operations stored with it (``operations(batch:)`` gives them again).
    /// Refuses when users would be left with no active device or conversations with no active
    /// admin device, unless `allowing` says so: a dry run finds that before changing anything, a
    /// real run after making the change, which it then rolls back (nothing is committed). A list
    /// naming anything the registry does not have is refused before any change unless
    /// `allowing` has `.unmatched`; either way each such entry is reported. Idempotent: already
    /// revoked devices are skipped. A dry run needs only a read-only registry.
    /// With `keepLastDevice`, a user all of whose active devices are selected keeps the one
    /// seen most recently (stale devices go, nobody is locked out).
    ///
    /// Under a live server (PostgreSQL), revokers wait for each other, and the selection locks
    /// the rows of the devices it may revoke, in one order, before the blast radius is
    /// measured: the radius, the refusals and the change all describe one state, and the app
    /// cannot add a membership for a device being revoked meanwhile.
    ///
    /// A batch larger than `sizeLimit`'s share of the registry's active devices, or of another
    /// size than `sizeLimit.expected`, is refused with nothing changed, like an unmatched entry:
    /// a cutoff date typed wrong once selected half the registry. Such a refusal is found before
    /// the change, except where the batch is selected by revoking it (a table without
    /// conversations on PostgreSQL, for a list or a user, or past the size guard): the change is
    /// then rolled back, and a batch of unknown size is never changed before it is measured.
    public func revoke(_ selector: Selector, reason: String?, now: Timestamp, dryRun: Bool, allowing: Overrides,
                       collectOperations: Bool, keepLastDevice: Bool = false, sizeLimit: SizeLimit = SizeLimit(),
                       batchID: String = UUID().uuidString.lowercased(), by operatorInfo: RegistryOperator = .unnamed) throws -> RevocationResult {
        try revoke(prepare(selector), reason: reason, now: now, dryRun: dryRun, allowing: allowing, collectOperations: collectOperations,
                   keepLastDevice: keepLastDevice, sizeLimit: sizeLimit, batchID: batchID, by: operatorInfo)
    }

    /// A selector ready for ``revoke(_:reason:now:dryRun:allowing:collectOperations:keepLastDevice:sizeLimit:batchID:by:)``:
    /// its ids as the device table holds them and its list, if it has one, read into the
    /// registry's connection (valid until the next revocation on it).
    public struct PreparedSelection: Sendable {
        let selector: Selector
        /// How many entries the list had, as the log records it.
        let listed: Int?
        /// What the log records the selection as, when not the selector's own words: the
        /// devices a name matched are "devices by name of user …", not a list someone gave.
        var recordedAs: String? = nil
    }

    /// Prepares a selector: an id the table cannot hold is refused, and a list is read into
    /// the connection's temporary tables, in a transaction of its own, so that an entry that
    /// cannot be read is refused before anything else is asked (a signer's key command), and
    /// the transaction that changes the registry does not wait on the list: it holds SQLite's
    /// write lock from its start (and PostgreSQL's revokers' lock), and a list read from a slow
    /// pipe must not keep the app from writing meanwhile; nor is it read again when that
    /// transaction is retried.
    public func prepare(_ selector: Selector) throws -> PreparedSelection {
        let selector = try canonical(selector), d = dialect, t = table
        guard selector.isList else { return PreparedSelection(selector: selector, listed: nil) }
        return PreparedSelection(selector: selector, listed: try transaction(writing: false) { db in (try Self.loadList(selector, db: db, dialect: d, table: t), true) })
    }

    /// Prepares the devices a name matched among `user`'s (``devices(named:user:)``), recorded
    /// in the log as such (a trial: "devices (1 listed)", as if someone had listed them). The
    /// name itself is not recorded: it is the app's text, and the device ids say which.
    public func prepare(named devices: [DeviceReference], user: String) throws -> PreparedSelection {
        var prepared = try prepare(.devices(devices.map { ($0.user, $0.device) }))
        // The user as the registry holds it (a Family Medical id typed in capitals is stored in lower case).
        prepared.recordedAs = "devices by name of user \(devices.first?.user ?? user) (\(devices.count) matched)"
        return prepared
    }

    /// `beforeCommitting` runs once the batch is made and every guard rail passed, just before
    /// the batch is recorded and committed: what must hold for the change to be worth making
    /// (its operations file can be written); when it throws, nothing is committed.
    /// `nowGiven`: `now` was given, not read from the clock, so it may be earlier than what the
    /// registry holds of the batch's devices (``RevocationResult/recordedAfterTime``).
    public func revoke(_ prepared: PreparedSelection, reason: String?, now: Timestamp, nowGiven: Bool = false, dryRun: Bool, allowing: Overrides,
                       collectOperations: Bool, keepLastDevice: Bool = false, sizeLimit: SizeLimit = SizeLimit(),
                       batchID: String = UUID().uuidString.lowercased(), by operatorInfo: RegistryOperator = .unnamed,
                       beforeCommitting: () throws -> Void = {}) throws -> RevocationResult {
        // The rows and the batch's record are kept for good (append-only, chained).
        if let reason { try RecordedText.checkFreeText(reason, field: "the reason") }
        try RecordedText.checkName(operatorInfo.name, field: "the operator")
        try RecordedText.checkName(batchID, field: "the batch id")
        let time = Self.timeText(now), d = dialect, t = table, selector = prepared.selector
        // The selection as the record keeps it, held to the same rule as the rest of the record:
        // its ids are the registry's (a user's DID), which may still read as a key.
        let logged = RecordedText.named(prepared.recordedAs ?? prepared.listed.map { "devices (\($0) listed)" } ?? selector.description,
                                        what: "a selection")
        let body = { (db: RegistrySession) throws -> (RevocationResult, commit: Bool) in
            if !dryRun, let serialize = d.serializeRevocations { try db.execute(serialize) }
            var radius = BlastRadius()
            // Counted first, and before the empty case too: a report of nothing to revoke still
            // says how many devices are active (it said 0).
            radius.activeDevices = try db.int("SELECT count(*) FROM user_devices WHERE is_active")
            // A real run that needs no rows locked before its change, and spares none, may
            // select its batch by revoking it (``revokesAsItSelects``): the guard rails below
            // then measure the change made, and one that refuses rolls it back.
            // What a real run watches of its change, where the app's tables carry triggers.
            let watch = dryRun ? nil : try self.watchChange(db)
            let revokesAsItSelects = !dryRun && !keepLastDevice && watch == nil
                && Self.revokesAsItSelects(prepared, activeDevices: radius.activeDevices, sizeLimit: sizeLimit, allowing: allowing, dialect: d, table: t)
            let (selectedCount, activeSelected) = revokesAsItSelects
                ? try self.revokeAsSelected(selector, notFound: &radius.notFound, time: time, reason: reason, db: db)
                : try Self.fillBatch(selector, notFound: &radius.notFound, locking: !dryRun, keepLastDevice: keepLastDevice, db: db, dialect: d, table: t)
            if radius.notFound > 0 { radius.unmatched = try Self.unmatched(selector, db: db, dialect: d, table: t) }
            radius.devices = try db.int("SELECT count(*) FROM batch")
            radius.sparedLastDevices = activeSelected - radius.devices
            radius.alreadyRevoked = selectedCount - activeSelected
            // A list with entries the registry lacks is refused with nothing changed, and
            // measured as a dry run is, so the report still shows the whole blast radius.
            let unmatchedRefusal = radius.unmatched.isEmpty || allowing.contains(.unmatched) ? nil : Refusal.unmatched(radius.unmatched.map(\.entry))
            guard radius.devices > 0 else {
                // The same command run again after a run cut off between its commit and its
                // operations: which batch has them (a trial: "nothing to revoke", no pointer).
                if t.hasConversations, selectedCount > activeSelected { radius.revokedEarlierBy = try Self.batchesThatRevokedSelected(db: db) }
                return (RevocationResult(batchID: batchID, radius: radius, applied: false, refusals: unmatchedRefusal.map { [$0] } ?? [], operations: []), false)
            }
            // Checked only when there is something to revoke: running the same ticket again
            // after it landed finds nothing and says so, instead of refusing.
            if try db.bool("SELECT count(*) FROM revocations WHERE batch_id = ?", [.text(batchID)]) {
                throw VaultError.batchIdTaken(batchID)
            }
            let early = [unmatchedRefusal, Self.sizeRefusal(radius, sizeLimit, allowing: allowing)].compactMap { $0 }
            // A dry run may write nothing, so it measures what the change would leave. A real run
            // makes the change first and measures what it left: the closed memberships are
            // collected as they close, with no second pass over them, and a guard rail that
            // refuses rolls the change back. Its operations are written in the same sorted
            // pass over them that counts their conversations, and stored as they are written.
            let applied = !dryRun && early.isEmpty
            if applied {
                if !revokesAsItSelects {
                    let changed = try Self.apply(time: time, reason: reason, db: db, dialect: d, table: t)
                    try self.requireChangeStands(db, watch, activeBefore: radius.activeDevices, revoked: radius.devices)
                    try self.requireNoneLeftActive(radius.devices - changed)
                }
                let conversations = t.hasConversations ? try Self.writeOperations(batchID: batchID, db: db, dialect: d) : 0
                try Self.measure(&radius, applied: true, conversations: conversations, db: db, dialect: d, table: t)
            } else {
                // A batch revoked as it was selected is measured as it stands, and rolled back.
                try Self.measure(&radius, applied: revokesAsItSelects, db: db, dialect: d, table: t)
            }
            let recordedAfter = nowGiven ? try Self.recordedAfter(time, db: db, table: t) : (devices: 0, memberships: 0)
            var refusals = early
            if !allowing.contains(.usersWithoutDevice), !radius.usersLeftWithoutDevice.isEmpty {
                refusals.append(.wouldLeaveUsersWithoutDevice(radius.usersLeftWithoutDevice))
            }
            if !allowing.contains(.conversationsWithoutAdmin), !radius.conversationsLeftWithoutAdmin.isEmpty {
                refusals.append(.wouldLeaveConversationsWithoutAdmin(radius.conversationsLeftWithoutAdmin))
            }
            let operations = collectOperations && t.hasConversations ? try Self.removalOperations(db: db, dialect: d) : []
            guard !dryRun, refusals.isEmpty else {
                // A dry run commits what it wrote, its temporary tables, so that the batch
                // outlives the transaction for the report to list (``forEachBatchDevice(of:_:)``);
                // a refused run rolls everything back.
                return (RevocationResult(batchID: batchID, radius: radius, applied: false, refusals: refusals, operations: operations, recordedAfterTime: recordedAfter), dryRun)
            }
            try beforeCommitting()
            try db.execute("""
                INSERT INTO revocations (batch_id, revoked_at, user_did, device_id, reason, selector)
                SELECT ?, ?, CAST(user_did AS TEXT), CAST(device_id AS TEXT), ?, ? FROM batch ORDER BY user_did\(t.idOrder), device_id\(t.idOrder)
                """, [.text(batchID), .time(time), RegistryValue(reason), .text(logged)])
            try Self.recordBatch(batchID, time: time, by: operatorInfo, db: db)
            return (RevocationResult(batchID: batchID, radius: radius, applied: true, refusals: [], operations: operations, recordedAfterTime: recordedAfter), true)
        }
        // A dry run's transaction only reads the registry.
        let result = try transaction(writing: !dryRun, body)
        // A refused run's batch, rolled back with its change, is selected again from the
        // registry it left as it was, for the report, by a transaction that changes nothing
        // (committing the refused transaction's temporary tables would have written the
        // registry's pages back, and waited for every reader to do it).
        if !dryRun, !result.applied, result.radius.devices > 0 {
            try transaction(writing: false) { db in
                var notFound = 0
                _ = try Self.fillBatch(selector, notFound: &notFound, locking: false, keepLastDevice: keepLastDevice, db: db, dialect: d, table: t)
                return ((), true)
            }
        }
        return result
    }

    /// The devices of a revocation's batch (``BlastRadius/devices`` of them), `(user_did,
    /// device_id)` in byte order: what a run revoked, or a dry run or a refused run would
    /// have. Read from where the revocation left them, on this registry's connection, a piece
    /// at a time, so a batch of a million devices is listed in bounded memory; valid until
    /// the next revocation.
    public func forEachBatchDevice(of result: RevocationResult, _ body: (DeviceReference) throws -> Void) throws {
        guard result.radius.devices > 0 else { return }
        let t = table
        // Read as the bytes the database sends (the ids are never NULL), with no value made
        // for each: the report of a large batch read it row by row (a third of a revoke's time
        // in the tool, 100,000 devices).
        try read { db in
            try db.forEachRow("SELECT user_did, device_id FROM batch ORDER BY user_did\(t.idOrder), device_id\(t.idOrder)", []) { column in
                try body(DeviceReference(user: String(decoding: column(0), as: UTF8.self), device: String(decoding: column(1), as: UTF8.self)))
            }
        }
    }

    /// How many of the batch's devices registered, and how many of their open memberships
    /// (`closing`, once measured) began, after `time`: from the times the selection and the
    /// closing kept, with no second join of the batch to the registry (1.4 s of a revoke of
    /// 100,000 of 1,000,000 devices on SQLite, a tenth of its run, when `--now` was given).
    private static func recordedAfter(_ time: String, db: RegistrySession, table t: DeviceTable) throws -> (devices: Int, memberships: Int) {
        let devices = try db.int("SELECT count(*) FROM batch WHERE registered > ?", [.time(time)])
        let memberships = t.hasConversations ? try db.int("SELECT count(*) FROM closing WHERE joined_at > ?", [.time(time)]) : 0
        return (devices, memberships)
    }

    /// The selector with its ids as the device table holds them (Family Medical's UUIDs in
    /// lower case); an id the table cannot hold, or signature keys where devices have none,
    /// is refused before the registry is read.
    private func canonical(_ selector: Selector) throws -> Selector {
        let t = table
        func id(_ text: String, _ what: String) throws -> String {
            guard let id = t.canonicalID(text) else { throw VaultError.notARegistryID(what, text, schema) }
            return id
        }
        switch selector {
        case .devices(let pairs): return .devices(try pairs.map { (try id($0.user, "user"), try id($0.device, "device")) })
        case .deviceList: return selector  // each entry as it is read (``forEachListed(_:table:_:)``)
        case .user(let user): return .user(try id(user, "user"))
        case .notSeenSince: return selector
        case .signatureKeys:
            guard t.hasConversations else { throw VaultError.notInSchema("signature keys", schema, registry: path) }
            return selector
        }
    }

    /// The refusal a batch of this size earns, if any: a count other than the one expected
    /// always; more than the limit's share of the active devices unless a count was expected
    /// (and matched) or the guard rail is overridden.
    private static func sizeRefusal(_ radius: BlastRadius, _ size: SizeLimit, allowing: Overrides) -> Refusal? {
        if let expected = size.expected {
            return expected == radius.devices ? nil : .unexpectedCount(expected: expected, devices: radius.devices)
        }
        guard !allowing.contains(.largeBatch), size.limit.isExceeded(by: radius.devices, of: radius.activeDevices) else { return nil }
        return .tooLarge(devices: radius.devices, active: radius.activeDevices, limit: size.limit)
    }

    /// Fills `selected` (with each device's is_active, so the batch needs no second look-up),
    /// each query ending in `locking` (the locking clause, or nothing); returns
    /// how many listed devices or keys the registry does not have.
    private static func select(_ selector: Selector, locking: String, db: RegistrySession, dialect d: RegistryDialect, table t: DeviceTable) throws -> Int {
        // The devices matching `condition`. A locking selection locks only the active ones, the
        // ones it may revoke: locking every revoked device a periodic --not-seen-since finds
        // again would write to each; those are read by a second statement. (A device list locks
        // what it names, active or not: the list bounds it, and a second join would cost more.)
        func insert(_ condition: String, _ arguments: [RegistryValue]) throws {
            let select = "INSERT INTO selected SELECT \(selectedColumns(t)) FROM user_devices d WHERE (\(condition))"
            guard !locking.isEmpty else { return try db.execute(select, arguments) }
            try db.execute(select + " AND d.is_active" + locking, arguments)
            try db.execute(select + " AND NOT d.is_active", arguments)
        }
        switch selector {
        case .devices, .deviceList:
            // The list is in `listed_entries` already (``loadList(_:db:dialect:table:)``), a
            // device listed twice twice: `selected` keeps each device once by its key (compared
            // by bytes as the database compares them: Swift's String equality would take "é"
            // and "e" + U+0301 for one device and leave the second unrevoked), with no table of
            // the list's distinct entries made first (a sort of the whole list).
            if d.analyzesTemporaryTables { try db.execute("ANALYZE listed_entries") }
            // SQLite finds each entry in the table's B-tree in the order the list gives: a list
            // in any other order than the table's key (an export sorted by name, or by signature
            // key as the bench's is) read a page for nearly every entry. Sorted by that key first
            // (the LIMIT keeps SQLite from flattening the sort away, CROSS JOIN keeps the list the
            // outer loop), each page is read once: 0.80 → 0.35 s for 100,000 entries of 1,000,000
            // Catbird devices. PostgreSQL's planner hashes or merges the join itself.
            let listed = d.sortsListByKey ? "(SELECT user_did, device_id FROM listed_entries ORDER BY \(t.keyOrder) LIMIT -1) l CROSS JOIN" : "listed_entries l JOIN"
            try db.execute("""
                INSERT INTO selected SELECT \(selectedColumns(t)) FROM \(listed)
                user_devices d ON d.\(t.user) = l.user_did AND d.device_id = l.device_id WHERE TRUE\(locking) ON CONFLICT DO NOTHING
                """)
            return try db.int("""
                SELECT count(*) FROM (SELECT DISTINCT l.user_did, l.device_id FROM listed_entries l
                    WHERE NOT EXISTS (SELECT 1 FROM selected s WHERE s.user_did = l.user_did AND s.device_id = l.device_id)) x
                """)
        case .user(let did):
            try insert("d.\(t.user) = \(t.id)", [.text(did)])
            return try db.int("SELECT count(*) FROM selected") == 0 ? 1 : 0
        case .notSeenSince(let time):
            try insert(t.notSeenSince("d"), [.time(timeText(time))])
            return 0
        case .signatureKeys(let keys):
            try db.execute("CREATE TEMP TABLE IF NOT EXISTS listed_keys (key \(d.blobType) NOT NULL); DELETE FROM listed_keys;")
            try db.load("listed_keys", columns: ["key"]) { add in
                for key in keys { try add([.bytes(key)]) }
            }
            // A semi-join, not a join: a key listed twice selects its device once, with no
            // DISTINCT (which a locking selection may not have).
            if d.analyzesTemporaryTables { try db.execute("ANALYZE listed_keys") }
            try insert("d.signature_public_key IN (SELECT key FROM listed_keys)", [])
            return try db.int("""
                SELECT count(*) FROM (SELECT DISTINCT key FROM listed_keys) k
                WHERE NOT EXISTS (SELECT 1 FROM user_devices d WHERE d.signature_public_key = k.key)
                """)
        }
    }

    /// Loads a list of devices into `listed_entries`, each entry as listed (a device listed
    /// twice, twice): the list goes to the database as it is read, and is never held (it may be
    /// as long as the registry). Returns how many entries it had.
    private static func loadList(_ selector: Selector, db: RegistrySession, dialect d: RegistryDialect, table t: DeviceTable) throws -> Int {
        try db.execute("""
            CREATE TEMP TABLE IF NOT EXISTS listed_entries (item INTEGER NOT NULL, user_did \(t.idType) NOT NULL, device_id \(t.idType) NOT NULL);
            DELETE FROM listed_entries;
            """)
        try db.load("listed_entries", columns: ["item", "user_did", "device_id"]) { add in
            try forEachListed(selector, table: t) { item, user, device in try add([.int(item), .text(user), .text(device)]) }
        }
        return try db.int("SELECT count(*) FROM listed_entries")
    }

    /// Fills `selected` with the selector's devices and `batch` with those of them that are
    /// active (less, with `keepLastDevice`, each user's last one), in tables that name the ids as
    /// Catbird does, in the type the device table has. With `locking`, the rows are locked
    /// (PostgreSQL) so that no membership is added to a device being revoked; a table without
    /// conversations has none to add (its UPDATE locks what it changes). Returns how many
    /// devices were selected and how many of them are active.
    private static func fillBatch(_ selector: Selector, notFound: inout Int, locking: Bool, keepLastDevice: Bool, db: RegistrySession,
                                  dialect d: RegistryDialect, table t: DeviceTable) throws -> (selected: Int, active: Int) {
        try emptyBatch(db: db, dialect: d, table: t)
        let lockingClause = locking && d.locksSelection && t.hasConversations ? " ORDER BY d.\(t.user), d.device_id FOR UPDATE OF d" : ""
        notFound = try select(selector, locking: lockingClause, db: db, dialect: d, table: t)
        // Only revokers change is_active, and they take turns: what the selection read holds.
        try db.execute("INSERT INTO batch SELECT user_did, device_id, registered FROM selected WHERE is_active")
        if d.analyzesTemporaryTables { try db.execute("ANALYZE selected; ANALYZE batch") }
        let counts = (selected: try db.int("SELECT count(*) FROM selected"), active: try db.int("SELECT count(*) FROM batch"))
        if keepLastDevice {
            // Each user left with no active device keeps the one seen last.
            try db.execute("""
                DELETE FROM batch WHERE (user_did, device_id) IN (
                    SELECT user_did, device_id FROM (
                        SELECT b.user_did, b.device_id, row_number() OVER (
                            PARTITION BY b.user_did ORDER BY \(t.lastSignOfLife("d")) DESC NULLS LAST, b.device_id\(t.idOrder)) AS place
                        FROM batch b JOIN user_devices d ON d.\(t.user) = b.user_did AND d.device_id = b.device_id
                        WHERE NOT EXISTS (
                            SELECT 1 FROM user_devices o WHERE o.\(t.user) = b.user_did AND o.is_active
                            AND NOT EXISTS (SELECT 1 FROM batch x WHERE x.user_did = o.\(t.user) AND x.device_id = o.device_id))) ranked
                    WHERE place = 1)
                """)
        }
        return counts
    }

    /// A row of `selected` from `user_devices d`, in its columns' order.
    private static func selectedColumns(_ t: DeviceTable) -> String {
        "d.\(t.user), d.device_id, d.is_active, \(t.time("d", t.registered))"
    }

    /// The latest batches that revoked devices of `selected` (up to three, the last first).
    private static func batchesThatRevokedSelected(db: RegistrySession) throws -> [String] {
        try db.strings("""
            SELECT r.batch_id FROM revocations r JOIN selected s ON s.user_did = r.user_did AND s.device_id = r.device_id
            GROUP BY r.batch_id ORDER BY max(r.id) DESC LIMIT 3
            """)
    }

    /// Makes `selected` and `batch` empty, in tables that name the ids as Catbird does, in the
    /// type the device table has, each device with when it registered (read as a time), which
    /// the `--now` check counts (``recordedAfter(_:db:table:)``).
    private static func emptyBatch(db: RegistrySession, dialect d: RegistryDialect, table t: DeviceTable) throws {
        try db.execute("""
            CREATE TEMP TABLE IF NOT EXISTS selected (user_did \(t.idType) NOT NULL, device_id \(t.idType) NOT NULL, is_active \(d.boolType) NOT NULL,
                registered \(d.timeType), PRIMARY KEY (user_did, device_id))\(d.tableSuffix);
            CREATE TEMP TABLE IF NOT EXISTS batch (user_did \(t.idType) NOT NULL, device_id \(t.idType) NOT NULL, registered \(d.timeType),
                PRIMARY KEY (user_did, device_id))\(d.tableSuffix);
            DELETE FROM selected; DELETE FROM batch;
            """)
    }

    /// Whether a real run (no dry run, no device spared) selects its batch by revoking it,
    /// in one statement (``revokeAsSelected(_:notFound:time:reason:db:)``), rather than
    /// selecting it first: where the engine's UPDATE can fill the batch
    /// (``RegistryDialect/updateFillsTable``), the table has no conversations (Catbird's
    /// selection locks its devices in one order before their memberships are closed), and the
    /// size guard cannot refuse a batch it has no bound for: a cutoff typed wrong selects half
    /// the registry, which is then measured before anything is changed, not changed and rolled
    /// back. A list bounds its batch by its length; a user's devices are few. The caller also
    /// asks that the table carry no trigger of the app's (``watchChange(_:)``): one that skips
    /// or rewrites a row keeps it out of what the UPDATE returns (a hostile trial: a device a
    /// trigger kept active was counted as revoked before), which selecting first catches
    /// (``requireChangeStands(_:_:activeBefore:revoked:)``).
    private static func revokesAsItSelects(_ prepared: PreparedSelection, activeDevices: Int, sizeLimit: SizeLimit, allowing: Overrides,
                                           dialect d: RegistryDialect, table t: DeviceTable) -> Bool {
        guard d.updateFillsTable, !t.hasConversations else { return false }
        if allowing.contains(.largeBatch), sizeLimit.expected == nil { return true }
        switch prepared.selector {
        case .devices, .deviceList: return sizeLimit.expected != nil || !sizeLimit.limit.isExceeded(by: prepared.listed ?? 0, of: activeDevices)
        case .user: return true
        case .notSeenSince, .signatureKeys: return false
        }
    }

    /// Revokes the selector's active devices and fills `batch` with them as they change, in one
    /// statement; returns how many devices the selector names that the registry has, and how
    /// many of them it revoked (were active), and sets `notFound` as ``select(_:locking:db:dialect:table:)``
    /// does, with `selected` holding the devices it names that were revoked before.
    ///
    /// The UPDATE sees the registry as one statement does; what is counted after it may see
    /// more (PostgreSQL's READ COMMITTED). So only a device that is inactive and not in the batch
    /// counts as revoked before, and a device the selector names that is still active after the
    /// change refuses the run (``VaultError/registryChangeNotTaken(_:devices:file:line:)``,
    /// nothing committed): one a row-level security policy or a rule kept the UPDATE from, or
    /// that the app registered or made active again while the revoke waited (two trials: each
    /// was counted as revoked before, then as not in the registry).
    private func revokeAsSelected(_ selector: Selector, notFound: inout Int, time: String, reason: String?, db: RegistrySession) throws -> (selected: Int, active: Int) {
        let d = dialect, t = table
        try Self.emptyBatch(db: db, dialect: d, table: t)
        let condition: String, arguments: [RegistryValue]
        switch selector {
        case .devices, .deviceList: (condition, arguments) = ("(d.\(t.user), d.device_id) IN (SELECT user_did, device_id FROM listed_entries)", [])
        case .user(let did): (condition, arguments) = ("d.\(t.user) = \(t.id)", [.text(did)])
        case .notSeenSince(let cutoff): (condition, arguments) = (t.notSeenSince("d"), [.time(Self.timeText(cutoff))])
        case .signatureKeys: preconditionFailure("a table without conversations keeps no signature keys")
        }
        // Where the row keeps no time or reason (Family Medical's), the log keeps them.
        let state = t.keepsRevocation ? ", revoked_at = ?, revocation_reason = ?" : ""
        try db.execute("""
            WITH revoked AS (UPDATE user_devices AS d SET is_active = FALSE\(state) WHERE d.is_active AND (\(condition)) RETURNING d.\(t.user), d.device_id, \(t.time("d", t.registered)))
            INSERT INTO batch SELECT * FROM revoked
            """, (t.keepsRevocation ? [.time(time), RegistryValue(reason)] : []) + arguments)
        if d.analyzesTemporaryTables { try db.execute("ANALYZE batch") }
        let active = try db.int("SELECT count(*) FROM batch")
        let notInBatch = "NOT EXISTS (SELECT 1 FROM batch b WHERE b.user_did = d.\(t.user) AND b.device_id = d.device_id)"
        switch selector {
        case .devices, .deviceList:
            // What the list names that the change did not take (looked for only when there is
            // such an entry): revoked before, or not found.
            let left = "FROM listed_entries l WHERE NOT EXISTS (SELECT 1 FROM batch b WHERE b.user_did = l.user_did AND b.device_id = l.device_id)"
            let leftOver = try db.int("SELECT count(*) FROM (SELECT DISTINCT l.user_did, l.device_id \(left)) x")
            if leftOver > 0 {
                try requireNoneLeftActive(db.int("""
                    SELECT count(*) FROM (SELECT DISTINCT l.user_did, l.device_id FROM listed_entries l
                        JOIN user_devices d ON d.\(t.user) = l.user_did AND d.device_id = l.device_id WHERE d.is_active AND \(notInBatch)) x
                    """))
                try db.execute("""
                    INSERT INTO selected SELECT \(Self.selectedColumns(t)) FROM listed_entries l
                    JOIN user_devices d ON d.\(t.user) = l.user_did AND d.device_id = l.device_id WHERE NOT d.is_active AND \(notInBatch) ON CONFLICT DO NOTHING
                    """)
            }
            let revokedBefore = try db.int("SELECT count(*) FROM selected")
            notFound = leftOver - revokedBefore
            return (active + revokedBefore, active)
        case .user, .notSeenSince:
            try requireNoneLeftActive(db.int("SELECT count(*) FROM user_devices d WHERE (\(condition)) AND d.is_active", arguments))
            // Only a device not in the batch was revoked before: counting the inactive and taking
            // the batch away was a third as long, but wrong where a row of the batch no longer
            // matched or was no longer seen after the change (two hostile trials: a trigger on a
            // partition moved its last seen; a row-level policy hid it from the next statement).
            let revokedBefore = try db.int("SELECT count(*) FROM user_devices d WHERE (\(condition)) AND NOT d.is_active AND \(notInBatch)", arguments)
            if case .user = selector { notFound = active + revokedBefore == 0 ? 1 : 0 } else { notFound = 0 }
            return (active + revokedBefore, active)
        case .signatureKeys: preconditionFailure("a table without conversations keeps no signature keys")
        }
    }

    /// The listed devices of a device selector, with their places, in the ids the device table
    /// holds (``DeviceTable/canonicalID(_:)``).
    private static func forEachListed(_ selector: Selector, table t: DeviceTable, _ entry: (_ item: Int, _ user: String, _ device: String) throws -> Void) throws {
        switch selector {
        case .devices(let pairs):
            for (index, pair) in pairs.enumerated() { try entry(index + 1, pair.user, pair.device) }
        case .deviceList(let list):
            try list.forEach { item, user, device in
                guard let canonicalUser = t.canonicalID(user) else { throw VaultError.notARegistryID("user", user, t.schema) }
                guard let canonicalDevice = t.canonicalID(device) else { throw VaultError.notARegistryID("device", device, t.schema) }
                try entry(item, canonicalUser, canonicalDevice)
            }
        case .user, .notSeenSince, .signatureKeys:
            preconditionFailure("not a list of devices")
        }
    }

    /// At most this many unmatched entries get the closest registered devices: each costs a scan
    /// of its user's devices.
    static let suggestedUnmatched = 20

    /// The listed entries the selection did not find, in the list's order (each once), read
    /// only when some are missing: a clean list costs nothing more.
    private static func unmatched(_ selector: Selector, db: RegistrySession, dialect d: RegistryDialect, table t: DeviceTable) throws -> [Unmatched] {
        switch selector {
        case .devices, .deviceList:
            var found: [Unmatched] = []
            // Each device once, at its first place: neither selected nor in the batch, whether
            // the batch was selected first (then `selected` holds it) or revoked as it was
            // selected (then `selected` holds only the devices revoked before).
            try db.eachRow("""
                SELECT min(l.item) AS item, l.user_did, l.device_id FROM listed_entries l
                WHERE NOT EXISTS (SELECT 1 FROM selected s WHERE s.user_did = l.user_did AND s.device_id = l.device_id)
                AND NOT EXISTS (SELECT 1 FROM batch b WHERE b.user_did = l.user_did AND b.device_id = l.device_id)
                GROUP BY l.user_did, l.device_id ORDER BY 1
                """, []) { row in
                let (user, device) = (row.text("user_did"), row.text("device_id"))
                // In one order, so that the closest of equal distance are the same whatever the
                // table's rows (a refused run's uncommitted change moved them).
                let devices = found.count < suggestedUnmatched
                    ? try db.strings("SELECT device_id FROM user_devices WHERE \(t.user) = \(t.id) ORDER BY device_id\(t.idOrder)", [.text(user)]) : []
                let known = found.count < suggestedUnmatched ? !devices.isEmpty
                    : try db.bool("SELECT count(*) FROM user_devices WHERE \(t.user) = \(t.id)", [.text(user)])
                found.append(Unmatched(item: row.int("item"), entry: QuotedInput("\(user)#\(device)"), userKnown: known,
                                       closest: EditDistance.closest(to: device, among: devices, count: 3)))
            }
            return found
        case .user(let did):
            return [Unmatched(item: 1, entry: QuotedInput(did), userKnown: false, closest: [])]
        case .notSeenSince:
            return []
        case .signatureKeys(let keys):
            var missing = Set(try db.rows("""
                SELECT k.key FROM listed_keys k WHERE NOT EXISTS (SELECT 1 FROM user_devices d WHERE d.signature_public_key = k.key)
                """, []).compactMap { row -> [UInt8]? in
                    if case .bytes(let key) = row[row.columns[0]] { key } else { nil }
                })
            return keys.enumerated().compactMap { index, key in
                missing.remove(key) == nil ? nil : Unmatched(item: index + 1, entry: QuotedInput(Hex.encode(key)), userKnown: false, closest: [])
            }
        }
    }

    /// The temporary table of the memberships the batch closes, reused by the counts, the
    /// guard rails and the operations; each membership's start as stored, for the `--now` check. It has no key: `members` already keeps each membership
    /// once, and keeping an index of 500,000 rows in the order they close cost a second of a
    /// large revoke on either engine; what reads it in order sorts it once.
    private static func emptyClosing(db: RegistrySession, dialect d: RegistryDialect) throws {
        try db.execute("""
            CREATE TEMP TABLE IF NOT EXISTS closing (convo_id TEXT NOT NULL, member_mls_did TEXT NOT NULL, is_admin \(d.boolType) NOT NULL, joined_at \(d.storedTimeType));
            DELETE FROM closing;
            """)
    }

    /// Revokes the batch's devices and closes their open memberships, filling `closing` with
    /// each membership as it closes (``RegistryDialect/closeMemberships``). Returns how many
    /// devices the UPDATE changed (``requireNoneLeftActive(_:)``).
    private static func apply(time: String, reason: String?, db: RegistrySession, dialect d: RegistryDialect, table t: DeviceTable) throws -> Int {
        // The probing is for the memberships' join: a table without them is updated by its key,
        // which PostgreSQL's hash join of the batch does fastest (2.6 s probing, 100,000 of
        // 1,000,000 Family Medical devices).
        let probingIndexes = t.hasConversations ? d.probingIndexes : nil
        if let probing = probingIndexes { try db.execute(probing.start) }
        // Where the row keeps no time or reason (Family Medical's), the log keeps them.
        let state = t.keepsRevocation ? ", revoked_at = ?, revocation_reason = ?" : ""
        // Family Medical's device is its id alone, the table's key: found by it.
        let inBatch = t.hasConversations ? "(\(t.user), device_id) IN (SELECT user_did, device_id FROM batch)" : "device_id IN (SELECT device_id FROM batch)"
        let changed = try db.change("""
            UPDATE user_devices SET is_active = FALSE\(state) WHERE \(inBatch)
            """, t.keepsRevocation ? [.time(time), RegistryValue(reason)] : [])
        if t.hasConversations {
            try emptyClosing(db: db, dialect: d)
            if let collecting = d.collectingClosing { try db.execute(collecting.start) }
            try db.execute(d.closeMemberships, [.time(time)])
            if let collecting = d.collectingClosing { try db.execute(collecting.end) }
        }
        if let probing = probingIndexes { try db.execute(probing.end) }
        return changed
    }

    /// The blast radius, from `batch` and `closing`. Before the change (`applied` false) it
    /// fills `closing` and finds what would be left by setting the batch aside; after it,
    /// what is left is simply what the registry holds. Both give the same answer: the batch's
    /// devices are all active, and `closing` is every open membership they had.
    /// `conversations`, when given, is how many conversations `closing` has, counted already.
    private static func measure(_ radius: inout BlastRadius, applied: Bool, conversations: Int? = nil, db: RegistrySession,
                                dialect d: RegistryDialect, table t: DeviceTable) throws {
        radius.users = try db.int("SELECT count(DISTINCT user_did) FROM batch")
        // A table without conversations has no memberships to close.
        if t.hasConversations {
            if !applied {
                try emptyClosing(db: db, dialect: d)
                try db.execute("""
                    INSERT INTO closing SELECT m.convo_id, m.user_did || '#' || m.device_id, coalesce(m.is_admin, FALSE), m.joined_at FROM batch b
                        JOIN members m ON m.user_did = b.user_did AND m.device_id = b.device_id WHERE m.left_at IS NULL
                    """)
            }
            if d.analyzesTemporaryTables { try db.execute("ANALYZE closing") }
            radius.memberships = try db.int("SELECT count(*) FROM closing")
            radius.conversations = try conversations ?? db.int("SELECT count(DISTINCT convo_id) FROM closing")
        }
        let outsideBatch = applied ? "" : "AND NOT EXISTS (SELECT 1 FROM batch b WHERE b.user_did = d.\(t.user) AND b.device_id = d.device_id)"
        // Each of the batch's users looked up by the index of a user's devices, in the index's
        // order: work in proportion to the batch. PostgreSQL's planner hashed every active device
        // instead (0.39 s for 100,000 of 1,000,000 Family Medical devices; probing in order 0.21 s,
        // in the order of a hash 0.53 s).
        if let probing = d.probingIndexes { try db.execute(probing.start) }
        radius.usersLeftWithoutDevice = try db.strings("""
            SELECT user_did FROM (SELECT DISTINCT user_did FROM batch ORDER BY user_did) u WHERE NOT EXISTS (
                SELECT 1 FROM user_devices d WHERE d.\(t.user) = u.user_did AND d.is_active \(outsideBatch))
            ORDER BY user_did\(t.idOrder)
            """)
        if let probing = d.probingIndexes { try db.execute(probing.end) }
        guard t.hasConversations else { return }
        // Only a conversation losing an active admin device can be left without one: the batch's
        // devices are all active, so each closing admin membership is such a loss. Before the
        // change, an open membership stays open exactly when its device is not in the batch.
        let notClosing = applied ? "" : "AND NOT EXISTS (SELECT 1 FROM batch b WHERE b.user_did = m.user_did AND b.device_id = m.device_id)"
        radius.conversationsLeftWithoutAdmin = try db.strings("""
            SELECT convo_id FROM (SELECT DISTINCT convo_id FROM closing WHERE is_admin) c
            WHERE NOT EXISTS (SELECT 1 FROM members m JOIN user_devices d ON d.user_did = m.user_did AND d.device_id = m.device_id
                              WHERE m.convo_id = c.convo_id AND m.left_at IS NULL AND m.is_admin AND d.is_active \(notClosing))
            ORDER BY convo_id\(d.byteOrder)
            """)
    }

    /// Operations a `batch_operations` row holds, as JSON Lines without the last newline.
    /// One row an operation cost more than the rest of the bookkeeping (a 36-byte batch id and
    /// an index entry each, 500,000 of them for 100,000 devices); ``operations(batch:)`` reads
    /// rows of one operation (as earlier versions wrote them) and of many alike.
    static let operationsPerRow = 1000

    /// Stores the batch's `mls.remove` operations with it, ``operationsPerRow`` to a row of
    /// `batch_operations` (``operations(batch:to:)`` gives them again), and returns how many
    /// conversations they are in. Read from `closing` in byte order of conversation and
    /// member, written from the ids' bytes as JSONValue writes JSON: faster on both engines
    /// than a String and a value per operation, or than building them in SQL
    /// (docs/performance.md, "What the profiles showed"). In that order a conversation's
    /// operations are adjacent, so the same pass counts them. Each row is stored as soon as it
    /// is full: the operations are never all in memory (500,000 for 100,000 devices).
    private static func writeOperations(batchID: String, db: RegistrySession, dialect d: RegistryDialect) throws -> Int {
        if let setting = d.beforeStoringOperations { try db.execute(setting) }
        var conversations = 0, row: [UInt8] = [], count = 0, seq = 0, conversation: [UInt8] = []
        func store() throws {
            try db.execute("INSERT INTO batch_operations (batch_id, seq, operation) VALUES (?, ?, ?)",
                           [.text(batchID), .int(seq), .text(String(decoding: row, as: UTF8.self))])
            seq += 1
            row.removeAll(keepingCapacity: true)
            count = 0
        }
        try db.forEachRow("SELECT convo_id, member_mls_did FROM closing ORDER BY convo_id\(d.byteOrder), member_mls_did\(d.byteOrder)", []) { column in
            let convo = column(0)
            if conversations == 0 || !convo.elementsEqual(conversation) {
                conversations += 1
                conversation = Array(convo)
            }
            if count > 0 { row.append(0x0a) }
            row.append(contentsOf: #"{"op":"mls.remove","convo":"#.utf8)
            JSONValue.writeString(utf8: convo, to: &row)
            row.append(contentsOf: #","member":"#.utf8)
            JSONValue.writeString(utf8: column(1), to: &row)
            row.append(UInt8(ascii: "}"))
            count += 1
            if count == operationsPerRow { try store() }
        }
        if count > 0 { try store() }
        return conversations
    }

    private static func removalOperations(db: RegistrySession, dialect d: RegistryDialect) throws -> [JSONValue] {
        try db.rows("SELECT convo_id, member_mls_did FROM closing ORDER BY convo_id\(d.byteOrder), member_mls_did\(d.byteOrder)", []).map { row in
            .object([("op", .string("mls.remove")), ("convo", .string(row.text("convo_id"))), ("member", .string(row.text("member_mls_did")))])
        }
    }
}
