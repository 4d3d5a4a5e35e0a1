import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultSQLite

/// The registry in a SQLite file, through ``SQLiteDatabase`` (VaultSQLite, SQLite's one owner):
/// the embedded default (demo, tests, small deployments). Each writing transaction is
/// IMMEDIATE, so it holds the database's one write lock from its start: concurrent revokers
/// wait for each other (busy timeout) instead of losing updates.
///
/// The journal is SQLite's rollback journal, not WAL: a read-only connection to a WAL database
/// creates `-wal` and `-shm` files beside it and leaves them, so a dry run or `log` would change
/// the file system. With the rollback journal, reading changes nothing (issue 16). A registry
/// the chat app keeps in WAL mode is read as it is, and its side files are tidied after (see
/// ``removeSideFilesThisReadMade()``).
final class SQLiteRegistryEngine: RegistryEngine {
    let dialect = RegistryDialect.sqlite
    let schema: RegistrySchema
    private let database: SQLiteDatabase
    private let path: String
    private let readOnly: Bool
    /// Family Medical's ids are guarded (step fm2 recorded): a registry from before it, read
    /// without writing (which would bring it up to date), lacks those guards by its age, not by
    /// anyone's hand, and `log --verify` must not call that tampering (a review).
    private let idsGuarded: Bool
    /// A read-only connection found a WAL database without its `-wal` and `-shm` files, and
    /// SQLite made them for the read: the database file's identity then, so the tidying
    /// touches that file and no other put in its place meanwhile.
    private let madeSideFiles: FileIdentity?

    /// How long a statement waits for another revoker's (or the app's) lock.
    private static let busyTimeout = 60

    init(path: String, access: DeviceRegistry.Access, schema asked: RegistrySchema?) throws {
        self.path = path
        readOnly = access == .readOnly
        // SQLite would open a FIFO and wait on its first read forever (issue 37). A side file
        // that is not a regular file is refused as any side file not SQLite's is, when the
        // database is opened (`SideFiles`, exit 4), as for commands that write.
        try AtomicFile.requireRegularFileIfPresent(path, what: "registry")
        guard access == .create || FileManager.default.fileExists(atPath: path) else {
            throw VaultError.noRegistry(path)
        }
        if access == .create, !FileManager.default.fileExists(atPath: path) {
            // Side files not SQLite's refuse the run before the registry is made: refused after,
            // it said "nothing was opened" beside a registry it had just written (a hostile trial).
            try SideFiles.claim(path)
            try Self.createWhole(path, asked ?? .catbird)
        }
        let opening: SQLiteDatabase.Access = switch access {
        case .readOnly: .readOnly
        case .create: .create
        case .readWrite: .readWrite
        }
        let sideFilesBefore = Self.sideFiles(path).contains { Glibc.access($0, F_OK) == 0 }
        do {
            let tables: Set<String>
            do {
                (database, tables) = try Self.openListingTables(path, opening)
            } catch let failure as SQLiteDatabase.Failure where readOnly && failure.needsRollback {
                // A journal SQLite finds hot (no writer holding it) is rolled back by a writing
                // command only: a rollback rewrites the database, and a journal that is another
                // copy's (a registry restored from a backup beside the crashed copy's journal)
                // rolled back by `registry devices` shrank and broke the registry (a hostile
                // trial). A live writer's journal does not stop a reader.
                throw VaultError.registryNeedsRollback(path)
            }
            madeSideFiles = readOnly && !sideFilesBefore && Self.sideFiles(path).contains { Glibc.access($0, F_OK) == 0 } ? FileIdentity.of(existing: path) : nil
            // The schema is the one its first step names (an empty file is made one now).
            let applied = tables.contains(SQLiteMigrations.table)
                ? Set(try database.read { try $0.strings("SELECT identifier FROM \(SQLiteMigrations.table)") }) : []
            if applied.contains(RegistryMigration.familyMedical), applied.contains(RegistryMigration.v1) { throw VaultError.registryOfTwoSchemas(path) }
            schema = applied.contains(RegistryMigration.familyMedical) ? .familyMedical : applied.contains(RegistryMigration.v1) ? .catbird : asked ?? .catbird
            idsGuarded = schema == .familyMedical && (!readOnly || applied.contains(RegistryMigration.familyMedicalLowerCaseIDs))
            let registryTables = Self.tables(schema)
            guard registryTables.isSubset(of: tables) || (access == .create && tables.isEmpty) else {
                throw VaultError.notARegistry(path, missing: registryTables.subtracting(tables).sorted(), empty: tables.isEmpty)
            }
            if access == .create, let asked, schema != asked { throw VaultError.registryHasAnotherSchema(path, has: schema, asked: asked) }
            guard !readOnly else { return }
            try database.withConnection { connection in
                if try connection.first("PRAGMA journal_mode", [], { try $0.text(0) }) == "wal" { try connection.execute("PRAGMA journal_mode = DELETE") }
            }
            try Self.migrations(schema).migrate(database)
        } catch let failure as SQLiteDatabase.Failure {
            throw Self.failure(failure, "cannot open the registry '\(path)'")
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
        database.close()
        guard FileIdentity.of(existing: path) == madeSideFiles else { return }
        guard let tidying = try? SQLiteDatabase(path: path, access: .readWrite) else { return }
        _ = try? tidying.read { try $0.first("SELECT count(*) FROM sqlite_master") { $0.int(0) } }
        tidying.close()
    }

    /// Opens the registry and lists its tables.
    ///
    /// A revocation reads and rewrites rows scattered over the whole file, and its memory must
    /// not grow with the registry (issue 48: ≤ 64 MiB at 1,000,000 devices and at 10,000,000).
    /// SQLite's caches are fixed: 8 MiB of pages for the registry and 8 MiB for the temporary
    /// tables (whose sorts are bounded by them too), and the file is read with read(), not
    /// through a memory map, whose pages count as the process's own as they are touched.
    /// Measured revoking 100,000 of 1,000,000 devices: 47 MiB at peak and 13.8 s, where
    /// 64 and 128 MiB caches and a 4 GiB map took 1,252 MiB and 13.7 s, and 16 MiB caches
    /// without the map 81 MiB and 14.3 s (docs/performance.md). Temporary tables stay in
    /// files: an import stages millions of rows in them.
    private static func openListingTables(_ path: String, _ access: SQLiteDatabase.Access) throws -> (SQLiteDatabase, Set<String>) {
        let database = try SQLiteDatabase(path: path, access: access, busyTimeout: busyTimeout)
        try database.withConnection { try $0.execute("PRAGMA cache_size = -8192; PRAGMA temp.cache_size = -8192; PRAGMA mmap_size = 0") }
        return (database, try database.read { Set(try $0.strings("SELECT name FROM sqlite_master WHERE type = 'table'")) })
    }

    /// A new registry appears whole or not at all: the schema is built in memory and the
    /// finished database is written like every other output of the suite (AtomicFile), so a
    /// killed or failed `init` leaves no half-made file behind (Tests/Interop/test_faults.py).
    private static func createWhole(_ path: String, _ schema: RegistrySchema) throws {
        let bytes: [UInt8]
        do {
            let memory = try SQLiteDatabase.inMemory()
            try migrations(schema).migrate(memory)
            bytes = try memory.withConnection { try $0.serialize() }
        } catch let failure as SQLiteDatabase.Failure {
            throw Self.failure(failure, "could not build the registry '\(path)'")
        }
        do {
            try AtomicFile.write(bytes, to: path, mode: AtomicFile.publicFileMode, exclusive: true)
        } catch let error as VaultError where error.code == .outputExists {
            // Another init made it meanwhile: open that one.
        }
    }

    /// The tables a registry of `schema` has, whatever its age.
    private static func tables(_ schema: RegistrySchema) -> Set<String> {
        schema == .catbird ? ["user_devices", "members", "revocations", SQLiteMigrations.table] : ["user_devices", "revocations", SQLiteMigrations.table]
    }

    /// A schema's steps, in the order they grew; PostgresRegistryEngine has the same steps by
    /// name. Family Medical's table has no conversations: no members (v3), and its own first step.
    static func migrations(_ schema: RegistrySchema) -> SQLiteMigrations {
        switch schema {
        case .catbird: catbirdMigrations
        case .familyMedical: SQLiteMigrations(familyMedicalMigrations)
        }
    }

    private static let familyMedicalMigrations: [(name: String, sql: String)] = [
        // The log found by device: where a device's row keeps no revocation, the list of
        // devices reads when and why from the log.
        (RegistryMigration.familyMedical, familyMedicalDevices + revocationLog + ";\nCREATE INDEX revocations_by_device ON revocations (device_id);"),
    ] + catbirdMigrations.steps.filter { [RegistryMigration.v2, RegistryMigration.v4].contains($0.name) } + [
        // Rows written before the ids were guarded are written in the one form, from any
        // spelling PostgreSQL's uuid reads (any case, braces, `urn:uuid:`, no hyphens): the same
        // UUID. Each column on its own: a device id whose form another row already has (`OR
        // IGNORE`), or that is no UUID at all, is left for a person, and its user's id is still
        // written, so `--user` takes that device too (a trial: the row was skipped whole, and a
        // revoke of its user left it active). Stopping the step there would stop every command
        // that writes, an urgent revoke too, until someone edited the file by hand (a review).
        // Triggers of the guards' names, made by hand or by this step before its record was
        // lost, are dropped first: they would refuse the rewriting, and collide with the new
        // ones (a trial: the step then failed at every writing command, init's too).
        (RegistryMigration.familyMedicalLowerCaseIDs, """
            \(lowerCaseIDs.map { "DROP TRIGGER IF EXISTS \($0.name);" }.joined(separator: "\n"))
            UPDATE user_devices SET user_id = \(canonicalUUID("user_id"))
                WHERE user_id <> \(canonicalUUID("user_id")) AND \(canonicalUUID("user_id")) GLOB '\(uuidPattern)';
            UPDATE OR IGNORE user_devices SET device_id = \(canonicalUUID("device_id"))
                WHERE device_id <> \(canonicalUUID("device_id")) AND \(canonicalUUID("device_id")) GLOB '\(uuidPattern)';
            \(RegistryGuard.statements(on: "user_devices", among: lowerCaseIDs))
            """),
    ]

    /// Seed 002's table, with ids and times as text (SQLite has neither type): a device's id is
    /// its key, whoever its user; the index finds a user's devices and a device by its two ids.
    private static let familyMedicalDevices = """
        CREATE TABLE user_devices (
            device_id TEXT NOT NULL PRIMARY KEY,
            user_id TEXT NOT NULL,
            device_name TEXT NOT NULL,
            device_type TEXT,
            first_seen_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1))
        ) WITHOUT ROWID;
        CREATE INDEX user_devices_by_user ON user_devices (user_id, device_id);
        CREATE INDEX user_devices_active_by_last_seen_at ON user_devices (last_seen_at) WHERE is_active = 1;

        """

    private static let catbirdDevices = """
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
            """

    /// The revocation log, the same in every schema.
    private static let revocationLog = """
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
            \(RegistryGuard.statements(on: "revocations", among: allGuards))
            """

    private static let catbirdMigrations = SQLiteMigrations([
        (RegistryMigration.v1, catbirdDevices + revocationLog),
        // Each batch's operations, kept in the transaction that revokes it, so they can be
        // written again at any time (issue 16: a failed --ops after the commit lost them).
        (RegistryMigration.v2, """
            CREATE TABLE batch_operations (
                batch_id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                operation TEXT NOT NULL,
                PRIMARY KEY (batch_id, seq)
            ) WITHOUT ROWID;
            \(RegistryGuard.statements(on: "batch_operations", among: allGuards))
            """),
        // A revoked device cannot join a conversation (issue 13).
        (RegistryMigration.v3, RegistryGuard.statements(on: "members", among: allGuards)),
        // Each batch's record, chained by hash to the one before it: who ran it and a digest of
        // its rows (docs/device-registry.md, "The chained log").
        (RegistryMigration.v4, """
            \(RegistryMigration.chainedBatches(integer: "INTEGER"))
            \(RegistryGuard.statements(on: "revocation_batches", among: allGuards))
            \(RegistryGuard.statements(on: "revocation_chain_start", among: allGuards))
            """),
    ])

    // MARK: Guards

    /// The triggers that keep a registry's rules (``RegistryGuard``). SQLite's catalog keeps
    /// each statement as it was given.
    var guards: [RegistryGuard] { RegistryGuard.of(schema, among: Self.allGuards) + (idsGuarded ? Self.lowerCaseIDs : []) }

    /// Family Medical's ids in the one spelling the rules compare, a UUID in lower case with its
    /// hyphens, as `import` writes them (``DeviceTable/canonicalUUID(_:)``). SQLite keeps
    /// whatever text a row is given, and a row written by hand in capitals was neither revoked
    /// with its user ("nothing to do") nor found by its id as `registry devices` lists it (a
    /// hostile trial), where PostgreSQL's UUID type compares every spelling alike. Catbird's
    /// ids are the app's text, case and all.
    private static let lowerCaseIDs: [RegistryGuard] = [("insert", "INSERT"), ("update", "UPDATE OF device_id, user_id")].map { name, event in
        RegistryGuard(name: "user_devices_ids_are_lower_case_\(name)", table: "user_devices", sql: """
            CREATE TRIGGER user_devices_ids_are_lower_case_\(name) BEFORE \(event) ON user_devices
                WHEN NOT (typeof(NEW.device_id) = 'text' AND NEW.device_id GLOB '\(uuidPattern)' AND typeof(NEW.user_id) = 'text' AND NEW.user_id GLOB '\(uuidPattern)')
                BEGIN SELECT RAISE(ABORT, 'a Family Medical id is a UUID kept in lower case'); END
            """)
    }

    /// A UUID in lower case with its hyphens, as GLOB matches it.
    private static let uuidPattern = [8, 4, 4, 4, 12].map { String(repeating: "[0-9a-f]", count: $0) }.joined(separator: "-")

    /// A column's UUID in that form, from any spelling PostgreSQL's uuid reads (any case,
    /// braces, `urn:uuid:`, no hyphens); other text comes out changed but not a UUID.
    private static func canonicalUUID(_ column: String) -> String {
        let bare = "replace(replace(replace(lower(\(column)), 'urn:uuid:', ''), '{', ''), '}', '')"
        return "(CASE WHEN length(\(bare)) = 32 AND instr(\(bare), '-') = 0 THEN substr(\(bare), 1, 8) || '-' || substr(\(bare), 9, 4) || '-' || "
            + "substr(\(bare), 13, 4) || '-' || substr(\(bare), 17, 4) || '-' || substr(\(bare), 21) ELSE \(bare) END)"
    }

    private static let allGuards: [RegistryGuard] = appendOnly("revocations", "revocations_are_append_only", "the revocation log is append-only")
        + appendOnly("batch_operations", "batch_operations_are_append_only", "the operations log is append-only")
        + [
            // SQLite triggers fire on one event each: the same rule for an insert and for an
            // update that re-opens a membership.
            RegistryGuard(name: "members_need_an_active_device_insert", table: "members",
                          sql: "CREATE TRIGGER members_need_an_active_device_insert BEFORE INSERT ON members \(activeDeviceRule)"),
            RegistryGuard(name: "members_need_an_active_device_update", table: "members",
                          sql: "CREATE TRIGGER members_need_an_active_device_update BEFORE UPDATE OF left_at, user_did, device_id ON members \(activeDeviceRule)"),
        ]
        + appendOnly("revocation_batches", "revocation_batches_are_append_only", "the revocation log is append-only")
        + appendOnly("revocation_chain_start", "revocation_chain_start_is_fixed", "the revocation log is append-only")

    /// A table's two guards against UPDATE and DELETE, `prefix_update` and `prefix_delete`.
    private static func appendOnly(_ table: String, _ prefix: String, _ message: String) -> [RegistryGuard] {
        ["update", "delete"].map { event in
            RegistryGuard(name: "\(prefix)_\(event)", table: table, sql: """
                CREATE TRIGGER \(prefix)_\(event) BEFORE \(event.uppercased()) ON \(table)
                    BEGIN SELECT RAISE(ABORT, '\(message)'); END
                """)
        }
    }

    private static let activeDeviceRule = """
        WHEN NEW.left_at IS NULL AND EXISTS (SELECT 1 FROM user_devices d
            WHERE d.user_did = NEW.user_did AND d.device_id = NEW.device_id AND NOT d.is_active)
        BEGIN SELECT RAISE(ABORT, 'a revoked device cannot join a conversation'); END
        """

    func catalogTriggers(_ session: RegistrySession) throws -> [CatalogTrigger] {
        try session.rows("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'", []).map {
            CatalogTrigger(name: $0.text("name"), table: $0.text("tbl_name"), relation: nil, enabled: true, firesSomewhere: true, definition: $0.text("sql"),
                           functionBody: "")
        }
    }

    func restore(_ guards: [RegistryGuard], _ session: RegistrySession) throws {
        for guardian in guards {
            try session.execute("DROP TRIGGER IF EXISTS \(guardian.quotedName)")
            if !guardian.isAdded { try session.execute(guardian.sql) }
        }
    }

    /// SQLite's failure in the registry's terms: a constraint the data broke and a file that is
    /// not a database are the input's fault; anything else is SQLite's (a lock held past the
    /// busy timeout, a full disk).
    static func failure(_ failure: SQLiteDatabase.Failure, _ context: String) -> VaultError {
        if failure.isConstraint { return VaultError.registryConstraint(context, failure.message) }
        if failure.isNotADatabase { return VaultError.registryNotADatabase(context) }
        return VaultError.sqliteFailure(context, failure)
    }

    func transaction<T>(writing: Bool, retrying: Bool, _ body: (RegistrySession) throws -> (T, commit: Bool)) throws -> T {
        do {
            // A reading transaction is deferred: it takes no write lock, and on a read-only
            // connection it can still fill temporary tables.
            return try database.transaction(writing && !readOnly ? .immediate : .deferred) { connection in
                try body(Session(connection: connection))
            }
        } catch let failure as SQLiteDatabase.Failure {
            throw Self.failure(failure, "the registry '\(path)'")
        }
    }

    private struct Session: RegistrySession {
        let connection: SQLiteDatabase.Connection

        func execute(_ sql: String, _ arguments: [RegistryValue]) throws {
            try connection.execute(sql, arguments.map(Self.sqliteValue))
        }

        func change(_ sql: String, _ arguments: [RegistryValue]) throws -> Int {
            try connection.execute(sql, arguments.map(Self.sqliteValue))
            return connection.changes
        }

        func rows(_ sql: String, _ arguments: [RegistryValue]) throws -> [RegistryRow] {
            var rows: [RegistryRow] = []
            try eachRow(sql, arguments) { rows.append($0) }
            return rows
        }

        func eachRow(_ sql: String, _ arguments: [RegistryValue], _ body: (RegistryRow) throws -> Void) throws {
            var columns: [String]?
            try connection.forEach(sql, arguments.map(Self.sqliteValue)) { row in
                let names = columns ?? (0..<row.columnCount).map(row.name)
                columns = names
                try body(RegistryRow(columns: names, values: try (0..<names.count).map { Self.registryValue(try row.value($0)) }))
            }
        }

        /// Stepped through SQLite's own calls, as ``load(_:columns:_:)``: no value made a column.
        func forEachRow(_ sql: String, _ arguments: [RegistryValue], _ row: ((Int) -> UnsafeRawBufferPointer) throws -> Void) throws {
            try connection.forEach(sql, arguments.map(Self.sqliteValue)) { current in
                // A column SQLite could not convert (out of memory) fails the row once it is read.
                var failure: Error?
                try row { index in
                    do {
                        return try current.textBytes(index)
                    } catch {
                        failure = failure ?? error
                        return UnsafeRawBufferPointer(start: nil, count: 0)
                    }
                }
                if let failure { throw failure }
            }
        }

        /// A failed CREATE INDEX changes nothing in SQLite: no savepoint is needed.
        func createUniqueIndex(_ sql: String) throws -> Bool {
            do {
                try connection.execute(sql)
                return true
            } catch let failure as SQLiteDatabase.Failure where failure.isUniqueConstraint {
                return false
            }
        }

        /// One prepared insert, bound and stepped for each row (a 100,000-device batch, an import).
        func load(_ table: String, columns: [String], _ produce: (([RegistryValue]) throws -> Void) throws -> Void) throws {
            // The table and column names are the rules' own constants; the values are bound.
            let sql = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            try connection.prepare(sql) { insert in
                defer { insert.reset() }
                try produce { row in
                    insert.reset()
                    for (index, value) in row.enumerated() { try insert.bind(Self.sqliteValue(value), at: index + 1) }
                    while try insert.step() != nil {}
                }
            }
        }

        static func sqliteValue(_ value: RegistryValue) -> SQLiteValue {
            switch value {
            case .null: .null
            case .int(let number): .integer(Int64(number))
            case .text(let text), .time(let text): .text(text)
            case .bytes(let bytes): .blob(bytes)
            case .bool(let flag): .integer(flag ? 1 : 0)
            }
        }

        static func registryValue(_ value: SQLiteValue) -> RegistryValue {
            switch value {
            case .null: .null
            case .integer(let number): .int(Int(number))
            // A REAL where the schema has none (a registry edited by hand): its whole part.
            case .real(let number): .int(Int(exactly: number.rounded(.towardZero)) ?? 0)
            case .text(let text): .text(text)
            case .blob(let bytes): .bytes(bytes)
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
    /// Each revocation batch names its operator and is chained by hash to the one before it
    /// (issue 46), so an edited, deleted or inserted row of the log is found.
    static let v4 = "v4: chained revocation batches"
    static let all = [v1, v2, v3, v4]
    /// Family Medical's table and the revocation log (issue 47): its registry has no members
    /// (v3), and this step's name is how it is known for one.
    static let familyMedical = "fm1: Family Medical devices, revocation log"
    /// Family Medical's ids kept in lower case by the registry itself (SQLite only: PostgreSQL's
    /// ids are UUIDs).
    static let familyMedicalLowerCaseIDs = "fm2: Family Medical ids in lower case"

    /// v4's tables, alike on both engines but for the name of a 64-bit integer (each engine
    /// adds the triggers that keep them append-only, in its own words).
    static func chainedBatches(integer: String) -> String {
        """
        CREATE TABLE revocation_batches (
            seq \(integer) PRIMARY KEY,
            batch_id TEXT NOT NULL UNIQUE,
            recorded_at TEXT NOT NULL,
            operator TEXT NOT NULL,
            signer TEXT,
            rows_digest TEXT NOT NULL,
            operations_digest TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL,
            signature TEXT
        );
        CREATE TABLE revocation_chain_start (first_revocation_id \(integer) NOT NULL);
        INSERT INTO revocation_chain_start SELECT coalesce(max(id), 0) + 1 FROM revocations;
        """
    }

    /// A schema's steps.
    static func all(_ schema: RegistrySchema) -> [String] { schema == .catbird ? all : [familyMedical, v2, v4] }
}

extension VaultError {
    /// A constraint of the registry's schema refused a change (a trigger's rule, a key
    /// given twice), in SQLite's words.
    static func registryConstraint(_ context: String, _ message: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(context): \(message)", file: file, line: line)
    }

    /// The registry file is not an SQLite database.
    static func registryNotADatabase(_ context: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(context): the file is not a database", file: file, line: line)
    }

    /// SQLite could not serialise the registry built in memory (out of memory).
    static func registryNotBuiltInMemory(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "could not build the registry '\(path)' in memory", file: file, line: line)
    }
}
