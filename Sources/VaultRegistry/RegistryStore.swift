import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// Where a device registry lives: a SQLite file (the embedded default) or a PostgreSQL
/// database (where the chat app's real registry is, issue 13).
public enum RegistryLocation: Sendable, Equatable {
    case sqlite(path: String)
    /// A libpq connection string (URI or key/value), as given; libpq reads the `PG*`
    /// environment variables, `~/.pgpass` and service files for what it leaves out.
    case postgres(connection: String)

    /// Where a registry's name points: `postgresql://…` and `postgres://…` URIs and libpq
    /// key/value strings (`host=… dbname=…`) are PostgreSQL, by their look alone; anything else
    /// is a SQLite file. A connection that carries a password is refused: the name is given on
    /// command lines, where it would sit in the shell history and in `ps` output.
    public init(parsing text: String) throws {
        guard PostgresClient.looksLikeConnection(text) else {
            // Any other URL is no SQLite file: `s3://b/r.sqlite` went to the object store, and
            // `S3://…` would have been made as a local folder `S3:`.
            guard !VaultLocation.isSpelledAsURL(text) else { throw VaultError.urlAsLocalPath(text, what: "the registry") }
            self = .sqlite(path: text)
            return
        }
        if try PostgresClient.connectionHasPassword(text) { throw VaultError.passwordInConnection() }
        self = .postgres(connection: text)
    }

    /// The files SQLite keeps beside a registry file (rollback journal, write-ahead log, shared
    /// memory), each with how messages name it: no output may be one of them. A server
    /// database has none.
    public var sideFiles: [(label: String, path: String)] {
        guard case .sqlite(let path) = self else { return [] }
        return FileSet.databaseSideFiles(of: path, owner: "the registry").map { ($0.label, $0.path) }
    }

    /// How messages name the registry: the path or the connection text (which has no password).
    public var displayName: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let connection): connection
        }
    }
}

/// A value passed to or read from a registry's SQL (an import row is a list of them). Times are RFC 3339 UTC text with whole
/// seconds (``DeviceRegistry/timeText(_:)``) whichever engine stores them, so the rules compare
/// and print them alike; booleans read back as `.int(0 or 1)`, as SQLite stores them.
public enum RegistryValue: Sendable, Equatable {
    case null
    case int(Int)
    case text(String)
    case bytes([UInt8])
    case bool(Bool)
    /// A time, as ``DeviceRegistry/timeText(_:)`` writes it: a PostgreSQL `timestamptz`.
    case time(String)

    init(_ text: String?) { self = text.map(RegistryValue.text) ?? .null }
    init(time: String?) { self = time.map(RegistryValue.time) ?? .null }
}

/// One result row: values by column name.
struct RegistryRow: Sendable {
    let columns: [String]
    let values: [RegistryValue]

    subscript(_ column: String) -> RegistryValue { values[index(column)] }

    private func index(_ column: String) -> Int {
        guard let index = columns.firstIndex(of: column) else { preconditionFailure("no column \(column) in the query") }
        return index
    }

    func optionalText(_ column: String) -> String? { optionalText(at: index(column)) }

    /// The column at `index` as text; by place, for a reader of many rows (no name looked up).
    func optionalText(at index: Int) -> String? {
        switch values[index] {
        case .text(let text), .time(let text): text
        case .int(let number): String(number)
        case .null, .bytes, .bool: nil
        }
    }

    func text(_ column: String) -> String { optionalText(column) ?? "" }

    func int(_ column: String) -> Int { int(at: index(column)) }

    func int(at index: Int) -> Int {
        switch values[index] {
        case .int(let number): number
        case .text(let text): Int(text) ?? 0
        default: 0
        }
    }

    func bool(_ column: String) -> Bool { int(column) != 0 }
}

/// What the registry's rules need from a database engine: transactions over a session that
/// runs SQL, and the engine's fastest way to load many rows. DeviceRegistry holds every rule
/// above this; SQLite (VaultSQLite) and PostgreSQL (libpq) differ only below it.
protocol RegistryEngine: AnyObject, Sendable {
    var dialect: RegistryDialect { get }
    /// Which app's device table the registry holds, as it recorded when it was made.
    var schema: RegistrySchema { get }
    /// Runs `body` in one transaction; `commit` false rolls it back (dry runs, refusals). A
    /// writing transaction waits for other writers. With `retrying`, the engine runs `body`
    /// again from the start when the database aborts it for a conflict that is resolved that
    /// way (a deadlock, a serialization failure), a bounded number of times.
    func transaction<T>(writing: Bool, retrying: Bool, _ body: (RegistrySession) throws -> (T, commit: Bool)) throws -> T
    /// The registry's guards (``RegistryGuard``), for its schema.
    var guards: [RegistryGuard] { get }
    /// Every trigger on the registry's schema's tables, as the catalog shows it (a partitioned
    /// table's, not its partitions' clones).
    func catalogTriggers(_ session: RegistrySession) throws -> [CatalogTrigger]
    /// Puts `guards` back as the registry made them (and drops those added by hand), in a
    /// writing transaction's `session`.
    func restore(_ guards: [RegistryGuard], _ session: RegistrySession) throws
}

/// One transaction's connection. SQL uses `?` placeholders, numbered in order.
protocol RegistrySession {
    func execute(_ sql: String, _ arguments: [RegistryValue]) throws
    /// Runs one INSERT, UPDATE or DELETE and returns how many rows it changed itself (not what
    /// triggers changed besides): what a policy, a rule or a trigger kept it from changing is
    /// missing from the count.
    func change(_ sql: String, _ arguments: [RegistryValue]) throws -> Int
    /// The whole result at once: for what is small by construction (a count, a batch's record,
    /// one user's devices). What grows with the registry is read by ``eachRow(_:_:_:)`` or
    /// ``forEachRow(_:_:_:)``.
    func rows(_ sql: String, _ arguments: [RegistryValue]) throws -> [RegistryRow]
    /// Runs a query and hands `row` each result row, a few thousand at a time at most held in
    /// memory (PostgreSQL: a cursor fetched in pieces; SQLite: stepped), so a result as large
    /// as the registry is read in bounded memory. Other statements may run in `row`.
    func eachRow(_ sql: String, _ arguments: [RegistryValue], _ row: (RegistryRow) throws -> Void) throws
    /// Runs a query and hands `row` each result row, whose `column(i)` is the i-th column's
    /// bytes as the engine returns them for text (normally UTF-8; none for NULL; other types
    /// in the engine's text form), valid only during that call. Reads many rows of text with no
    /// String or value made for each (a batch's operations), streamed as ``eachRow(_:_:_:)``.
    func forEachRow(_ sql: String, _ arguments: [RegistryValue], _ row: (_ column: (Int) -> UnsafeRawBufferPointer) throws -> Void) throws
    /// Appends rows to `table` (a temporary table: a selection or an import's staging), with
    /// COPY on PostgreSQL and a prepared insert on SQLite. `produce` hands each row to its
    /// argument; an error it throws stops the load and is rethrown.
    func load(_ table: String, columns: [String], _ produce: (_ add: ([RegistryValue]) throws -> Void) throws -> Void) throws
    /// Runs `sql`, a CREATE UNIQUE INDEX; false, with nothing built and the transaction still
    /// usable, when two rows have the same key. Any other failure is thrown.
    func createUniqueIndex(_ sql: String) throws -> Bool
}

extension RegistrySession {
    func execute(_ sql: String) throws { try execute(sql, []) }

    func int(_ sql: String, _ arguments: [RegistryValue] = []) throws -> Int {
        try rows(sql, arguments).first.map { $0.int($0.columns[0]) } ?? 0
    }

    func bool(_ sql: String, _ arguments: [RegistryValue] = []) throws -> Bool { try int(sql, arguments) != 0 }

    func strings(_ sql: String, _ arguments: [RegistryValue] = []) throws -> [String] {
        try rows(sql, arguments).map { $0.text($0.columns[0]) }
    }
}

/// Where the two engines' SQL differs. Everything else is written once, in SQL both accept.
struct RegistryDialect: Sendable {
    /// Column types for temporary tables.
    let blobType, timeType, boolType: String
    /// A temporary column that keeps a time column's value as it is stored: on SQLite with no
    /// type (no affinity), so a value an app wrote as a number stays one and compares as the
    /// column it came from does (a hostile trial: copied as text, `5` sorted after `2024-…`,
    /// where the number sorts before every text); PostgreSQL's times are `timestamptz`.
    var storedTimeType: String { timesAreText ? "" : timeType }
    /// After a temporary table's column list (SQLite's `WITHOUT ROWID`).
    let tableSuffix: String
    /// After a text ORDER BY: byte order, so both engines sort alike (SQLite's BINARY is
    /// PostgreSQL's "C"; a database's own collation would sort by language).
    let byteOrder: String
    /// The schema of this connection's temporary tables and their indexes, to name one of them
    /// without reaching a real one of the same name.
    let temporarySchema: String
    /// Counts the tables named by its one parameter in the registry's schema.
    let tableExists: String
    /// Whether a filled temporary table needs ANALYZE for good plans (PostgreSQL never
    /// analyses temporary tables by itself).
    let analyzesTemporaryTables: Bool
    /// Makes revokers wait for each other at the start of the transaction; nil when the
    /// transaction itself already holds the database's only write lock (SQLite IMMEDIATE).
    let serializeRevocations: String?
    /// Whether a selection of devices (`user_devices` as `d`) locks the rows it finds, in one
    /// fixed order (`FOR UPDATE`, in `DeviceRegistry.revoke`): the app cannot then add a
    /// membership for a device being revoked while the batch is measured and applied (only
    /// revokers change `is_active`, and they take turns). Taken by the selection itself, not
    /// by a second pass over the batch; false where the database is locked whole.
    let locksSelection: Bool
    /// The type of a UUID column: Family Medical's ids (SQLite keeps them as text).
    let uuidType: String
    /// Whether what an UPDATE changes can fill a table in the same statement (`WITH … UPDATE …
    /// RETURNING … INSERT`): a revocation of a table without conversations then selects its
    /// batch by revoking it, one pass over the table where selecting first took two (PostgreSQL,
    /// 0.8 s of 100,000 Family Medical devices of 1,000,000). SQLite can only collect them by a
    /// trigger, which took longer than the selection it saves (docs/performance.md).
    let updateFillsTable: Bool
    /// Run before a batch's operations are stored: PostgreSQL compresses their 70 KB rows
    /// (TOAST) with lz4 where the server has it, not with its slower default, pglz, which took
    /// 0.3 s for the 35 MB of a 100,000-device batch. The setting is this transaction's, readers
    /// see no difference, and a server configured for a compression keeps it (a standby built
    /// without lz4 could not read such rows). Nil for SQLite, which does not compress.
    let beforeStoringOperations: String?
    /// Whether a list of devices is sorted by the table's key before its devices are looked up
    /// (``DeviceTable/keyOrder``): SQLite looks them up in the order it is given.
    let sortsListByKey: Bool
    /// Statements around the batch's two UPDATEs that have the planner find the batch's rows by
    /// their indexes. PostgreSQL's planner, pricing a random read at four sequential ones and
    /// misjudging a join on two columns, scans and hashes every membership to find the batch's
    /// (docs/performance.md, "What the profiles showed"); the update reads those rows' pages anyway. SQLite
    /// always probes: nil.
    let probingIndexes: (start: String, end: String)?
    /// After `user_devices d` where a device is looked up by its signature key and its user:
    /// SQLite, with no statistics, probed the user's devices by the primary key instead, so
    /// checking 20,000 new devices of one user took 80 s (quadratic in devices per user);
    /// PostgreSQL's planner has statistics and needs no hint.
    let bySignatureKey: String
    /// Closes the open memberships of the batch's devices at its one parameter, the time, and
    /// puts each in `closing` as it closes, in the same pass over `members`...
    let closeMemberships: String
    /// ...with these statements around it, where the engine needs them.
    let collectingClosing: (start: String, end: String)?
    /// Whether times are text the rules must read as times: SQLite keeps whatever text a row
    /// was given, and a row the app or a person wrote (`2025-12-31 23:00:00`, `…T10:00:00-10:00`)
    /// compared as text was chosen or spared by its spelling while shown by its time (a hostile
    /// trial). PostgreSQL's are `timestamptz`.
    let timesAreText: Bool
    /// Whether the engine's names have no case: SQLite's never do (`X` and `x` are one trigger),
    /// where PostgreSQL keeps a quoted name's case, so `"Revocations_Are_Append_Only"` is
    /// another trigger than the guard `revocations_are_append_only` (a hostile trial: it was
    /// taken for the guard, and `init` left it in place).
    let namesHaveNoCase: Bool
    /// The tables of the registry's schema row-level security applies to for the connecting role
    /// (PostgreSQL's policies, Supabase's way, where the role does not bypass them). Nil for
    /// SQLite, which has none.
    let tablesUnderRowSecurity: String?
    /// Whether a writing transaction takes its tables' lock first (PostgreSQL's `ROW EXCLUSIVE`,
    /// which every writer of rows takes and no other writer waits for, but which keeps out a
    /// new trigger, rule or policy until it ends). SQLite's writing transaction holds the
    /// database's write lock from its start, which every change of its schema needs: false.
    let holdsTablesFirst: Bool
    /// Whether the connecting role holds privileges table by table (PostgreSQL's `GRANT`),
    /// which a dry run looks at for its real run. SQLite's file permissions are the file's.
    let rolesHavePrivileges: Bool

    /// A time column or expression as the rules read it: on SQLite, the instant it names in the
    /// registry's own form (UTC, whole seconds), or NULL when it names none (no time recorded,
    /// as a missing one). Text already in that form is taken as it is: `strftime` on each of a
    /// million rows made a `--not-seen-since` 0.45 s slower, the shape's test 0.04 s.
    func time(_ expression: String) -> String {
        guard timesAreText else { return expression }
        return "CASE WHEN \(expression) GLOB '????-??-??T??:??:??Z' THEN \(expression) ELSE strftime('%Y-%m-%dT%H:%M:%SZ', \(expression)) END"
    }

    /// Whether a time (``time(_:)``) is before the time of one `?`, or none at all: a device
    /// with no time is not kept out of any `--not-seen-since`. On SQLite the time is read once
    /// (no time is the empty text, before every time); PostgreSQL's index serves its two terms.
    func isBeforeOrNone(_ time: String) -> String {
        timesAreText ? "coalesce(\(time), '') < ?" : "(\(time) < ? OR \(time) IS NULL)"
    }

    static let sqlite = RegistryDialect(
        blobType: "BLOB", timeType: "TEXT", boolType: "INTEGER", tableSuffix: " WITHOUT ROWID", byteOrder: "", temporarySchema: "temp",
        tableExists: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
        analyzesTemporaryTables: false, serializeRevocations: nil, locksSelection: false, uuidType: "TEXT", updateFillsTable: false,
        beforeStoringOperations: nil, sortsListByKey: true,
        probingIndexes: nil,
        bySignatureKey: " INDEXED BY user_devices_by_signature_key",
        // The member an operation removes is the revoked device's own MLS DID, as the server
        // gives it (`USER_DID#DEVICE_ID`, seed 003), never the row's `member_mls_did`: a row the
        // app wrote naming another device's would have that device removed (import refuses such
        // rows; the app's own database may hold one).
        closeMemberships: "UPDATE members SET left_at = ? WHERE left_at IS NULL AND (user_did, device_id) IN (SELECT user_did, device_id FROM batch)",
        // SQLite cannot insert what an UPDATE returns: a temporary trigger, on this connection
        // only and for this statement only (made and dropped inside the transaction), does.
        collectingClosing: (start: """
            CREATE TEMP TRIGGER registry_revoke_collects_closing AFTER UPDATE OF left_at ON main.members
            WHEN OLD.left_at IS NULL AND NEW.left_at IS NOT NULL
            BEGIN INSERT INTO closing VALUES (NEW.convo_id, NEW.user_did || '#' || NEW.device_id, coalesce(NEW.is_admin, 0), NEW.joined_at); END
            """, end: "DROP TRIGGER temp.registry_revoke_collects_closing"),
        timesAreText: true, namesHaveNoCase: true, tablesUnderRowSecurity: nil, holdsTablesFirst: false, rolesHavePrivileges: false)
    static let postgres = RegistryDialect(
        blobType: "BYTEA", timeType: "TIMESTAMPTZ", boolType: "BOOLEAN", tableSuffix: "", byteOrder: #" COLLATE "C""#, temporarySchema: "pg_temp",
        tableExists: "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?",
        analyzesTemporaryTables: true,
        // An arbitrary number of our own, the same in every revoker: the lock they all take.
        // Waiting for it or for a row lock gives up after a minute, as SQLite's busy timeout.
        serializeRevocations: "SET LOCAL lock_timeout = '60s'; SELECT pg_advisory_xact_lock(7527086449296553327)",
        locksSelection: true, uuidType: "UUID", updateFillsTable: true,
        beforeStoringOperations: """
            SELECT set_config('default_toast_compression', 'lz4', true) FROM pg_settings
            WHERE name = 'default_toast_compression' AND source = 'default' AND 'lz4' = ANY (enumvals)
            """, sortsListByKey: false,
        probingIndexes: (start: "SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off",
                         end: "SET LOCAL enable_hashjoin TO DEFAULT; SET LOCAL enable_mergejoin TO DEFAULT"),
        bySignatureKey: "",
        closeMemberships: """
            WITH closed AS (UPDATE members SET left_at = ? WHERE left_at IS NULL AND (user_did, device_id) IN (SELECT user_did, device_id FROM batch)
                            RETURNING convo_id, user_did || '#' || device_id AS member_mls_did, coalesce(is_admin, FALSE) AS is_admin, joined_at)
            INSERT INTO closing SELECT convo_id, member_mls_did, is_admin, joined_at FROM closed
            """,
        collectingClosing: nil, timesAreText: false, namesHaveNoCase: false,
        tablesUnderRowSecurity: """
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND row_security_active(c.oid)
            """,
        holdsTablesFirst: true, rolesHavePrivileges: true)
}
