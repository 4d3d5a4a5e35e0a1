import FoundationEssentials
import Glibc
import Synchronization
import VaultCore

/// The registry in PostgreSQL, through libpq: the chat app's own database, changed while the
/// app runs (issue 13, docs/device-registry.md).
///
/// On an empty database `init` creates the seed's schema exactly (seed 003, types included);
/// on one that already has the app's `user_devices` and `members` it adds only what revocation
/// needs. Either way the additions are versioned migrations, recorded in `registry_migrations`
/// by the same names as SQLite's, applied in one transaction. Writing transactions run at READ
/// COMMITTED with explicit locks (see ``RegistryDialect/postgres``) and are run again when the
/// server aborts one for a deadlock or a serialization failure.
final class PostgresRegistryEngine: RegistryEngine, @unchecked Sendable {
    let dialect = RegistryDialect.postgres
    /// Set once, in init, from what the database records (it reads it in a transaction).
    private(set) var schema: RegistrySchema = .catbird
    private let client: PostgresClient
    private let name: String
    /// libpq connections are not for two threads at once; a tool uses one, tests may share it.
    private let lock = Mutex(())
    /// How often a transaction the server aborted for a conflict is tried again.
    private static let attempts = 20

    init(connection: String, access: DeviceRegistry.Access, schema asked: RegistrySchema?) throws {
        // Named as given once connected (a password in it was refused before), but by what
        // libpq reads of it when it cannot connect: the string may not be a connection string
        // at all, and libpq's own reading is what was tried.
        name = connection
        do {
            client = try PostgresClient(connection: connection)
        } catch let failure as PostgresClient.Failure {
            throw VaultError.cannotConnect(PostgresClient.shown(connection), failure.message)
        }
        let state = try transaction(writing: false, retrying: true) { session in
            (try Self.schemaState(session), false)
        }
        // The schema is the one its first step names; a database not yet a registry becomes
        // the one asked for.
        if state.applied.contains(RegistryMigration.familyMedical), state.applied.contains(RegistryMigration.v1) { throw VaultError.registryOfTwoSchemas(connection) }
        let found: RegistrySchema? = state.applied.contains(RegistryMigration.familyMedical) ? .familyMedical
            : state.applied.contains(RegistryMigration.v1) ? .catbird : nil
        schema = found ?? asked ?? .catbird
        let upToDate = Set(RegistryMigration.all(schema)).isSubset(of: state.applied)
        switch access {
        case .readOnly:
            guard found != nil else { throw notARegistry(state) }
        case .readWrite:
            guard found != nil else { throw notARegistry(state) }
            if !upToDate { try migrate() }
        case .create:
            if let found, let asked, found != asked { throw VaultError.registryHasAnotherSchema(name, has: found, asked: asked) }
            // An up-to-date registry needs nothing: `init` then only checks, and so works for a
            // role that may not create anything (the operator's, docs/device-registry.md).
            if !upToDate { try migrate() }
        }
    }

    private func notARegistry(_ state: SchemaState) -> VaultError {
        let missing = Self.appTables(schema).union(["registry_migrations"]).sorted().filter { !state.tables.contains($0) }
        return VaultError.notARegistry(name, missing: missing.isEmpty ? ["registry_migrations"] : missing, empty: state.tables.isEmpty)
    }

    /// The app's own tables in a schema: the registry adds its log beside them.
    private static func appTables(_ schema: RegistrySchema) -> Set<String> {
        schema == .catbird ? ["user_devices", "members"] : ["user_devices"]
    }

    // MARK: Transactions

    func transaction<T>(writing: Bool, retrying: Bool, _ body: (RegistrySession) throws -> (T, commit: Bool)) throws -> T {
        // One transaction at a time on the one connection.
        var value: T?
        try lock.withLock { _ in value = try transactionHoldingLock(writing: writing, retrying: retrying, body) }
        return value!
    }

    private func transactionHoldingLock<T>(writing: Bool, retrying: Bool, _ body: (RegistrySession) throws -> (T, commit: Bool)) throws -> T {
        var attempt = 1
        while true {
            do {
                // A reader sees one snapshot for all its statements; a writer reads the latest
                // committed rows after taking its locks.
                try client.execute(writing ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ")
                let (value, commit) = try body(Session(client: client))
                try client.execute(commit ? "COMMIT" : "ROLLBACK")
                return value
            } catch let failure as PostgresClient.Failure {
                try? client.execute("ROLLBACK")
                guard retrying, failure.isRetryable, attempt < Self.attempts else { throw error(failure) }
                // Back off a little more each time, with jitter, so two retriers part ways.
                usleep(UInt32.random(in: 1_000...(5_000 * UInt32(attempt))))
                attempt += 1
            } catch {
                try? client.execute("ROLLBACK")
                throw error
            }
        }
    }

    private func error(_ failure: PostgresClient.Failure) -> VaultError {
        // A constraint the data broke (class 23) is the input's fault, as in SQLite; a lock
        // waited for past its minute, a conflict no retry got past, a privilege the role lacks,
        // a connection that may only read and a statement cancelled (the role's
        // statement_timeout) are each said in the registry's words (trials: the server's raw
        // text).
        if failure.isConstraint { return VaultError.registryConstraint("the registry '\(name)'", failure.message) }
        switch failure.sqlState {
        case "55P03": return VaultError.registryBusy(name)
        case "40001", "40P01": return VaultError.registryConflict(name)
        case "42501": return VaultError.registryPrivilegeMissing(name, failure.message)
        case "25006": return VaultError.registryReadOnlyConnection(name)
        case "57014": return VaultError.registryStatementCancelled(name)
        case "3F000": return VaultError.registryNoSchemaSelected(name)
        default: return VaultError.postgresFailure(name, failure)
        }
    }

    private struct Session: RegistrySession {
        let client: PostgresClient

        func execute(_ sql: String, _ arguments: [RegistryValue]) throws {
            if arguments.isEmpty { try client.execute(sql) } else { _ = try client.query(Self.numbered(sql), arguments) }
        }

        func change(_ sql: String, _ arguments: [RegistryValue]) throws -> Int {
            try client.change(Self.numbered(sql), arguments)
        }

        func rows(_ sql: String, _ arguments: [RegistryValue]) throws -> [RegistryRow] {
            let result = try client.query(Self.numbered(sql), arguments)
            return result.rows.map { RegistryRow(columns: result.columns, values: $0) }
        }

        func eachRow(_ sql: String, _ arguments: [RegistryValue], _ body: (RegistryRow) throws -> Void) throws {
            try client.inPieces(Self.numbered(sql), arguments) { piece in
                let decoded = piece.decoded()
                for values in decoded.rows { try body(RegistryRow(columns: decoded.columns, values: values)) }
            }
        }

        func forEachRow(_ sql: String, _ arguments: [RegistryValue], _ row: ((Int) -> UnsafeRawBufferPointer) throws -> Void) throws {
            try client.forEachRow(Self.numbered(sql), arguments, row)
        }

        /// A failed statement aborts PostgreSQL's transaction: the index is tried under a
        /// savepoint, rolled back to on a unique violation (SQLSTATE 23505) only.
        func createUniqueIndex(_ sql: String) throws -> Bool {
            try client.execute("SAVEPOINT registry_unique_index")
            do {
                try client.execute(sql)
            } catch let failure as PostgresClient.Failure where failure.sqlState == "23505" {
                try client.execute("ROLLBACK TO SAVEPOINT registry_unique_index; RELEASE SAVEPOINT registry_unique_index")
                return false
            }
            try client.execute("RELEASE SAVEPOINT registry_unique_index")
            return true
        }

        /// COPY in text format: tab-separated, `\N` for NULL, backslash escapes.
        func load(_ table: String, columns: [String], _ produce: (([RegistryValue]) throws -> Void) throws -> Void) throws {
            try client.copyIn("COPY \(table) (\(columns.joined(separator: ", "))) FROM STDIN") { send in try withoutActuallyEscaping(send) { send in
                var buffer: [UInt8] = []
                buffer.reserveCapacity(1 << 16)
                try produce { row in
                    for (index, value) in row.enumerated() {
                        if index > 0 { buffer.append(0x09) }
                        Self.appendCopyText(value, to: &buffer)
                    }
                    buffer.append(0x0a)
                    if buffer.count >= 1 << 16 {
                        try send(buffer)
                        buffer.removeAll(keepingCapacity: true)
                    }
                }
                if !buffer.isEmpty { try send(buffer) }
            } }
        }

        static func appendCopyText(_ value: RegistryValue, to buffer: inout [UInt8]) {
            func escaped(_ text: String) {
                // Most values have nothing to escape: copied whole.
                if !text.utf8.contains(where: { $0 == 0x5c || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }) {
                    buffer.append(contentsOf: text.utf8)
                    return
                }
                for byte in text.utf8 {
                    switch byte {
                    case 0x5c: buffer += [0x5c, 0x5c]
                    case 0x09: buffer += [0x5c, UInt8(ascii: "t")]
                    case 0x0a: buffer += [0x5c, UInt8(ascii: "n")]
                    case 0x0d: buffer += [0x5c, UInt8(ascii: "r")]
                    default: buffer.append(byte)
                    }
                }
            }
            switch value {
            case .null: buffer += [0x5c, UInt8(ascii: "N")]
            case .int(let number): buffer += Array(String(number).utf8)
            case .text(let text), .time(let text): escaped(text)
            // bytea's hex input form, its backslash escaped for COPY.
            case .bytes(let bytes): buffer += Array("\\\\x\(Hex.encode(bytes))".utf8)
            case .bool(let flag): buffer.append(UInt8(ascii: flag ? "t" : "f"))
            }
        }

        /// The rules' `?` placeholders as PostgreSQL's `$1, $2, …`. Our SQL has no `?` inside
        /// a string literal; quoted text is skipped all the same.
        static func numbered(_ sql: String) -> String {
            var result = "", count = 0, quoted = false
            for character in sql {
                if character == "'" { quoted.toggle() }
                if character == "?", !quoted {
                    count += 1
                    result += "$\(count)"
                } else {
                    result.append(character)
                }
            }
            return result
        }
    }

    // MARK: Schema

    private struct SchemaState {
        var tables: Set<String> = []
        var applied: Set<String> = []
    }

    private static func schemaState(_ session: RegistrySession) throws -> SchemaState {
        var state = SchemaState()
        state.tables = Set(try session.strings("""
            SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
            AND table_name IN ('user_devices', 'members', 'registry_migrations')
            """))
        if state.tables.contains("registry_migrations") {
            state.applied = Set(try session.strings("SELECT name FROM registry_migrations"))
        }
        return state
    }

    /// An arbitrary number of our own: the lock every schema change takes.
    private static let schemaLock = "7527086449296553328"

    /// Brings the schema up to date in one transaction: the seed's tables when the database
    /// has neither, a check that the app's tables are compatible when it has them, then every
    /// migration not yet recorded. Two `init`s at once take turns.
    private func migrate() throws {
        try transaction(writing: true, retrying: true) { session in
            // ALTER TABLE and CREATE INDEX hold the app's writes while they run: give up after a minute of
            // waiting rather than queue the app's traffic behind a long transaction.
            try session.execute("SET LOCAL lock_timeout = '60s'; SELECT pg_advisory_xact_lock(\(Self.schemaLock))")
            var state = try Self.schemaState(session)
            let appTables = state.tables.intersection(Self.appTables(schema))
            if appTables.isEmpty {
                try session.execute(schema == .catbird ? Self.seedSchema : Self.familyMedicalSchema)
            } else {
                let differences = try Self.differences(session, present: appTables, schema: schema)
                guard differences.isEmpty else { throw VaultError.incompatibleRegistry(name, differences: differences) }
            }
            try session.execute("""
                CREATE TABLE IF NOT EXISTS registry_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                """)
            state = try Self.schemaState(session)
            for (migration, sql) in Self.migrations(schema) where !state.applied.contains(migration) {
                try session.execute(sql)
                try session.execute("INSERT INTO registry_migrations (name) VALUES (?)", [.text(migration)])
            }
            return ((), true)
        }
    }

    /// The seed's schema, exactly as seed 003 gives it.
    static let seedSchema = """
        CREATE TABLE user_devices (
            user_did TEXT NOT NULL,
            device_id TEXT NOT NULL,
            device_mls_did TEXT NOT NULL,
            device_name TEXT,
            signature_public_key BYTEA NOT NULL,
            key_packages_available INT DEFAULT 0,
            last_seen TIMESTAMPTZ,
            registered_at TIMESTAMPTZ DEFAULT NOW(),
            PRIMARY KEY (user_did, device_id),
            UNIQUE (user_did, signature_public_key)
        );
        CREATE TABLE members (
            convo_id TEXT NOT NULL,
            member_mls_did TEXT NOT NULL,
            user_did TEXT NOT NULL,
            device_id TEXT NOT NULL,
            joined_at TIMESTAMPTZ DEFAULT NOW(),
            left_at TIMESTAMPTZ,
            is_admin BOOLEAN DEFAULT false,
            PRIMARY KEY (convo_id, member_mls_did),
            FOREIGN KEY (user_did, device_id) REFERENCES user_devices
        );
        """

    /// What revocation adds, by the names SQLite records. Adding a column with a constant
    /// default rewrites no row (PostgreSQL 11 and later); indexes and triggers read rows only.
    /// A schema's steps, by the names SQLite records them under.
    static func migrations(_ schema: RegistrySchema) -> [(String, String)] {
        switch schema {
        case .catbird: catbirdMigrations
        case .familyMedical:
            [(RegistryMigration.familyMedical, familyMedicalAdditions + revocationLog + ";\nCREATE INDEX revocations_by_device ON revocations (device_id);")]
                + catbirdMigrations.filter { [RegistryMigration.v2, RegistryMigration.v4].contains($0.0) }
        }
    }

    /// Seed 002's table, exactly (its reference to the app's `user_profiles` is the app's:
    /// a registry made on an empty database has no profiles to refer to).
    static let familyMedicalSchema = """
        CREATE TABLE user_devices (
            device_id UUID PRIMARY KEY,
            user_id UUID NOT NULL,
            device_name TEXT NOT NULL,
            device_type TEXT,
            first_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
            last_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
            is_active BOOLEAN NOT NULL DEFAULT TRUE
        );
        """

    /// What revocation needs of Family Medical's table: a user's devices and the active ones
    /// by last seen, found by index.
    private static let familyMedicalAdditions = """
        CREATE INDEX IF NOT EXISTS user_devices_by_user ON user_devices (user_id, device_id);
        CREATE INDEX IF NOT EXISTS user_devices_active_by_last_seen_at ON user_devices (last_seen_at) WHERE is_active;

        """

    private static let catbirdAdditions = """
            ALTER TABLE user_devices ADD COLUMN IF NOT EXISTS is_active BOOLEAN NOT NULL DEFAULT true,
                ADD COLUMN IF NOT EXISTS revoked_at TIMESTAMPTZ, ADD COLUMN IF NOT EXISTS revocation_reason TEXT;
            CREATE INDEX IF NOT EXISTS user_devices_by_signature_key ON user_devices (signature_public_key);
            CREATE INDEX IF NOT EXISTS user_devices_active_by_last_seen ON user_devices (last_seen) WHERE is_active;
            CREATE INDEX IF NOT EXISTS members_by_device ON members (user_did, device_id);
            """

    /// The revocation log, the same in every schema.
    private static let revocationLog = """
            CREATE TABLE revocations (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                batch_id TEXT NOT NULL,
                revoked_at TIMESTAMPTZ NOT NULL,
                user_did TEXT NOT NULL,
                device_id TEXT NOT NULL,
                reason TEXT,
                selector TEXT NOT NULL
            );
            CREATE INDEX revocations_by_batch ON revocations (batch_id);
            \(function(refuseChange, replacing: false))
            \(RegistryGuard.statements(on: "revocations", among: allGuards))
            """

    private static let catbirdMigrations: [(String, String)] = [
        (RegistryMigration.v1, catbirdAdditions + revocationLog),
        (RegistryMigration.v2, """
            CREATE TABLE batch_operations (
                batch_id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                operation TEXT NOT NULL,
                PRIMARY KEY (batch_id, seq)
            );
            \(RegistryGuard.statements(on: "batch_operations", among: allGuards))
            """),
        (RegistryMigration.v3, """
            \(function(memberNeedsActiveDevice, replacing: false))
            \(RegistryGuard.statements(on: "members", among: allGuards))
            """),
        (RegistryMigration.v4, """
            \(RegistryMigration.chainedBatches(integer: "BIGINT"))
            \(RegistryGuard.statements(on: "revocation_batches", among: allGuards))
            \(RegistryGuard.statements(on: "revocation_chain_start", among: allGuards))
            """),
    ]

    // MARK: Guards

    /// A trigger function: its name and its body (PL/pgSQL), which the catalog keeps as given.
    private struct GuardFunction {
        let name: String
        let body: String
    }

    private static let refuseChange = GuardFunction(name: "registry_refuse_change", body: """
        BEGIN
            RAISE EXCEPTION 'the table % is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
        END
        """)

    /// FOR KEY SHARE is the lock the foreign key takes anyway; it waits for a revocation that
    /// holds the device's row, then sees the device as the revocation left it.
    private static let memberNeedsActiveDevice = GuardFunction(name: "registry_member_needs_active_device", body: """
        DECLARE active BOOLEAN;
        BEGIN
            IF NEW.left_at IS NULL THEN
                SELECT d.is_active INTO active FROM user_devices d
                WHERE d.user_did = NEW.user_did AND d.device_id = NEW.device_id FOR KEY SHARE;
                IF active IS FALSE THEN
                    RAISE EXCEPTION 'a revoked device cannot join a conversation (%#%)', NEW.user_did, NEW.device_id
                        USING ERRCODE = 'check_violation';
                END IF;
            END IF;
            RETURN NEW;
        END
        """)

    private static let guardFunctions = [refuseChange, memberNeedsActiveDevice]

    private static func function(_ function: GuardFunction, replacing: Bool) -> String {
        "CREATE \(replacing ? "OR REPLACE " : "")FUNCTION \(function.name)() RETURNS trigger LANGUAGE plpgsql AS $$\n\(function.body)\n$$;"
    }

    /// The triggers that keep a registry's rules (``RegistryGuard``), each written as
    /// `pg_get_triggerdef` gives it back (its events in PostgreSQL's order, DELETE before
    /// UPDATE) but for the table's schema, with the body of the function it calls.
    var guards: [RegistryGuard] { RegistryGuard.of(schema, among: Self.allGuards) }

    private static let allGuards: [RegistryGuard] = appendOnly("revocations", "revocations_are_append_only", "revocations_are_never_truncated")
        + appendOnly("batch_operations", "batch_operations_are_append_only", "batch_operations_are_never_truncated")
        + [RegistryGuard(name: "members_need_an_active_device", table: "members", sql: """
            CREATE TRIGGER members_need_an_active_device BEFORE INSERT OR UPDATE OF left_at, user_did, device_id ON members \
            FOR EACH ROW EXECUTE FUNCTION \(memberNeedsActiveDevice.name)()
            """, functionBody: memberNeedsActiveDevice.body)]
        + appendOnly("revocation_batches", "revocation_batches_are_append_only", "revocation_batches_are_never_truncated")
        + appendOnly("revocation_chain_start", "revocation_chain_start_is_fixed", "revocation_chain_start_is_never_truncated")

    /// A table's guards against UPDATE and DELETE (a row at a time) and TRUNCATE.
    private static func appendOnly(_ table: String, _ rows: String, _ truncate: String) -> [RegistryGuard] {
        [RegistryGuard(name: rows, table: table,
                       sql: "CREATE TRIGGER \(rows) BEFORE DELETE OR UPDATE ON \(table) FOR EACH ROW EXECUTE FUNCTION \(refuseChange.name)()",
                       functionBody: refuseChange.body),
         RegistryGuard(name: truncate, table: table,
                       sql: "CREATE TRIGGER \(truncate) BEFORE TRUNCATE ON \(table) FOR EACH STATEMENT EXECUTE FUNCTION \(refuseChange.name)()",
                       functionBody: refuseChange.body)]
    }

    /// A trigger is enabled when it fires on `O`rigin or `A`lways. A partitioned table's trigger
    /// is read on that table (its partitions' clones name it as their parent, `tgparentid`),
    /// and is enabled only if every clone is: one disabled on a single partition does not fire
    /// there. One made on a single partition, or on a table inheriting from one of the
    /// schema's, in whatever schema, fires on the rows the rules change through the table above
    /// it, so it is read as that table's too (a hostile trial: a trigger on one partition of
    /// `user_devices` kept a device active, or made another inactive, and the revoke saw no
    /// trigger to watch). Every table of the schema is read as itself, whatever it inherits
    /// from, so a partition of the schema's shows twice: as itself, and as part of its table.
    /// Rules (`pg_rewrite`, but a view's `_RETURN`) are read the same way, enabled as triggers
    /// are; unlike a trigger, one on a partition is not applied to a statement on its table.
    func catalogTriggers(_ session: RegistrySession) throws -> [CatalogTrigger] {
        try session.rows("""
            WITH RECURSIVE family (relid, root, table_name) AS (
                SELECT c.oid, c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()
                UNION SELECT i.inhrelid, f.root, f.table_name FROM pg_inherits i JOIN family f ON i.inhparent = f.relid),
            clones (root, oid, enabled) AS (
                SELECT t.oid, t.oid, t.tgenabled FROM pg_trigger t WHERE t.tgparentid = 0 AND NOT t.tgisinternal
                UNION ALL SELECT c.root, k.oid, k.tgenabled FROM clones c JOIN pg_trigger k ON k.tgparentid = c.oid)
            SELECT t.tgname AS name, f.table_name, CASE WHEN t.tgrelid = f.root THEN NULL ELSE t.tgrelid::regclass::text END AS relation,
            NOT EXISTS (SELECT 1 FROM clones c WHERE c.root = t.oid AND c.enabled NOT IN ('O', 'A')) AS enabled,
            EXISTS (SELECT 1 FROM clones c WHERE c.root = t.oid AND c.enabled IN ('O', 'A')) AS fires_somewhere,
            replace(pg_get_triggerdef(t.oid), ' ON ' || quote_ident(n.nspname) || '.', ' ON ') AS definition, p.prosrc AS body,
            FALSE AS is_rule, FALSE AS rewrites_writes
            FROM pg_trigger t JOIN family f ON f.relid = t.tgrelid JOIN pg_class c ON c.oid = t.tgrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid
            WHERE NOT t.tgisinternal AND t.tgparentid = 0
            UNION ALL
            SELECT r.rulename, f.table_name, CASE WHEN r.ev_class = f.root THEN NULL ELSE r.ev_class::regclass::text END,
            r.ev_enabled IN ('O', 'A'), r.ev_enabled IN ('O', 'A'), pg_get_ruledef(r.oid), '', TRUE, r.ev_type IN ('2', '3')
            FROM pg_rewrite r JOIN family f ON f.relid = r.ev_class WHERE r.rulename <> '_RETURN'
            """, []).map {
            CatalogTrigger(name: $0.text("name"), table: $0.text("table_name"), relation: $0.optionalText("relation"), enabled: $0.bool("enabled"),
                           firesSomewhere: $0.bool("fires_somewhere"), definition: $0.text("definition"), functionBody: $0.text("body"),
                           isRule: $0.bool("is_rule"), rewritesWrites: $0.bool("rewrites_writes"))
        }
    }

    /// Each function the guards call made again as written, then each trigger.
    func restore(_ guards: [RegistryGuard], _ session: RegistrySession) throws {
        try session.execute("SET LOCAL lock_timeout = '60s'; SELECT pg_advisory_xact_lock(\(Self.schemaLock))")
        for function in Self.guardFunctions where guards.contains(where: { $0.functionBody == function.body }) {
            try session.execute(Self.function(function, replacing: true))
        }
        for guardian in guards {
            try session.execute("DROP \(guardian.isRule ? "RULE" : "TRIGGER") IF EXISTS \(guardian.quotedName) ON \(guardian.relation ?? RegistryGuard.quoted(guardian.table))")
            if !guardian.isAdded { try session.execute(guardian.sql) }
        }
    }

    /// The columns the rules read and write, with the types they need (information_schema's
    /// names). Any text type will do for text; any integer for a count.
    private static func expectedColumns(_ schema: RegistrySchema) -> [String: [(column: String, types: Set<String>)]] {
        schema == .catbird ? catbirdColumns : familyMedicalColumns
    }

    private static let familyMedicalColumns: [String: [(column: String, types: Set<String>)]] = {
        let text: Set<String> = ["text", "character varying"], time: Set<String> = ["timestamp with time zone"]
        return ["user_devices": [("device_id", ["uuid"]), ("user_id", ["uuid"]), ("device_name", text), ("device_type", text),
                                 ("first_seen_at", time), ("last_seen_at", time), ("is_active", ["boolean"])]]
    }()

    private static let catbirdColumns: [String: [(column: String, types: Set<String>)]] = {
        let text: Set<String> = ["text", "character varying"], time: Set<String> = ["timestamp with time zone"]
        let integer: Set<String> = ["integer", "bigint", "smallint"]
        return [
            "user_devices": [("user_did", text), ("device_id", text), ("device_mls_did", text), ("device_name", text),
                             ("signature_public_key", ["bytea"]), ("key_packages_available", integer), ("last_seen", time),
                             ("registered_at", time)],
            "members": [("convo_id", text), ("member_mls_did", text), ("user_did", text), ("device_id", text), ("joined_at", time),
                        ("left_at", time), ("is_admin", ["boolean"])],
        ]
    }()

    /// Columns the rules take never to be NULL, as the seeds declare them.
    private static let neverNull: [String: Set<String>] = [
        "user_devices": ["user_did", "user_id", "device_id", "is_active"],
        "members": ["convo_id", "user_did", "device_id"],
    ]

    /// Columns revocation adds; an app's table that has one already must have it as we would.
    private static let addedColumns: [(column: String, types: Set<String>)] = [
        ("is_active", ["boolean"]), ("revoked_at", ["timestamp with time zone"]), ("revocation_reason", ["text", "character varying"]),
    ]

    /// How the app's tables differ from what the registry needs, one sentence each.
    private static func differences(_ session: RegistrySession, present: Set<String>, schema: RegistrySchema) throws -> [String] {
        var differences: [String] = []
        let added = schema == .catbird ? addedColumns : []
        for table in schema == .catbird ? ["user_devices", "members"] : ["user_devices"] {
            guard present.contains(table) else {
                differences.append("the table \(table) is missing")
                continue
            }
            let rows = try session.rows("""
                SELECT column_name, data_type, is_nullable FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = ?
                """, [.text(table)])
            let types = Dictionary(rows.map { ($0.text("column_name"), $0.text("data_type")) }, uniquingKeysWith: { first, _ in first })
            // The columns a device and a membership are found by, and a device's state: a NULL
            // there (a table made without NOT NULL) made revocations fail on the row (a hostile
            // trial); the seeds declare each NOT NULL, and SQLite's registry does too.
            for row in rows where row.text("is_nullable") == "YES" && Self.neverNull[table]?.contains(row.text("column_name")) == true {
                differences.append("\(table).\(row.text("column_name")) may be NULL, not NOT NULL")
            }
            let wanted = expectedColumns(schema)[table]! + (table == "user_devices" ? added : [])
            for (column, allowed) in wanted {
                guard let type = types[column] else {
                    if !added.contains(where: { $0.column == column }) { differences.append("\(table).\(column) is missing") }
                    continue
                }
                if !allowed.contains(type) { differences.append("\(table).\(column) is \(type), not \(allowed.sorted().joined(separator: " or "))") }
            }
        }
        return differences
    }
}
