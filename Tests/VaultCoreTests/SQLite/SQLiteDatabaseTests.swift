import FoundationEssentials
import Glibc
import Testing
@testable import VaultCore
@testable import VaultRegistry
@testable import VaultSQLite

/// SQLite's one owner: values bound and read back whatever they hold, transactions that end
/// whole, and its failures (a lock held, a file that is not a database, a value too large, a
/// side file that is not a regular file) thrown as what they are.
@Suite struct SQLiteDatabaseTests {
    /// A folder of its own, removed after `body`.
    private func inFolder(_ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    private func vaultError(_ body: () throws -> Void) -> VaultError? {
        do { try body(); return nil } catch let error as VaultError { return error } catch { return nil }
    }

    private func failure(_ body: () throws -> Void) -> SQLiteDatabase.Failure? {
        do {
            try body()
            return nil
        } catch let failure as SQLiteDatabase.Failure {
            return failure
        } catch {
            Issue.record("not SQLite's failure: \(error)")
            return nil
        }
    }

    /// Seeded values of every kind, edge cases first: each is bound (never written into the
    /// SQL: text full of quotes and semicolons stays text) and read back with the type SQLite
    /// stored it as. An empty text is text and an empty blob a blob, neither NULL.
    @Test func valuesRoundTripWithTheirType() throws {
        var generator = SplitMix(seed: 0x5117E)
        var values: [SQLiteValue] = [.null, .integer(0), .integer(.min), .integer(.max), .real(-0.5), .real(1e300), .text(""), .blob([]),
                                     .text("'); DROP TABLE t; --"), .text("\"quoted\" ? ?1 :name"), .text("é\u{0}z"), .blob([0, 0xff, 0])]
        for _ in 0..<300 {
            switch generator.next() % 4 {
            case 0: values.append(.integer(Int64(bitPattern: generator.next())))
            case 1: values.append(.real(Double(Int64(bitPattern: generator.next())) / 1024))
            case 2: values.append(.text(String((0..<Int(generator.next() % 40)).map { _ in Character(UnicodeScalar(UInt8(32 + generator.next() % 95))) })))
            default: values.append(.blob((0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }))
            }
        }
        let database = try SQLiteDatabase.inMemory()
        try database.write { db in
            try db.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, v)")
            try db.prepare("INSERT INTO t (seq, v) VALUES (?, ?)") { insert in
                for (index, value) in values.enumerated() { try insert.run([index, value]) }
            }
        }
        var read: [SQLiteValue] = [], types: [String] = []
        try database.read { db in
            try db.forEach("SELECT v, typeof(v) FROM t ORDER BY seq") { row in
                read.append(try row.value(0))
                types.append(try row.text(1))
            }
        }
        #expect(read == values)
        #expect(types == values.map {
            switch $0 {
            case .null: "null"
            case .integer: "integer"
            case .real: "real"
            case .text: "text"
            case .blob: "blob"
            }
        })
        #expect(try database.read { try $0.strings("SELECT name FROM sqlite_master") } == ["t"])
    }

    /// SQL of several statements takes its values in order, each statement as many as it has;
    /// values that do not come out even are refused before anything is left half done.
    @Test func severalStatementsShareTheirValues() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.write { db in
            try db.execute("CREATE TABLE t (a, b); INSERT INTO t VALUES (?, ?); INSERT INTO t VALUES (?1, ?1);  -- a comment", [1, "two", 3])
        }
        #expect(try database.read { try $0.strings("SELECT a || '/' || b FROM t ORDER BY rowid") } == ["1/two", "3/3"])
        for values: [any SQLiteBindable] in [[4], [4, 5, 6]] {
            let uneven = failure { try database.write { try $0.execute("INSERT INTO t VALUES (?, ?)", values) } }
            #expect(uneven?.message == (values.count < 2 ? "too few values for the SQL" : "too many values for the SQL"))
        }
        #expect(try database.read { try $0.strings("SELECT count(*) FROM t") } == ["2"])
    }

    @Test func aTransactionEndsWhole() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.write { try $0.execute("CREATE TABLE t (v INTEGER NOT NULL)") }
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try database.write { db in
                try db.execute("INSERT INTO t VALUES (?)", [1])
                throw Stop()
            }
        }
        try database.transaction(.immediate) { db in
            try db.execute("INSERT INTO t VALUES (?)", [2])
            return ((), commit: false)
        }
        // A statement's failure in the middle undoes the statements before it too.
        let constraint = failure {
            try database.write { db in
                try db.execute("INSERT INTO t VALUES (?)", [3])
                try db.execute("INSERT INTO t VALUES (?)", [Int?.none])
            }
        }
        #expect(constraint?.isConstraint == true)
        #expect(constraint?.message == "NOT NULL constraint failed: t.v")
        try database.write { try $0.execute("INSERT INTO t VALUES (?)", [4]) }
        #expect(try database.read { try $0.strings("SELECT v FROM t") } == ["4"])
        // The connection is left outside any transaction whatever happened.
        #expect(try database.withConnection { $0.isAutocommit })
    }

    /// A second connection meets the first one's write lock: with no busy timeout it fails at
    /// once, SQLITE_BUSY, and the registry names it as SQLite's failure (exit 1), not the input's.
    @Test func aLockHeldElsewhereIsBusy() throws {
        try inFolder { folder in
            let path = folder + "/locked.sqlite"
            let holder = try SQLiteDatabase(path: path, access: .create)
            try holder.write { try $0.execute("CREATE TABLE t (v)") }
            let waiter = try SQLiteDatabase(path: path, access: .readWrite)
            let busy = try holder.write { _ in failure { try waiter.write { try $0.execute("INSERT INTO t VALUES (?)", [1]) } } }
            #expect(busy?.code == 5)  // SQLITE_BUSY, with no extended code
            #expect(busy?.message == "database is locked")
            let named = SQLiteRegistryEngine.failure(try #require(busy), "the registry '\(path)'")
            #expect(named.code == .sqliteFailure && named.code.category == .operational)
            #expect(named.reason == "the registry '\(path)': database is locked")
            // Once the lock is gone, the same connection writes.
            try waiter.write { try $0.execute("INSERT INTO t VALUES (?)", [1]) }
            #expect(try holder.read { try $0.strings("SELECT v FROM t") } == ["1"])
        }
    }

    /// Seeded bytes that are not a database (at least its 100-byte header: SQLite reads a
    /// shorter file as an empty database): the connection opens (SQLite reads lazily) and
    /// its first read fails SQLITE_NOTADB; a registry of them is the input's fault (exit 2).
    @Test func aFileThatIsNotADatabase() throws {
        var generator = SplitMix(seed: 0xBAD_F11E)
        try inFolder { folder in
            for size in [100, 512, 4096, 65_536] {
                let path = folder + "/corrupt-\(size).sqlite"
                try Data((0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }).write(to: URL(fileURLWithPath: path))
                let database = try SQLiteDatabase(path: path, access: .readOnly)
                let notADatabase = failure { _ = try database.read { try $0.strings("SELECT name FROM sqlite_master") } }
                #expect(notADatabase?.isNotADatabase == true, "\(size) bytes")
                for access in [DeviceRegistry.Access.readOnly, .readWrite] {
                    let refused = vaultError { _ = try DeviceRegistry(path: path, access: access) }
                    #expect(refused?.code == .malformedDocument)
                    #expect(refused?.reason == "cannot open the registry '\(path)': the file is not a database")
                }
            }
        }
    }

    /// A value past ``SQLiteDatabase/maximumValueBytes`` is refused, made or read, instead of
    /// being held in memory whole.
    @Test func aValueTooLargeIsRefused() throws {
        let database = try SQLiteDatabase.inMemory()
        let tooBig = failure { _ = try database.read { try $0.first("SELECT length(zeroblob(?))", [Int(SQLiteDatabase.maximumValueBytes) + 1]) { $0.int(0) } } }
        #expect(tooBig?.message == "string or blob too big")
        #expect(try database.read { try $0.first("SELECT length(zeroblob(?))", [Int(SQLiteDatabase.maximumValueBytes)]) { $0.int(0) } } == Int(SQLiteDatabase.maximumValueBytes))
    }

    /// A registry whose rollback journal, log or shared-memory file is not a regular file (a
    /// FIFO SQLite would wait on forever, a folder) is refused, naming it, before SQLite opens
    /// anything: the registry is left as it was.
    @Test func aSideFileThatIsNotRegularIsRefused() throws {
        try inFolder { folder in
            let (made, _) = try DeviceRegistryTests().registry(users: 1, perUser: 1)
            let path = folder + "/registry.sqlite"
            try FileManager.default.copyItem(atPath: made.path, toPath: path)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            for suffix in ["-journal", "-wal", "-shm"] {
                for kind in ["fifo", "folder"] {
                    let side = path + suffix
                    if kind == "fifo" { #expect(mkfifo(side, 0o600) == 0) } else { try FileManager.default.createDirectory(atPath: side, withIntermediateDirectories: false) }
                    for access in [DeviceRegistry.Access.readOnly, .readWrite] {
                        let refused = vaultError { _ = try DeviceRegistry(path: path, access: access) }
                        #expect(refused != nil, "\(suffix) \(kind)")
                        #expect(refused?.code == .foreignSideFile, "\(suffix) \(kind): \(String(describing: refused))")
                        #expect(refused?.reason.contains(side) == true, "\(suffix) \(kind): \(String(describing: refused))")
                    }
                    try FileManager.default.removeItem(atPath: side)
                }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["registry.sqlite"])
        }
    }

    /// Each step once, in order, recorded by name; a name the database holds that the steps do
    /// not know (a later version's) stays; a step recorded already is not run again.
    @Test func migrationsApplyOnce() throws {
        let database = try SQLiteDatabase.inMemory()
        try database.write { db in
            try db.execute("CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            try db.execute("INSERT INTO grdb_migrations VALUES (?)", ["from a later version"])
        }
        let first = SQLiteMigrations([("one", "CREATE TABLE a (v)"), ("two", "ALTER TABLE a ADD COLUMN w")])
        try first.migrate(database)
        try first.migrate(database)
        try SQLiteMigrations([("one", "CREATE TABLE a (v)"), ("two", "ALTER TABLE a ADD COLUMN w"), ("three", "CREATE TABLE b (v)")]).migrate(database)
        #expect(try database.read { try $0.strings("SELECT identifier FROM grdb_migrations ORDER BY rowid") } == ["from a later version", "one", "two", "three"])
        #expect(try database.read { try $0.strings("SELECT name FROM pragma_table_info('a')") } == ["v", "w"])
        // A step that fails leaves neither its changes nor its record.
        let broken = failure { try SQLiteMigrations([("four", "CREATE TABLE c (v); CREATE TABLE b (v)")]).migrate(database) }
        #expect(broken?.message == "table b already exists")
        #expect(try database.read { try $0.strings("SELECT name FROM sqlite_master WHERE name = 'c'") }.isEmpty)
        #expect(try database.read { try $0.strings("SELECT identifier FROM grdb_migrations WHERE identifier = 'four'") }.isEmpty)
    }

    @Test func aClosedDatabaseRefusesUse() throws {
        let database = try SQLiteDatabase.inMemory()
        database.close()
        database.close()
        let closed = failure { try database.withConnection { try $0.execute("SELECT 1") } }
        #expect(closed?.message == "the database ':memory:' is closed")
    }

    @Test func aMissingFileIsNotMadeUnlessAsked() throws {
        try inFolder { folder in
            for access in [SQLiteDatabase.Access.readOnly, .readWrite] {
                let missing = failure { _ = try SQLiteDatabase(path: folder + "/none.sqlite", access: access) }
                #expect(missing?.message == "unable to open database file")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(left.isEmpty)
        }
    }
}

/// SplitMix64: a seeded source, so a failure names inputs that come again.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A path is always a file, whatever it looks like to SQLite: `file:…` (a URI to SQLite as Debian
/// builds it), `:memory:` and the empty name are opened as the files the tool's own steps (the
/// journal's lock, the registry's atomic write) use.
@Suite struct SQLiteDatabasePathTests {
    @Test func namesSQLiteReadsOtherwiseAreFiles() {
        #expect(SQLiteDatabase.fileName("file:r.db") == "./file:r.db")
        #expect(SQLiteDatabase.fileName(":memory:") == "./:memory:")
        #expect(SQLiteDatabase.fileName("") == "./")
        #expect(SQLiteDatabase.fileName("r.db") == "r.db")
        #expect(SQLiteDatabase.fileName("/tmp/file:r.db") == "/tmp/file:r.db")
    }

    /// A relative `file:` path with a URI's query: what is written is in that file, not in
    /// memory nor in another file named by the URI.
    @Test func aRelativeFileColonPathIsThatFile() throws {
        let name = "hvt-sqlite-\(UUID().uuidString).db"
        let path = "file:\(name)?mode=memory"
        defer { unlink(path); unlink(name) }
        do {
            let database = try SQLiteDatabase(path: path, access: .create)
            try database.write { try $0.execute("CREATE TABLE kept (x)") }
        }
        #expect(access(path, F_OK) == 0)
        #expect(access(name, F_OK) != 0)
        let reopened = try SQLiteDatabase(path: path, access: .readOnly)
        #expect(try reopened.read { try $0.strings("SELECT name FROM sqlite_master") } == ["kept"])
    }
}
