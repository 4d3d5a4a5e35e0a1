internal import CSQLite
internal import CSQLiteLoad
import Glibc
import VaultCore

/// The one owner of SQLite's C API: a connection, its prepared statements and transactions.
/// The device registry (VaultRegistry), the batches' journals and the manifest's staging
/// (VaultFleet) keep their databases through it; nothing else imports CSQLite.
///
/// One connection, used by one caller at a time: every call takes the connection's lock, so
/// the workers of a run may share a journal (a transaction is one call, ``transaction(_:_:)``).
/// Values are always bound (``SQLiteValue``), never written into SQL. A statement is finalized
/// when the call that prepared it returns, however it returns, and the connection is closed with
/// `sqlite3_close_v2` when the owner goes (or at ``close()``). SQLite's failures are thrown as
/// ``Failure`` (its result code and its own words), which each caller names in its own terms
/// (``VaultError/sqliteFailure(_:_:)`` when it has none of its own).
package final class SQLiteDatabase: @unchecked Sendable {
    /// How a database file is opened.
    package enum Access: Sendable {
        case readOnly
        /// Reading and writing a database that exists: a file removed meanwhile is not made
        /// again, empty.
        case readWrite
        /// Reading and writing, making the file when it is missing.
        case create
    }

    /// How a transaction starts: `deferred` takes no lock until it reads or writes; `immediate`
    /// holds the database's one write lock from its start, so two writers wait for each other
    /// (busy timeout) instead of one failing when it first writes.
    package enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED", immediate = "IMMEDIATE"
    }

    /// A failure SQLite reported: its extended result code and its message (`sqlite3_errmsg`).
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package let code: Int32
        package let message: String

        init(code: Int32, message: String) {
            self.code = code
            // SQLite's message for a code, where the connection had none to give.
            self.message = message.isEmpty ? String(cString: sqlite3_errstr(code)) : message
        }

        init(code: Int32, connection: OpaquePointer?) {
            self.init(code: code, message: connection.map { String(cString: sqlite3_errmsg($0)) } ?? "")
        }

        package var description: String { message }
        /// The primary result code, without the extended part.
        var primary: Int32 { code & 0xff }
        /// A constraint the data broke (NOT NULL, UNIQUE, CHECK, a trigger's RAISE(ABORT)).
        package var isConstraint: Bool { primary == SQLITE_CONSTRAINT }
        /// Two rows with one key of a UNIQUE index or constraint.
        package var isUniqueConstraint: Bool { code == SQLITE_CONSTRAINT | (8 << 8) }
        /// The file is not an SQLite database (or it is encrypted, or damaged in its header).
        package var isNotADatabase: Bool { primary == SQLITE_NOTADB }
        /// A read-only connection found a hot journal it cannot roll back
        /// (SQLITE_READONLY_ROLLBACK).
        package var needsRollback: Bool { code == SQLITE_READONLY | (3 << 8) }
    }

    /// The most bytes one text or blob value (or one row) may have, read or written: a
    /// database file is input like any other, and a value past this is refused (SQLITE_TOOBIG)
    /// instead of being read into memory whole. The suite's largest values are a registry
    /// batch's operations, about 70 KB a row.
    package static let maximumValueBytes: Int32 = 64 << 20

    private var connection: OpaquePointer?
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// The name it was opened by, for messages.
    package let path: String

    /// Opens the file at `path`, always a file: `busyTimeout` is how long a statement waits
    /// for a lock another connection holds (0: it fails at once, SQLITE_BUSY). Foreign keys
    /// are enforced.
    /// Its side files are claimed first (``SideFiles``), for reading too.
    package convenience init(path: String, access: Access, busyTimeout seconds: Int = 0) throws {
        try SideFiles.claim(path)
        try self.init(name: Self.fileName(path), path: path, access: access, busyTimeout: seconds)
    }

    /// A database in memory, gone when closed.
    package static func inMemory() throws -> SQLiteDatabase {
        try SQLiteDatabase(name: ":memory:", path: ":memory:", access: .create, busyTimeout: 0)
    }

    /// A private temporary database on disk: SQLite makes it in `SQLITE_TMPDIR` or `TMPDIR`
    /// and removes it when closed.
    package static func temporaryFile() throws -> SQLiteDatabase {
        try SQLiteDatabase(name: "", path: "", access: .create, busyTimeout: 0)
    }

    /// The name SQLite opens the file `path` by. SQLite reads `""` and `":memory:"` as no file,
    /// and (Debian builds it with SQLITE_USE_URI) a name starting `file:` as a URI, so
    /// `--journal 'file:j?mode=memory'` kept the journal in memory, and `--db file:r.db` wrote
    /// `r.db` while the tool's own steps (the lock, the atomic write, the rollback's checks) used
    /// `file:r.db`. Such a relative path is made explicit, as any other is read.
    static func fileName(_ path: String) -> String {
        path.isEmpty || path == ":memory:" || path.hasPrefix("file:") ? "./" + path : path
    }

    /// Loads SQLite unless it is loaded (issue 48: it is loaded on first use), or fails with exit
    /// 69 naming the package. Every database the suite keeps is opened through here; a command
    /// that makes files or objects before it opens its database asks first, so a missing library
    /// stops it before anything is made.
    package static func requireLibrary() throws {
        try LoadOnUse.require(OpaquePointer(hvt_library_sqlite()), feature: "keeping a SQLite database")
    }

    private init(name: String, path: String, access: Access, busyTimeout seconds: Int) throws {
        try Self.requireLibrary()
        self.path = path
        pthread_mutex_init(lock, nil)
        let flags: Int32 = switch access {
        case .readOnly: SQLITE_OPEN_READONLY
        case .readWrite: SQLITE_OPEN_READWRITE
        case .create: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var opened: OpaquePointer?
        // SQLITE_OPEN_EXRESCODE: extended result codes from the start, open included.
        // SQLITE_OPEN_NOMUTEX: every use of the connection holds `lock`, so the mutex SQLite's
        // serialized mode (Debian's default) takes around each call is a second lock on every
        // step of every statement, 2% of a large revocation's instructions (GRDB opened so too).
        let code = sqlite3_open_v2(name, &opened, flags | 0x0200_0000 | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let failure = Failure(code: code, connection: opened)
            sqlite3_close_v2(opened)  // a handle is made even when opening fails
            throw failure
        }
        connection = opened
        sqlite3_extended_result_codes(opened, 1)
        sqlite3_limit(opened, SQLITE_LIMIT_LENGTH, Self.maximumValueBytes)
        sqlite3_busy_timeout(opened, Int32(clamping: seconds * 1000))
        do {
            try Self.check(csqlite_refuse_double_quoted_strings(opened), opened)
            try Self.check(sqlite3_exec(opened, "PRAGMA foreign_keys = ON", nil, nil, nil), opened)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Closes the connection now (later calls fail with SQLITE_MISUSE). Statements are never
    /// left unfinalized, and `sqlite3_close_v2` would close after the last one anyway.
    package func close() {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        sqlite3_close_v2(connection)
        connection = nil
    }

    /// Runs `body` with the connection, no other caller using it meanwhile, outside any
    /// transaction of ours (each statement is its own, or `body` runs its own BEGIN/COMMIT, as
    /// `PRAGMA journal_mode` needs).
    package func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        guard let connection else { throw Failure(code: SQLITE_MISUSE, message: "the database '\(path)' is closed") }
        return try body(Connection(handle: connection))
    }

    /// Runs `body` in one transaction of `kind`, committed when it returns `commit` true and
    /// rolled back when it returns false or throws (the error is then rethrown). A commit that
    /// fails is rolled back and its failure thrown.
    package func transaction<T>(_ kind: TransactionKind, _ body: (Connection) throws -> (T, commit: Bool)) throws -> T {
        try withConnection { connection in
            try connection.execute("BEGIN \(kind.rawValue)")
            let outcome: (T, commit: Bool)
            do {
                outcome = try body(connection)
            } catch {
                connection.rollBackIfOpen()
                throw error
            }
            guard outcome.commit else {
                // A statement's failure may have ended the transaction already.
                if !connection.isAutocommit { try connection.execute("ROLLBACK") }
                return outcome.0
            }
            do {
                try connection.execute("COMMIT")
            } catch {
                connection.rollBackIfOpen()
                throw error
            }
            return outcome.0
        }
    }

    /// A writing transaction: IMMEDIATE, committed unless `body` throws.
    package func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try transaction(.immediate) { try (body($0), commit: true) }
    }

    /// A reading transaction: DEFERRED, so every read in `body` sees one state of the database.
    package func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try transaction(.deferred) { try (body($0), commit: true) }
    }

    /// SQLite's result code as a ``Failure`` unless it is `expected`.
    static func check(_ code: Int32, _ connection: OpaquePointer, expecting expected: Int32 = SQLITE_OK) throws {
        guard code != expected else { return }
        throw Failure(code: code, connection: connection)
    }
}

/// A value bound to a statement or read from a row.
package enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// What may be bound to a statement's `?`: integers, doubles, text, bytes, booleans (as 0 and
/// 1) and optionals of them (nil is NULL).
package protocol SQLiteBindable {
    var sqliteValue: SQLiteValue { get }
}

extension SQLiteValue: SQLiteBindable { package var sqliteValue: SQLiteValue { self } }
extension Int: SQLiteBindable { package var sqliteValue: SQLiteValue { .integer(Int64(self)) } }
extension Int64: SQLiteBindable { package var sqliteValue: SQLiteValue { .integer(self) } }
extension Double: SQLiteBindable { package var sqliteValue: SQLiteValue { .real(self) } }
extension Bool: SQLiteBindable { package var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) } }
extension String: SQLiteBindable { package var sqliteValue: SQLiteValue { .text(self) } }
extension Array: SQLiteBindable where Element == UInt8 { package var sqliteValue: SQLiteValue { .blob(self) } }
extension Optional: SQLiteBindable where Wrapped: SQLiteBindable { package var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null } }

extension SQLiteDatabase {
    /// The connection during one call of ``SQLiteDatabase/withConnection(_:)`` or a
    /// transaction; not to be kept past it.
    package struct Connection {
        let handle: OpaquePointer

        /// Runs SQL without values, several statements separated by `;` (schemas, pragmas).
        package func execute(_ sql: String) throws {
            try SQLiteDatabase.check(sqlite3_exec(handle, sql, nil, nil, nil), handle)
        }

        /// Runs `sql`, one statement or several separated by `;`, with `values` bound to their
        /// parameters in order: each statement takes as many as it has, and the values must
        /// come out even.
        package func execute(_ sql: String, _ values: [any SQLiteBindable]) throws {
            var remaining = values[...]
            try sql.withCString { start in
                var next: UnsafePointer<CChar>? = start
                while let current = next, current.pointee != 0 {
                    var prepared: OpaquePointer?
                    let code = sqlite3_prepare_v2(handle, current, -1, &prepared, &next)
                    defer { sqlite3_finalize(prepared) }
                    try SQLiteDatabase.check(code, handle)
                    // Only blanks or a comment were left.
                    guard let prepared else { break }
                    let count = Int(sqlite3_bind_parameter_count(prepared))
                    guard remaining.count >= count else { throw Failure(code: SQLITE_RANGE, message: "too few values for the SQL") }
                    try Statement(handle: prepared, connection: handle).run(Array(remaining.prefix(count)))
                    remaining = remaining.dropFirst(count)
                }
            }
            guard remaining.isEmpty else {
                throw Failure(code: SQLITE_RANGE, message: "too many values for the SQL")
            }
        }

        /// Prepares `sql` (one statement) for `body`, and finalizes it when `body` returns or
        /// throws.
        package func prepare<T>(_ sql: String, _ body: (Statement) throws -> T) throws -> T {
            var prepared: OpaquePointer?
            let code = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
            defer { sqlite3_finalize(prepared) }
            try SQLiteDatabase.check(code, handle)
            guard let prepared else { throw Failure(code: SQLITE_MISUSE, message: "no statement in the SQL") }
            return try body(Statement(handle: prepared, connection: handle))
        }

        /// The first row of a query, read by `read`; nil when it has none.
        package func first<T>(_ sql: String, _ values: [any SQLiteBindable] = [], _ read: (Row) throws -> T) throws -> T? {
            try prepare(sql) { try $0.first(values, read) }
        }

        /// Each row of a query, one at a time.
        package func forEach(_ sql: String, _ values: [any SQLiteBindable] = [], _ body: (Row) throws -> Void) throws {
            try prepare(sql) { try $0.forEach(values, body) }
        }

        /// The first column of every row, as text (NULL as "").
        package func strings(_ sql: String, _ values: [any SQLiteBindable] = []) throws -> [String] {
            var strings: [String] = []
            try forEach(sql, values) { strings.append(try $0.text(0)) }
            return strings
        }

        /// How many rows the last INSERT, UPDATE or DELETE changed.
        package var changes: Int { Int(sqlite3_changes64(handle)) }

        /// Whether no transaction is open.
        package var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

        /// Rolls back the open transaction, if a failure left one; a failure of the rollback is
        /// not the caller's news (the first failure is).
        func rollBackIfOpen() {
            if !isAutocommit { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
        }

        /// The main database's bytes, as its file would hold them (`sqlite3_serialize`).
        package func serialize() throws -> [UInt8] {
            var size: sqlite3_int64 = 0
            guard let data = sqlite3_serialize(handle, "main", &size, 0) else { throw Failure(code: SQLITE_NOMEM, message: "") }
            defer { sqlite3_free(data) }
            return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
        }
    }

    /// A prepared statement, alive during ``Connection/prepare(_:_:)``: bound, stepped and reset
    /// as often as needed.
    package struct Statement {
        let handle: OpaquePointer
        let connection: OpaquePointer

        /// Resets the statement and binds `values` to its `?` in order.
        package func bind(_ values: [any SQLiteBindable]) throws {
            reset()
            for (index, value) in values.enumerated() { try bind(value.sqliteValue, at: index + 1) }
        }

        /// Binds one value to the `index`-th `?` (from 1); text and bytes are copied by SQLite.
        /// A size past SQLite's 32-bit lengths is refused as SQLITE_TOOBIG.
        package func bind(_ value: SQLiteValue, at index: Int) throws {
            let position = Int32(index), transient = csqlite_transient()
            let code: Int32 = switch value {
            case .null: sqlite3_bind_null(handle, position)
            case .integer(let number): sqlite3_bind_int64(handle, position, number)
            case .real(let number): sqlite3_bind_double(handle, position, number)
            case .text(var text):
                // An empty string still binds as text, never as NULL (a nil pointer would).
                text.withUTF8 { bytes in
                    guard let start = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, position, "", 0, transient) }
                    guard let length = Int32(exactly: bytes.count) else { return SQLITE_TOOBIG }
                    return start.withMemoryRebound(to: CChar.self, capacity: bytes.count) { sqlite3_bind_text(handle, position, $0, length, transient) }
                }
            case .blob(let bytes):
                bytes.withUnsafeBytes { raw in
                    guard let start = raw.baseAddress, !raw.isEmpty else { return sqlite3_bind_zeroblob(handle, position, 0) }
                    guard let length = Int32(exactly: raw.count) else { return SQLITE_TOOBIG }
                    return sqlite3_bind_blob(handle, position, start, length, transient)
                }
            }
            try SQLiteDatabase.check(code, connection)
        }

        /// The next row, or nil when the statement is done.
        package func step() throws -> Row? {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return nil }
            try SQLiteDatabase.check(code, connection, expecting: SQLITE_ROW)
            return Row(handle: handle, connection: connection)
        }

        /// Binds `values` and steps the statement to its end (an INSERT, UPDATE or DELETE).
        package func run(_ values: [any SQLiteBindable] = []) throws {
            try bind(values)
            defer { reset() }
            while try step() != nil {}
        }

        /// Binds `values` and hands `body` each row.
        package func forEach(_ values: [any SQLiteBindable] = [], _ body: (Row) throws -> Void) throws {
            try bind(values)
            defer { reset() }
            while let row = try step() { try body(row) }
        }

        /// Binds `values` and reads the first row, if any.
        package func first<T>(_ values: [any SQLiteBindable] = [], _ read: (Row) throws -> T) throws -> T? {
            try bind(values)
            defer { reset() }
            return try step().map(read)
        }

        /// Makes the statement ready to run again; the bound values stay until bound anew.
        package func reset() { sqlite3_reset(handle) }
    }

    /// The current row of a statement, valid until it is stepped again. A value is read in
    /// the type asked for, as SQLite converts it (NULL as 0, "" or no bytes).
    package struct Row {
        let handle: OpaquePointer
        let connection: OpaquePointer

        package var columnCount: Int { Int(sqlite3_column_count(handle)) }
        package func name(_ column: Int) -> String { sqlite3_column_name(handle, Int32(column)).map { String(cString: $0) } ?? "" }
        package func isNull(_ column: Int) -> Bool { sqlite3_column_type(handle, Int32(column)) == SQLITE_NULL }

        package func int(_ column: Int) -> Int { Int(sqlite3_column_int64(handle, Int32(column))) }
        package func optionalInt(_ column: Int) -> Int? { isNull(column) ? nil : int(column) }
        package func double(_ column: Int) -> Double { sqlite3_column_double(handle, Int32(column)) }

        /// The value's bytes as text (UTF-8), valid until the row is stepped: no String made.
        /// No text for a value that has some means SQLite ran out of memory converting it.
        package func textBytes(_ column: Int) throws -> UnsafeRawBufferPointer {
            // The text first, then its length: SQLite's order for a value it may convert.
            let text = sqlite3_column_text(handle, Int32(column)), length = Int(sqlite3_column_bytes(handle, Int32(column)))
            guard text != nil || length == 0 else { throw Failure(code: SQLITE_NOMEM, connection: connection) }
            return UnsafeRawBufferPointer(start: text, count: length)
        }

        package func text(_ column: Int) throws -> String { String(decoding: try textBytes(column), as: UTF8.self) }
        package func optionalText(_ column: Int) throws -> String? { isNull(column) ? nil : try text(column) }

        package func blob(_ column: Int) throws -> [UInt8] {
            let bytes = sqlite3_column_blob(handle, Int32(column)), length = Int(sqlite3_column_bytes(handle, Int32(column)))
            guard let bytes else {
                guard length == 0 else { throw Failure(code: SQLITE_NOMEM, connection: connection) }
                return []
            }
            return Array(UnsafeRawBufferPointer(start: bytes, count: length))
        }

        /// The value in the type SQLite stores it as.
        package func value(_ column: Int) throws -> SQLiteValue {
            switch sqlite3_column_type(handle, Int32(column)) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, Int32(column)))
            case SQLITE_FLOAT: return .real(double(column))
            case SQLITE_TEXT: return .text(try text(column))
            case SQLITE_BLOB: return .blob(try blob(column))
            default: return .null
            }
        }
    }
}

extension VaultError.Code {
    /// SQLite failed (a locked or damaged database, a full disk) where the caller has no more
    /// precise outcome to name.
    public static let sqliteFailure = VaultError.Code(name: "sqliteFailure", category: .operational)
}

extension VaultError {
    /// SQLite's failure, in its own words, after what was being done (`context`).
    package static func sqliteFailure(_ context: String, _ failure: SQLiteDatabase.Failure, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.sqliteFailure, "\(context): \(failure.message)", file: file, line: line)
    }
}
