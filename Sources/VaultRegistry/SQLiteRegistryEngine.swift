import FoundationEssentials
import Glibc
internal import GRDB
internal import GRDBSQLite
import VaultCore

/// The registry in a SQLite file, through GRDB: the embedded default (demo, tests, small
/// deployments). Each writing transaction is IMMEDIATE, so it holds the database's one write
/// lock from its start: concurrent revokers wait for each other (busy timeout) instead of
/// losing updates.
///
/// The journal is SQLite's rollback journal, not WAL: a read-only connection to a WAL database
/// creates `-wal` and `-shm` files beside it and leaves them, so a dry run or `log` would change
/// the file system. With the rollback journal, reading changes nothing (issue 16). A registry
/// the chat app keeps in WAL mode is read as it is, and its side files are tidied after (see
/// ``removeSideFilesThisReadMade()``).
final class SQLiteRegistryEngine: RegistryEngine {
    let dialect = RegistryDialect.sqlite
    private let database: DatabaseQueue
    private let path: String
    private let readOnly: Bool
    /// A read-only connection found a WAL database without its `-wal` and `-shm` files, and
    /// SQLite made them for the read: the database file's identity then, so the tidying
    /// touches that file and no other put in its place meanwhile.
    private let madeSideFiles: FileIdentity?

    init(path: String, access: DeviceRegistry.Access) throws {
        self.path = path
        readOnly = access == .readOnly
        // SQLite would open a FIFO and wait on its first read forever (issue 37).
        try AtomicFile.requireRegularFileIfPresent(path, what: "registry")
        for side in FileSet.databaseSideFiles(of: path, owner: "the registry") {
            try AtomicFile.requireRegularFileIfPresent(side.path, what: side.label)
        }
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
        // A revocation reads and rewrites rows scattered over the whole file: with SQLite's
        // default 2 MiB page cache, pages are read again and again, and dirty ones spill to the
        // file before the commit. The cache grows only as pages are touched, up to 64 MiB; a
        // larger one was no faster (512 MiB: the same 9 s for 100,000 of 1,000,000 devices, with
        // 780 MiB resident instead of 300). Temporary tables have a cache of their own, as small
        // by default: the 500,000 memberships a large revoke closes spilled it, a second of the
        // revoke; 128 MiB holds them. (Temporary tables stay in files: an import stages
        // millions of rows in them.)
        // Pages are read through a memory map of the file (as much as SQLite maps, 2 GiB as
        // Debian builds it) rather than a read() each into the cache: half a second of a 9 s
        // revoke, in the selection and the members UPDATE. Writes still go through the journal
        // and write(), so a crash rolls back as before; the cost is that a read error on a
        // mapped page (a failing disk, a file truncated or on a network file system) ends the
        // process (SIGBUS) instead of failing the statement, which the journal then undoes.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -65536; PRAGMA temp.cache_size = -131072; PRAGMA mmap_size = 4294967296")
        }
        let sideFilesBefore = Self.sideFiles(path).contains { Glibc.access($0, F_OK) == 0 }
        do {
            let tables: Set<String>
            do {
                (database, tables) = try Self.openListingTables(path, configuration)
            } catch let error as DatabaseError where readOnly && error.extendedResultCode == .SQLITE_READONLY_ROLLBACK {
                // Only a journal SQLite itself finds hot (a run killed mid-transaction, no writer
                // holding it) stops a reader; a live writer's journal does not.
                try Self.rollBackHotJournal(path)
                (database, tables) = try Self.openListingTables(path, configuration)
            }
            madeSideFiles = readOnly && !sideFilesBefore && Self.sideFiles(path).contains { Glibc.access($0, F_OK) == 0 } ? FileIdentity.of(existing: path) : nil
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

    deinit { removeSideFilesThisReadMade() }

    private static func sideFiles(_ path: String) -> [String] { [path + "-wal", path + "-shm"] }

    /// A read-only connection to a WAL database makes its `-wal` and `-shm` files and cannot
    /// remove them when it closes (only a connection that may write checkpoints and deletes
    /// them), so `log` or a dry run left two files behind. After the read, a connection that
    /// may write opens the same file, reads one row of the schema and closes: as the last
    /// connection, SQLite itself checkpoints the empty log (writing nothing to the database)
    /// and deletes both; while the chat app or another reader has the database open, SQLite
    /// leaves them, as they are theirs too (two reading commands at once may then leave them,
    /// as the app's next close removes them). The files are never unlinked by name here.
    private func removeSideFilesThisReadMade() {
        guard let madeSideFiles else { return }
        try? database.close()
        guard FileIdentity.of(existing: path) == madeSideFiles else { return }
        guard let tidying = try? DatabaseQueue(path: path) else { return }
        _ = try? tidying.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master") }
        try? tidying.close()
    }

    private static func openListingTables(_ path: String, _ configuration: Configuration) throws -> (DatabaseQueue, Set<String>) {
        let database = try DatabaseQueue(path: path, configuration: configuration)
        return (database, try database.read { db in try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")) })
    }

    /// A run killed mid-transaction leaves its rollback journal beside the database ("hot"):
    /// the next connection must roll it back, which a read-only one cannot do
    /// (SQLITE_READONLY_ROLLBACK), so every reading command failed with "attempt to write a
    /// readonly database" until a writing one ran. A reading command that meets it rolls it
    /// back through a connection that may write and only reads (SQLite rolls back on the first
    /// read), then reads again; where it may not write, it says how.
    private static func rollBackHotJournal(_ path: String) throws {
        guard access(path, R_OK | W_OK) == 0, access(OutputLocation.split(path).folder, W_OK) == 0 else {
            throw VaultError.registryNeedsRollback(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            _ = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master") }
        } catch let error as DatabaseError {
            throw failure(error, "cannot roll back the unfinished transaction of the registry '\(path)'")
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
                    throw VaultError.registryNotBuiltInMemory(path)
                }
                defer { sqlite3_free(data) }
                return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
            }
        } catch let error as DatabaseError {
            throw failure(error, "could not build the registry '\(path)'")
        }
        do {
            try AtomicFile.write(bytes, to: path, mode: AtomicFile.publicFileMode, exclusive: true)
        } catch let error as VaultError where error.code == .outputExists {
            // Another init made it meanwhile: open that one.
        }
    }

    /// The schema, in the order it grew; PostgresRegistryEngine has the same steps by name.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(RegistryMigration.v1) { db in
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
        migrator.registerMigration(RegistryMigration.v2) { db in
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
        migrator.registerMigration(RegistryMigration.v3) { db in
            // SQLite triggers fire on one event each: the same rule for an insert and for an
            // update that re-opens a membership.
            let refusal = """
                WHEN NEW.left_at IS NULL AND EXISTS (SELECT 1 FROM user_devices d
                    WHERE d.user_did = NEW.user_did AND d.device_id = NEW.device_id AND NOT d.is_active)
                BEGIN SELECT RAISE(ABORT, 'a revoked device cannot join a conversation'); END;
                """
            try db.execute(sql: """
                CREATE TRIGGER members_need_an_active_device_insert BEFORE INSERT ON members \(refusal)
                CREATE TRIGGER members_need_an_active_device_update BEFORE UPDATE OF left_at, user_did, device_id ON members \(refusal)
                """)
        }
        return migrator
    }()

    static func failure(_ error: DatabaseError, _ context: String) -> VaultError {
        switch error.resultCode {
        case .SQLITE_CONSTRAINT: return VaultError(.malformedDocument, "\(context): \(error.message ?? "a constraint failed")")
        case .SQLITE_NOTADB: return VaultError(.malformedDocument, "\(context): the file is not a database")
        default: return VaultError(.io, "\(context): \(error.message ?? "\(error)")")
        }
    }

    func transaction<T>(writing: Bool, retrying: Bool, _ body: (RegistrySession) throws -> (T, commit: Bool)) throws -> T {
        do {
            return try database.writeWithoutTransaction { db in
                var result: T?
                // A reading transaction is deferred: it takes no write lock, and on a read-only
                // connection it can still fill temporary tables.
                try db.inTransaction(writing && !readOnly ? .immediate : .deferred) {
                    let (value, commit) = try body(Session(db: db))
                    result = value
                    return commit ? .commit : .rollback
                }
                return result!
            }
        } catch let error as DatabaseError {
            throw Self.failure(error, "the registry '\(path)'")
        }
    }

    private struct Session: RegistrySession {
        let db: Database

        func execute(_ sql: String, _ arguments: [RegistryValue]) throws {
            try db.execute(sql: sql, arguments: StatementArguments(arguments.map(Self.databaseValue)))
        }

        func rows(_ sql: String, _ arguments: [RegistryValue]) throws -> [RegistryRow] {
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments.map(Self.databaseValue)))
            var rows: [RegistryRow] = []
            var columns: [String]?
            while let row = try cursor.next() {
                if columns == nil { columns = Array(row.columnNames) }
                rows.append(RegistryRow(columns: columns!, values: row.databaseValues.map(Self.registryValue)))
            }
            return rows
        }

        /// Stepped through SQLite's own calls, as ``load(_:columns:_:)``.
        func forEachRow(_ sql: String, _ arguments: [RegistryValue], _ row: ((Int) -> UnsafeRawBufferPointer) throws -> Void) throws {
            let statement = try db.makeStatement(sql: sql)
            try withExtendedLifetime(statement) {
                let handle = statement.sqliteStatement
                defer { sqlite3_reset(handle) }
                for (index, value) in arguments.enumerated() { try check(Self.bind(value, at: Int32(index + 1), to: handle), sql) }
                // The text first, then its length: SQLite's order for a value it may convert. No
                // text for a value that has some means SQLite ran out of memory converting it.
                var outOfMemory = false
                let column = { (index: Int) -> UnsafeRawBufferPointer in
                    let text = sqlite3_column_text(handle, Int32(index)), length = Int(sqlite3_column_bytes(handle, Int32(index)))
                    guard text != nil || length == 0 else {
                        outOfMemory = true
                        return UnsafeRawBufferPointer(start: nil, count: 0)
                    }
                    return UnsafeRawBufferPointer(start: text, count: length)
                }
                while true {
                    let code = sqlite3_step(handle)
                    if code == SQLITE_DONE { return }
                    try check(code, sql, expecting: SQLITE_ROW)
                    try row(column)
                    if outOfMemory { try check(SQLITE_NOMEM, sql) }
                }
            }
        }

        /// A failed CREATE INDEX changes nothing in SQLite: no savepoint is needed.
        func createUniqueIndex(_ sql: String) throws -> Bool {
            do {
                try db.execute(sql: sql)
                return true
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                return false
            }
        }

        /// One prepared insert, bound and stepped through SQLite's own calls: GRDB's arguments
        /// cost more per row than SQLite's insert itself (a 100,000-device batch, an import).
        func load(_ table: String, columns: [String], _ produce: (([RegistryValue]) throws -> Void) throws -> Void) throws {
            let sql = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            let insert = try db.makeStatement(sql: sql)
            // The handle lives as long as GRDB's statement, which finalizes it when released.
            try withExtendedLifetime(insert) {
                let handle = insert.sqliteStatement
                defer { sqlite3_reset(handle) }
                try produce { row in
                    sqlite3_reset(handle)
                    for (index, value) in row.enumerated() { try check(Self.bind(value, at: Int32(index + 1), to: handle), sql) }
                    try check(sqlite3_step(handle), sql, expecting: SQLITE_DONE)
                }
            }
        }

        /// SQLite's result code as GRDB's error, which the engine turns into ours.
        private func check(_ code: Int32, _ sql: String, expecting expected: Int32 = SQLITE_OK) throws {
            guard code != expected else { return }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
        }

        /// SQLite copies what it is given (SQLITE_TRANSIENT, a macro Swift cannot import).
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

        /// Binds one value; sizes past SQLite's 32-bit lengths are refused as SQLITE_TOOBIG.
        private static func bind(_ value: RegistryValue, at index: Int32, to handle: SQLiteStatement) -> Int32 {
            switch value {
            case .null: return sqlite3_bind_null(handle, index)
            case .int(let number): return sqlite3_bind_int64(handle, index, sqlite3_int64(number))
            case .bool(let flag): return sqlite3_bind_int64(handle, index, flag ? 1 : 0)
            case .text(var text), .time(var text):
                // An empty string still binds as text, never as NULL (a nil pointer would).
                return text.withUTF8 { bytes in
                    guard let start = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, transient) }
                    guard let length = Int32(exactly: bytes.count) else { return SQLITE_TOOBIG }
                    return sqlite3_bind_text(handle, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), length, transient)
                }
            case .bytes(let bytes):
                return bytes.withUnsafeBytes { raw in
                    guard let start = raw.baseAddress, !raw.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
                    guard let length = Int32(exactly: raw.count) else { return SQLITE_TOOBIG }
                    return sqlite3_bind_blob(handle, index, start, length, transient)
                }
            }
        }

        static func databaseValue(_ value: RegistryValue) -> DatabaseValue {
            switch value {
            case .null: .null
            case .int(let number): number.databaseValue
            case .text(let text), .time(let text): text.databaseValue
            case .bytes(let bytes): Data(bytes).databaseValue
            case .bool(let flag): (flag ? 1 : 0).databaseValue
            }
        }

        static func registryValue(_ value: DatabaseValue) -> RegistryValue {
            switch value.storage {
            case .null: .null
            case .int64(let number): .int(Int(number))
            case .double(let number): .int(Int(number))
            case .string(let text): .text(text)
            case .blob(let data): .bytes(Array(data))
            }
        }
    }
}

/// The registry's schema steps, by the names both engines record them under.
enum RegistryMigration {
    static let v1 = "v1: devices, members, revocation log"
    static let v2 = "v2: batch operations"
    /// A revoked device cannot join a conversation: enforced by the registry itself, so an
    /// app that adds a membership while a revocation runs cannot leave one open (issue 13).
    static let v3 = "v3: open memberships need an active device"
    static let all = [v1, v2, v3]
}

extension VaultError {
    /// SQLite could not serialise the registry built in memory (out of memory).
    static func registryNotBuiltInMemory(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "could not build the registry '\(path)' in memory", file: file, line: line)
    }
}
