import Foundation
import GRDB
import GRDBSQLite

/// A server-side device registry in SQLite (issue 6): the Catbird seed's `user_devices` and
/// `members` tables (seed 003) plus revocation state and an append-only `revocations` log.
/// docs/device-registry.md states the schema and the rules.
///
/// Times are stored as RFC 3339 UTC text with whole seconds (`2025-11-19T10:00:00Z`), so text
/// order is time order. Every revocation is one immediate transaction: concurrent revokers wait
/// for each other (busy timeout) instead of losing updates, and a killed run leaves the
/// database entirely before or entirely after its batch.
///
/// The journal is SQLite's rollback journal, not WAL: a read-only connection to a WAL database
/// creates `-wal` and `-shm` files beside it and leaves them, so a dry run or `log` would change
/// the file system. With the rollback journal, reading changes nothing (issue 16).
public final class DeviceRegistry: Sendable {
    private let database: DatabaseQueue
    public let path: String
    private let readOnly: Bool

    /// How a command uses the registry.
    public enum Access: Sendable {
        /// Make the registry when missing (`init`); an existing file must be a registry or empty.
        case create
        /// Change an existing registry; schema migrations run first.
        case readWrite
        /// Read only (views, the log, dry runs): opened read-only, nothing migrated or created.
        case readOnly
    }

    /// Opens a registry. A file that is not one (another application's database) is refused
    /// before anything is written to it.
    public init(path: String, access: Access) throws {
        self.path = path
        readOnly = access == .readOnly
        guard access == .create || FileManager.default.fileExists(atPath: path) else {
            throw VaultError.noRegistry(path)
        }
        if access == .create, !FileManager.default.fileExists(atPath: path) {
            try Self.createWhole(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        configuration.foreignKeysEnabled = true
        configuration.readonly = readOnly
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
            let tables = try database.read { db in
                try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
            }
            let registryTables: Set<String> = ["user_devices", "members", "revocations", "grdb_migrations"]
            guard registryTables.isSubset(of: tables) || (access == .create && tables.isEmpty) else {
                throw VaultError.notARegistry(path, missing: registryTables.subtracting(tables).sorted(), empty: tables.isEmpty)
            }
            guard !readOnly else { return }
            try database.writeWithoutTransaction { db in
                if try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal" { try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            }
            try Self.migrator.migrate(database)
        } catch let error as DatabaseError {
            throw Self.failure(error, "cannot open the registry '\(path)'")
        }
    }

    /// A new registry appears whole or not at all: the schema is built in memory and the
    /// finished database is written like every other output of the suite (AtomicFile), so a
    /// killed or failed `init` leaves no half-made file behind (Tests/Interop/test_faults.py).
    private static func createWhole(_ path: String) throws {
        let bytes: [UInt8]
        do {
            let memory = try DatabaseQueue()
            try migrator.migrate(memory)
            bytes = try memory.writeWithoutTransaction { db in
                var size: sqlite3_int64 = 0
                guard let data = sqlite3_serialize(db.sqliteConnection, "main", &size, 0) else {
                    throw VaultError(.io, "could not build the registry '\(path)' in memory")
                }
                defer { sqlite3_free(data) }
                return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
            }
        } catch let error as DatabaseError {
            throw failure(error, "could not build the registry '\(path)'")
        }
        do {
            try AtomicFile.write(bytes, to: path, mode: 0o666 & ~AtomicFile.currentUmask(), exclusive: true)
        } catch let error as VaultError where error.code == .refused {
            // Another init made it meanwhile: open that one.
        }
    }

    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: devices, members, revocation log") { db in
            try db.execute(sql: """
                CREATE TABLE user_devices (
                    user_did TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    device_mls_did TEXT NOT NULL,
                    device_name TEXT,
                    signature_public_key BLOB NOT NULL,
                    key_packages_available INTEGER NOT NULL DEFAULT 0,
                    last_seen TEXT,
                    registered_at TEXT NOT NULL,
                    is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
                    revoked_at TEXT,
                    revocation_reason TEXT,
                    PRIMARY KEY (user_did, device_id),
                    UNIQUE (user_did, signature_public_key)
                ) WITHOUT ROWID;
                CREATE INDEX user_devices_by_signature_key ON user_devices (signature_public_key);
                CREATE INDEX user_devices_active_by_last_seen ON user_devices (last_seen) WHERE is_active = 1;
                CREATE TABLE members (
                    convo_id TEXT NOT NULL,
                    member_mls_did TEXT NOT NULL,
                    user_did TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    joined_at TEXT NOT NULL,
                    left_at TEXT,
                    is_admin INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
                    PRIMARY KEY (convo_id, member_mls_did),
                    FOREIGN KEY (user_did, device_id) REFERENCES user_devices (user_did, device_id)
                ) WITHOUT ROWID;
                CREATE INDEX members_by_device ON members (user_did, device_id);
                CREATE TABLE revocations (
                    id INTEGER PRIMARY KEY,
                    batch_id TEXT NOT NULL,
                    revoked_at TEXT NOT NULL,
                    user_did TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    reason TEXT,
                    selector TEXT NOT NULL
                );
                CREATE INDEX revocations_by_batch ON revocations (batch_id);
                CREATE TRIGGER revocations_are_append_only_update BEFORE UPDATE ON revocations
                    BEGIN SELECT RAISE(ABORT, 'the revocation log is append-only'); END;
                CREATE TRIGGER revocations_are_append_only_delete BEFORE DELETE ON revocations
                    BEGIN SELECT RAISE(ABORT, 'the revocation log is append-only'); END;
                """)
        }
        // Each batch's operations, kept in the transaction that revokes it, so they can be
        // written again at any time (issue 16: a failed --ops after the commit lost them).
        migrator.registerMigration("v2: batch operations") { db in
            try db.execute(sql: """
                CREATE TABLE batch_operations (
                    batch_id TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    operation TEXT NOT NULL,
                    PRIMARY KEY (batch_id, seq)
                ) WITHOUT ROWID;
                CREATE TRIGGER batch_operations_are_append_only_update BEFORE UPDATE ON batch_operations
                    BEGIN SELECT RAISE(ABORT, 'the operations log is append-only'); END;
                CREATE TRIGGER batch_operations_are_append_only_delete BEFORE DELETE ON batch_operations
                    BEGIN SELECT RAISE(ABORT, 'the operations log is append-only'); END;
                """)
        }
        return migrator
    }()

    /// The registry's time text for a timestamp (whole seconds, UTC).
    public static func timeText(_ time: Timestamp) -> String {
        Timestamp(seconds: time.seconds).rfc3339
    }

    static func failure(_ error: DatabaseError, _ context: String) -> VaultError {
        switch error.resultCode {
        case .SQLITE_CONSTRAINT: return VaultError(.malformedDocument, "\(context): \(error.message ?? "a constraint failed")")
        case .SQLITE_NOTADB: return VaultError(.malformedDocument, "\(context): the file is not a database")
        default: return VaultError(.io, "\(context): \(error.message ?? "\(error)")")
        }
    }

    /// Runs `body` in one IMMEDIATE transaction: the write lock is taken at the start, so two
    /// revokers never interleave. `commit` false rolls back (dry runs, refusals). On a read-only
    /// registry the transaction is deferred and can only read (and fill temporary tables).
    func transaction<T>(_ body: (Database) throws -> (T, commit: Bool)) throws -> T {
        do {
            return try database.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(readOnly ? .deferred : .immediate) {
                    let (value, commit) = try body(db)
                    result = value
                    return commit ? .commit : .rollback
                }
                return result!
            }
        } catch let error as DatabaseError {
            throw Self.failure(error, "the registry '\(path)'")
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try database.read(body)
        } catch let error as DatabaseError {
            throw Self.failure(error, "the registry '\(path)'")
        }
    }
}

// MARK: - Import

extension DeviceRegistry {
    /// The two files `import` reads.
    public enum ImportKind: Sendable {
        case devices, members
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
    public func importRows(devices: LineSource?, members: LineSource?, now: Timestamp, upsert: Bool = false) throws -> (devices: Int, members: Int) {
        try transaction { db in
            var counts = (devices: 0, members: 0)
            if let devices {
                let insert = try db.makeStatement(sql: """
                    INSERT INTO user_devices (user_did, device_id, device_mls_did, device_name, signature_public_key, key_packages_available,
                        last_seen, registered_at, is_active, revoked_at, revocation_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """ + (upsert ? """
                     ON CONFLICT (user_did, device_id) DO UPDATE SET device_mls_did = excluded.device_mls_did,
                        device_name = coalesce(excluded.device_name, device_name),
                        signature_public_key = excluded.signature_public_key, key_packages_available = excluded.key_packages_available,
                        last_seen = max(coalesce(excluded.last_seen, last_seen), coalesce(last_seen, excluded.last_seen))
                        WHERE user_devices.is_active = 1
                    """ : ""))
                counts.devices = try Self.forEachImportRow(.devices, in: devices, now: now) { row in
                    do {
                        try insert.execute(arguments: StatementArguments(row))
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                        // SQLite may name the signature-key index even when the device itself is
                        // there: ask which it is.
                        let exists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM user_devices WHERE user_did = ? AND device_id = ?)",
                                                       arguments: [row[0], row[1]]) ?? false
                        if exists { throw VaultError.alreadyImported() }
                        if error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                            throw VaultError(.malformedDocument, "this user already has another device with the same signature key")
                        }
                        throw error
                    }
                }
            }
            if let members {
                let insert = try db.makeStatement(sql: """
                    INSERT INTO members (convo_id, member_mls_did, user_did, device_id, joined_at, left_at, is_admin) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """ + (upsert ? " ON CONFLICT (convo_id, member_mls_did) DO UPDATE SET is_admin = excluded.is_admin" : ""))
                counts.members = try Self.forEachImportRow(.members, in: members, now: now) { row in
                    do {
                        try insert.execute(arguments: StatementArguments(row))
                    } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                        throw VaultError.alreadyImported()
                    }
                }
            }
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

    /// Parses an import file a line at a time, in the column order of `importRows`' inserts,
    /// and hands each row to `body`. Blank lines are skipped; it returns the number of rows.
    /// Separate from the database so the parser can be fuzzed and tested on its own.
    public static func forEachImportRow(_ kind: ImportKind, in file: (name: String, bytes: [UInt8]), now: Timestamp,
                                        _ body: ([DatabaseValue]) throws -> Void) throws -> Int {
        try forEachImportRow(kind, in: (file.name, { try LineReader.forEachLine(in: file.bytes, name: file.name, $0) }), now: now, body)
    }

    public static func forEachImportRow(_ kind: ImportKind, in file: LineSource, now: Timestamp,
                                        _ body: ([DatabaseValue]) throws -> Void) throws -> Int {
        var count = 0
        try file.forEachLine { number, line in
            guard line.contains(where: { ![0x20, 0x09, 0x0d].contains($0) }) else { return }
            do {
                var reader = try JSONObjectReader(JSONValue(parsing: Array(line), what: "the line"), path: "")
                let row = switch kind {
                case .devices: try deviceRow(&reader, now: now)
                case .members: try memberRow(&reader, now: now)
                }
                try reader.finish()
                try body(row)
            } catch let error as VaultError {
                throw VaultError(error.code == .alreadyImported ? .alreadyImported : .malformedDocument, "\(file.name) line \(number): \(error.reason)",
                                 hint: error.code == .alreadyImported ? nil : "nothing was imported")
            } catch let error as DatabaseError {
                // A constraint is the line's fault; anything else (a full disk, a file size
                // limit) is the system's, whichever line happened to meet it.
                let code: VaultError.Code = error.resultCode == .SQLITE_CONSTRAINT ? .malformedDocument : .io
                throw VaultError(code, "\(file.name) line \(number): \(error.message ?? "\(error)")", hint: "nothing was imported")
            }
            count += 1
        }
        return count
    }

    private static func deviceRow(_ reader: inout JSONObjectReader, now: Timestamp) throws -> [DatabaseValue] {
        let key = try reader.string("signature_public_key")
        guard let keyBytes = Hex.decode(key), !keyBytes.isEmpty else { throw reader.invalid("signature_public_key", "should be hex") }
        return [
            try reader.text("user_did").databaseValue, try reader.text("device_id").databaseValue, try reader.text("device_mls_did").databaseValue,
            try reader.optionalText("device_name").databaseValue, Data(keyBytes).databaseValue,
            (try reader.optionalInt("key_packages_available") ?? 0).databaseValue,
            try reader.optionalTime("last_seen").databaseValue, (try reader.optionalTime("registered_at") ?? timeText(now)).databaseValue,
            ((try reader.optionalBool("is_active") ?? true) ? 1 : 0).databaseValue, try reader.optionalTime("revoked_at").databaseValue,
            try reader.optionalText("revocation_reason").databaseValue,
        ]
    }

    private static func memberRow(_ reader: inout JSONObjectReader, now: Timestamp) throws -> [DatabaseValue] {
        [
            try reader.text("convo_id").databaseValue, try reader.text("member_mls_did").databaseValue,
            try reader.text("user_did").databaseValue, try reader.text("device_id").databaseValue,
            (try reader.optionalTime("joined_at") ?? timeText(now)).databaseValue, try reader.optionalTime("left_at").databaseValue,
            ((try reader.optionalBool("is_admin") ?? false) ? 1 : 0).databaseValue,
        ]
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

    mutating func optionalTime(_ key: String) throws -> String? {
        guard try optionalString(key) != nil else { return nil }
        return DeviceRegistry.timeText(try timestamp(key))
    }

    mutating func optionalBool(_ key: String) throws -> Bool? {
        guard let value = optional(key) else { return nil }
        guard case .bool(let flag) = value else { throw invalid(key, "should be true or false") }
        return flag
    }
}
