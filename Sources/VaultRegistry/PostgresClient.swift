internal import CLibPQ
internal import CRegistryLoad
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// The one owner of libpq (PostgreSQL's own client): a connection, its results and COPY. Every
/// result status goes through ``check(_:_:)``; every pointer is freed here.
///
/// Results are read in text format and decoded by column type into ``RegistryValue``: a
/// `timestamptz` becomes RFC 3339 UTC text with whole seconds (the session runs in UTC with ISO
/// dates), a boolean `.int(0/1)`, a `bytea` its bytes, so the rules above see what SQLite gives.
final class PostgresClient {
    /// An error the server (or libpq) reported, with its SQLSTATE.
    struct Failure: Error {
        let sqlState: String
        let message: String

        /// A deadlock or a serialization failure: the transaction may simply be run again.
        var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
        /// A constraint the data broke (class 23): the input's fault, not the system's.
        var isConstraint: Bool { sqlState.hasPrefix("23") }
    }

    private let connection: OpaquePointer

    /// Connects; libpq fills what `connection` leaves out from the `PG*` variables, the
    /// password file and the service file, as psql does.
    init(connection text: String) throws {
        try Self.requireLibrary()
        // The connection string's own `passfile` wins over PGPASSFILE, as in libpq.
        let options = try? Self.options(text)
        try Self.requireRegularConfiguration(ProcessInfo.processInfo.environment, passfile: options?["passfile"], service: options?["service"])
        // The client encoding is set here, after the user's string: our text is UTF-8 whatever
        // the database's encoding is.
        let keywords = ["dbname", "fallback_application_name", "client_encoding"], values = [text, "device-revoker", "UTF8"]
        let made = keywords.map(Optional.some).withCStrings { keywordPointers in
            // Both lists end in a null pointer, as libpq wants.
            values.map(Optional.some).withCStrings { valuePointers in PQconnectdbParams(keywordPointers + [nil], valuePointers + [nil], 1) }
        }
        guard let made else { throw Failure(sqlState: "08000", message: "out of memory") }
        guard PQstatus(made) == CONNECTION_OK else {
            let message = Self.lastError(made)
            PQfinish(made)
            throw Failure(sqlState: "08001", message: message)
        }
        connection = made
        // Notices and warnings ("relation already exists, skipping") are not the user's
        // business, and libpq would print them on standard error itself; errors come back as
        // results. Times are read in UTC and ISO form, bytes as hex (see the type's comment).
        try execute("SET client_min_messages = error; SET TimeZone = 'UTC'; SET DateStyle = 'ISO'; SET bytea_output = 'hex'")
    }

    deinit { PQfinish(connection) }

    /// libpq, loaded on use (issue 48): only a command that reaches PostgreSQL maps it.
    private static func requireLibrary() throws {
        try LoadOnUse.require(OpaquePointer(hvt_library_pq()), feature: "reaching a PostgreSQL registry")
    }

    /// The files libpq reads on its own before it connects (the service files, the password
    /// file), where they are: each must be a regular file, since libpq would wait forever on a
    /// FIFO's first read and read /dev/zero until memory ran out (issue 44). A file that is
    /// not there is libpq's to pass over.
    static func requireRegularConfiguration(_ environment: [String: String], passfile: String? = nil, service: String? = nil) throws {
        let home = environment["HOME"].map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        let serviceFiles: [(String?, String)] = [
            (environment["PGSERVICEFILE"] ?? home.map { "\($0)/.pg_service.conf" }, "the PostgreSQL service file"),
            (environment["PGSYSCONFDIR"].map { "\($0)/pg_service.conf" } ?? "/etc/postgresql-common/pg_service.conf", "the system's PostgreSQL service file"),
        ]
        // /dev/null reads as an empty file, the usual way to say "no password file".
        func check(_ files: [(String?, String)]) throws {
            for case let (path?, what) in files where ResolvedPath.realPath(path) != "/dev/null" {
                do {
                    try AtomicFile.requireRegularFileIfPresent(path, what: what)
                } catch let error as VaultError {
                    throw error.withContext(hint: "point PGSERVICEFILE, PGSYSCONFDIR or PGPASSFILE at a regular file, or unset it")
                }
            }
        }
        try check(serviceFiles)
        // libpq takes a service's `passfile` over PGPASSFILE, as the connection string's over both.
        let servicePassfile = (service ?? environment["PGSERVICE"]).flatMap { Self.passfile(ofService: $0, in: serviceFiles.compactMap(\.0)) }
        let files: [(String?, String)] = [(passfile ?? servicePassfile ?? environment["PGPASSFILE"] ?? home.map { "\($0)/.pgpass" }, "the PostgreSQL password file")]
        try check(files)
        // A password file others may read libpq passes over with a warning of its own, printed
        // on standard error as it stands (its name unescaped: a name holding a line break forged
        // a line of this tool's); said here instead, through the one renderer, and refused, as
        // the password it holds would not be used. Only read when no password is given.
        if environment["PGPASSWORD"]?.isEmpty ?? true, let path = files[0].0, ResolvedPath.realPath(path) != "/dev/null" {
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & 0o077 != 0 { throw VaultError.passwordFileOpenToOthers(path, mode: info.st_mode & 0o777) }
        }
    }

    /// The `passfile` the service `name` sets, read as libpq reads the service files: the first
    /// file with a `[name]` section is the service's (the user's before the system's), `#`
    /// begins a comment, `key=value` with spaces around either trimmed. A file past 1 MiB or
    /// unreadable is left to libpq.
    static func passfile(ofService name: String, in files: [String]) -> String? {
        for path in files {
            guard let bytes = try? BoundedRead.file(path, limit: 1 << 20, what: "the PostgreSQL service file") else { continue }
            var inService = false, found = false
            for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
                let text = line.trimmingBlanks()
                if text.isEmpty || text.hasPrefix("#") { continue }
                if text.hasPrefix("[") {
                    if inService { break }
                    inService = text == "[\(name)]"
                    found = found || inService
                    continue
                }
                guard inService, let equals = text.firstIndex(of: "="), text[..<equals].trimmingBlanks() == "passfile" else { continue }
                return text[text.index(after: equals)...].trimmingBlanks()
            }
            if found { return nil }
        }
        return nil
    }

    /// Whether a registry name is a libpq connection string rather than a file name: a
    /// `postgresql://` or `postgres://` URI (any case), or text that starts as a key/value pair
    /// (`host=…`). Decided by look alone, so a string libpq cannot parse is reported as one,
    /// never taken for a file name (and echoed, or created, under that name).
    static func looksLikeConnection(_ text: String) -> Bool {
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") { return true }
        guard !FileManager.default.fileExists(atPath: text) else { return false }
        // /^\s*[A-Za-z_]+\s*=/
        let scalars = Array(text.unicodeScalars)
        var index = scalars.prefix { isPatternSpace($0) }.count
        let name = scalars[index...].prefix { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) }.count
        guard name > 0 else { return false }
        index += name
        index += scalars[index...].prefix { isPatternSpace($0) }.count
        return index < scalars.count && scalars[index] == "="
    }

    /// `password=` or `sslpassword=` (any case, blanks before the `=`) at the start, or after
    /// white space, `?` or `&`: /(^|[\s?&])(ssl)?password\s*=/i.
    static func hasPasswordPair(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        // `word` in any case at `index`, ICU's case-insensitive way: by case folding, where ſ
        // is an s and ß, ẞ are "ss". The index after it, or nil.
        func match(_ word: String, at index: Int) -> Int? {
            var index = index
            var letters = Array(word.unicodeScalars)[...]
            while let letter = letters.first {
                guard index < scalars.count else { return nil }
                let scalar = scalars[index]
                if letters.starts(with: ["s", "s"]), scalar == "\u{DF}" || scalar == "\u{1E9E}" {
                    letters.removeFirst(2)
                } else if scalar == letter || (scalar.isASCII && scalar.properties.lowercaseMapping == String(letter))
                            || (letter == "s" && scalar == "\u{17F}") {
                    letters.removeFirst()
                } else {
                    return nil
                }
                index += 1
            }
            return index
        }
        for start in 0...scalars.count where start == 0 || isPatternSpace(scalars[start - 1]) || ["?", "&", "#"].contains(scalars[start - 1]) {
            for word in ["sslpassword", "password"] {
                guard var index = match(word, at: start) else { continue }
                index += scalars[index...].prefix { isPatternSpace($0) }.count
                if index < scalars.count && scalars[index] == "=" { return true }
            }
        }
        return false
    }

    /// White space as the regular expressions these rules were first written in read `\s`
    /// (ICU's): tab, line feed, form feed, carriage return and Unicode's separators (Z*).
    private static func isPatternSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0C, 0x0D: return true
        default: return [.spaceSeparator, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
        }
    }

    /// Whether the connection string carries a password, looked for in the raw text first (a
    /// `password=` or `sslpassword=` pair, a URI's `user:secret@`, even one libpq would read
    /// otherwise or one nested in a key/value string), then in what libpq parses.
    static func connectionHasPassword(_ text: String, depth: Int = 0) throws -> Bool {
        if hasPasswordPair(text) { return true }
        if let scheme = text.firstRange(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@") {
            let userInfo = text[scheme.upperBound..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                // `host:5432/db?x=a@b` is a port, not a password: digits up to a slash.
                let afterColon = userInfo[userInfo.index(after: colon)...]
                let port = afterColon.prefix { $0 != "/" }
                if !(afterColon.contains("/") && !port.isEmpty && port.allSatisfy(\.isNumber)) { return true }
            }
        }
        let parsed = try options(text)
        if !(parsed["password"] ?? "").isEmpty || !(parsed["sslpassword"] ?? "").isEmpty { return true }
        // A dbname that is itself a connection string libpq expands (`?dbname=postgresql://u:pw@h/d`,
        // the same percent-encoded in a URI's path): its password is one too (a hostile trial).
        if let dbname = parsed["dbname"], depth < 4, isConnectionString(dbname) { return try connectionHasPassword(dbname, depth: depth + 1) }
        return false
    }

    /// Whether libpq takes a dbname for a connection string of its own: it holds `=`, or
    /// begins with a URI's scheme.
    static func isConnectionString(_ dbname: String) -> Bool {
        dbname.contains("=") || dbname.hasPrefix("postgresql://") || dbname.hasPrefix("postgres://")
    }

    /// The connection as a message may name it: its host, port, database and user as libpq
    /// reads them, never the string as given (a hostile trial: a password nested in it was
    /// quoted by "cannot connect"), nor a dbname that is a connection string of its own.
    static func shown(_ connection: String) -> String {
        guard let parsed = try? options(connection) else { return "(the --db given)" }
        let parts = ["host", "port", "dbname", "user", "service"].compactMap { keyword -> String? in
            guard let value = parsed[keyword], !value.isEmpty else { return nil }
            return keyword == "dbname" && isConnectionString(value) ? "dbname=(a connection string, not shown)" : "\(keyword)=\(value)"
        }
        return parts.isEmpty ? "(the default connection)" : parts.joined(separator: " ")
    }

    /// The keywords a connection string sets. libpq's parse errors are not repeated: they may
    /// quote the string, password and all.
    private static func options(_ text: String) throws -> [String: String] {
        try requireLibrary()
        var error: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(text, &error) else {
            PQfreemem(error)
            throw VaultError.badConnection()
        }
        defer { PQconninfoFree(parsed) }
        var options: [String: String] = [:]
        var option = parsed
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { options[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return options
    }

    /// Runs SQL without parameters (several statements may be separated by `;`).
    func execute(_ sql: String) throws {
        try check(PQexec(connection, sql), sql).close()
    }

    /// Runs one statement with `$1…` parameters and returns its rows.
    func query(_ sql: String, _ parameters: [RegistryValue]) throws -> (columns: [String], rows: [[RegistryValue]]) {
        let result = try run(sql, parameters)
        defer { result.close() }
        return result.decoded()
    }

    /// Runs one INSERT, UPDATE or DELETE with `$1…` parameters and returns how many rows it
    /// changed (the command tag's count).
    func change(_ sql: String, _ parameters: [RegistryValue]) throws -> Int {
        let result = try run(sql, parameters)
        defer { result.close() }
        return PQcmdTuples(result.pointer).flatMap { Int(String(cString: $0)) } ?? 0
    }

    /// Runs one query with `$1…` parameters and hands `row` each row, whose `column(i)` is
    /// the i-th field as the server sent it in text format (none for NULL), valid only during
    /// that call: no String or value is made for each field. Read in pieces (``inPieces(_:_:_:)``).
    func forEachRow(_ sql: String, _ parameters: [RegistryValue], _ row: (_ column: (Int) -> UnsafeRawBufferPointer) throws -> Void) throws {
        try inPieces(sql, parameters) { piece in
            let pointer = piece.pointer
            for index in 0..<PQntuples(pointer) {
                try row { column in
                    UnsafeRawBufferPointer(start: PQgetvalue(pointer, index, Int32(column)), count: Int(PQgetlength(pointer, index, Int32(column))))
                }
            }
        }
    }

    /// Rows a cursor fetches at a time: libpq holds a whole result in memory, so a query as
    /// large as the registry (a batch's 500,000 closed memberships, its log rows) is read
    /// through a cursor of its own in pieces this size, and statements may run between them.
    static let rowsPerPiece = 4096
    private var cursors = 0

    /// Runs one query (in the current transaction, as cursors need) through a cursor, handing
    /// `piece` each result of at most ``rowsPerPiece`` rows; the cursor is closed after.
    func inPieces(_ sql: String, _ parameters: [RegistryValue], _ piece: (Result) throws -> Void) throws {
        cursors += 1
        let cursor = "registry_rows_\(cursors)"
        try run("DECLARE \(cursor) NO SCROLL CURSOR FOR \(sql)", parameters).close()
        while true {
            let fetched = try check(PQexec(connection, "FETCH FORWARD \(Self.rowsPerPiece) FROM \(cursor)"), sql)
            defer { fetched.close() }
            let count = Int(PQntuples(fetched.pointer))
            if count > 0 { try piece(fetched) }
            if count < Self.rowsPerPiece { break }
        }
        try execute("CLOSE \(cursor)")
    }

    private func run(_ sql: String, _ parameters: [RegistryValue]) throws -> Result {
        let encoded = parameters.map(Self.encode)
        let texts = encoded.map(\.text)
        return try texts.withCStrings { valuePointers in
            try check(PQexecParams(connection, sql, Int32(encoded.count), encoded.map(\.type), valuePointers, nil, nil, 0), sql)
        }
    }

    /// `COPY … FROM STDIN`: `send` is given to `produce`, which calls it with the data in
    /// COPY's text format. If `produce` throws, the COPY is cancelled and the error rethrown.
    func copyIn(_ sql: String, _ produce: (_ send: ([UInt8]) throws -> Void) throws -> Void) throws {
        let start = PQexec(connection, sql)
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            try check(start, sql).close()
            throw Failure(sqlState: "XX000", message: "the server did not start the COPY")
        }
        PQclear(start)
        do {
            try produce { bytes in
                let sent = bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(connection, $0.baseAddress, Int32($0.count)) }
                }
                guard sent == 1 else { throw Failure(sqlState: "08006", message: Self.lastError(connection)) }
            }
        } catch {
            PQputCopyEnd(connection, "cancelled by the client")
            try? finishCopy(sql)
            throw error
        }
        guard PQputCopyEnd(connection, nil) == 1 else { throw Failure(sqlState: "08006", message: Self.lastError(connection)) }
        try finishCopy(sql)
    }

    /// Reads every result a COPY left; the first failure is thrown.
    private func finishCopy(_ sql: String) throws {
        var failure: Error?
        while let result = PQgetResult(connection) {
            do { try check(result, sql).close() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// A result that succeeded, or the server's error as a ``Failure``.
    private func check(_ result: OpaquePointer?, _ sql: String) throws -> Result {
        guard let result else { throw Failure(sqlState: "08006", message: Self.lastError(connection)) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Result(result)
        default:
            func field(_ code: Character) -> String? {
                PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
            }
            let failure = Failure(sqlState: field("C") ?? "XX000", message: field("M") ?? Self.lastError(connection))
            PQclear(result)
            throw failure
        }
    }

    private static func lastError(_ connection: OpaquePointer) -> String {
        // libpq's messages end in a newline and may span lines ("\n\tIs the server running…").
        String(cString: PQerrorMessage(connection)).split(whereSeparator: \.isNewline)
            .map { $0.trimmingBlanks() }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// A value as a text-format parameter, with the type it must have where the statement
    /// alone cannot say (a parameter in a SELECT list is otherwise taken as text).
    private static func encode(_ value: RegistryValue) -> (type: Oid, text: String?) {
        switch value {
        case .null: (0, nil)
        case .int(let number): (ColumnType.int8, String(number))
        case .text(let text): (ColumnType.text, text)
        case .bytes(let bytes): (ColumnType.bytea, "\\x" + Hex.encode(bytes))
        case .bool(let flag): (ColumnType.bool, flag ? "t" : "f")
        case .time(let text): (ColumnType.timestamptz, text)
        }
    }

    /// The built-in type numbers we encode and decode (pg_type.oid, fixed across versions).
    enum ColumnType {
        static let bool: Oid = 16, bytea: Oid = 17, int8: Oid = 20, int2: Oid = 21, int4: Oid = 23, text: Oid = 25, timestamptz: Oid = 1184
    }

    /// A PGresult, freed by ``close()`` (results live only inside one call of this file).
    struct Result {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        func close() { PQclear(pointer) }

        func decoded() -> (columns: [String], rows: [[RegistryValue]]) {
            let columnCount = Int(PQnfields(pointer)), rowCount = Int(PQntuples(pointer))
            let columns = (0..<columnCount).map { String(cString: PQfname(pointer, Int32($0))) }
            let types = (0..<columnCount).map { PQftype(pointer, Int32($0)) }
            let rows = (0..<rowCount).map { row in
                (0..<columnCount).map { column -> RegistryValue in
                    guard PQgetisnull(pointer, Int32(row), Int32(column)) == 0 else { return .null }
                    let text = String(cString: PQgetvalue(pointer, Int32(row), Int32(column)))
                    return PostgresClient.decode(text, type: types[column])
                }
            }
            return (columns, rows)
        }
    }

    static func decode(_ text: String, type: Oid) -> RegistryValue {
        switch type {
        case ColumnType.bool: .int(text == "t" ? 1 : 0)
        case ColumnType.int2, ColumnType.int4, ColumnType.int8: Int(text).map(RegistryValue.int) ?? .text(text)
        case ColumnType.bytea: Hex.decode(String(text.dropFirst(2))).map(RegistryValue.bytes) ?? .text(text)
        // "2025-11-19 10:00:00.123+00" in a UTC session: whole seconds, RFC 3339. The server
        // writes times in ASCII, cut as bytes (by Character, a fifth of reading a batch's log).
        case ColumnType.timestamptz where text.utf8.count >= 19:
            .text(String(decoding: text.utf8.prefix(10), as: UTF8.self) + "T" + String(decoding: text.utf8.dropFirst(11).prefix(8), as: UTF8.self) + "Z")
        default: .text(text)
        }
    }
}

extension Array where Element == String? {
    /// The strings as a C array of NUL-terminated strings, alive during `body`; nil stays a
    /// null pointer (an SQL NULL parameter).
    fileprivate func withCStrings<R>(_ body: ([UnsafePointer<CChar>?]) throws -> R) rethrows -> R {
        let copies = map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        return try body(copies.map { UnsafePointer($0) })
    }
}
