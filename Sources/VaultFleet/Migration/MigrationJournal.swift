import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultSQLite

/// What became of one job of a migration run, a folder's or a bucket's: the verdict its report
/// prints and its journal keeps (the raw values are both).
public enum MigrationStatus: String, Sendable, CaseIterable {
    case migrated, unchanged, failed
    /// A bucket run: another writer changed the vault on every attempt; theirs was kept.
    case conflict
    /// A bucket run: no key for this household, so the vault is left for the app.
    case noKey = "no-key"
    /// A dry run's verdict for a vault that would be migrated.
    case wouldMigrate = "would-migrate"
    /// Done by an earlier, interrupted run of the same batch.
    case previouslyDone = "previously-done"
}

/// Where a job stands in a journal, as the `state` column of either kind holds it: `pending`
/// (a folder batch's line not yet run), `writing` (a bucket write sent, its outcome unknown until
/// settled), then `done` or one of the ends that a rerun tries again.
enum JournalState: String, Sendable {
    case pending, writing, done, failed, conflict
    case noKey = "no-key"
}

/// A batch's SQLite journal, held by one run at a time: an exclusive flock(2) on the file is
/// taken before SQLite opens it, and the kernel drops it when the run dies, even by SIGKILL. The
/// folder batch (``BatchMigration``) and the bucket batch (``BucketMigration``) open theirs here.
final class MigrationJournal: Sendable {
    /// The one connection, shared by the run's workers (each transaction one call).
    let database: SQLiteDatabase
    private let lock: Int32
    let path: String
    /// Whether this run made the file, so a run refused right after opening it can remove it.
    let created: Bool
    /// The side files that were there before this run (SQLite's, by the claim): never this
    /// run's to remove.
    private let foundSideFiles: Set<String>
    /// Where it is, with the folders this run made for it.
    private let location: OutputLocation

    /// `writeAheadLog`: a commit appends to the log instead of rewriting pages, so recording a job
    /// costs little; with `synchronous = NORMAL` it still survives the process being killed.
    /// `tables` are the journal's own: a database holding any other table (a registry, another
    /// tool's file given as `--journal` by mistake) is refused before anything is added to it.
    /// A run refused here leaves nothing it made: SQLite is loaded before the file is made (a
    /// missing library is exit 69 with no journal behind), the journal's missing folders are
    /// made for it (as `--out-dir`'s are) and taken away again, and a journal this run made is
    /// removed when it cannot be opened as one, while this run holds its lock. A run that made
    /// the file but lost the lock to another (which opened it in between) removes nothing: the
    /// file is the other run's now. A lock taken on a file no longer at `path` (another run
    /// removed it meanwhile) is no lock: refused as in use, so two runs never share a journal.
    init(path: String, migrations: SQLiteMigrations, tables: Set<String>, writeAheadLog: Bool = false) throws {
        try SQLiteDatabase.requireLibrary()
        let location = try OutputLocation(path, createFolders: true, what: "the journal")
        // A vault or a household log named as the journal is refused as any output over one is
        // (SQLite only said "file is not a database", exit 1: a trial).
        if let stored = location.stored, stored != .database { throw VaultError.journalIsAStore(path, stored.description) }
        self.location = location
        // Side files not SQLite's refuse the run before anything is made; those that are there
        // are remembered, so that a refused run removes only what it made (a hostile trial: a
        // note at `journal.sqlite-journal` was refused, then deleted with the journal made).
        try SideFiles.claim(path)
        let found = Self.existingSideFiles(path)
        foundSideFiles = found
        try location.makeFolder()
        var lock = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        let created = lock >= 0
        self.created = created
        if lock < 0, errno == EEXIST { lock = open(path, O_RDWR | O_CLOEXEC) }
        guard lock >= 0 else {
            let error = AtomicFile.ioError(errno: errno, "cannot open the journal '\(path)'")
            location.removeMadeFolders()
            throw error
        }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0, Self.isStill(lock, at: path) else {
            close(lock)
            throw VaultError.journalInUse(path)
        }
        // Holding the lock, in this order: SQLite closed (its last close removes its side files
        // by name, which must still be this run's), what this run made removed, then the lock.
        var opened: SQLiteDatabase?
        func giveUp() {
            opened?.close()
            if created { Self.remove(path, keeping: found) }
            location.removeMadeFolders()
            close(lock)
        }
        self.path = path
        do {
            let database = try SQLiteDatabase(path: path, access: .create, busyTimeout: 10)
            opened = database
            self.database = database
            let found = try database.read { try $0.strings("SELECT name FROM sqlite_master WHERE type = 'table'") }
            let foreign = Set(found).subtracting(tables.union([SQLiteMigrations.table, "sqlite_sequence"]))
            guard foreign.isEmpty else { throw VaultError.notAJournal(path, table: foreign.min()!) }
            // Only once the file is known to be a journal: switching another database to WAL
            // would change it for good. The run has this one connection, so this holds for the run.
            if writeAheadLog {
                try database.withConnection { try $0.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL") }
            }
            try migrations.migrate(database)
        } catch let error as SQLiteDatabase.Failure {
            giveUp()
            throw VaultError.journalUnusable(path, error)
        } catch {
            giveUp()
            throw error
        }
        self.lock = lock
    }

    /// Refuses a journal, or one of SQLite's side files beside it, that is one of the run's
    /// `inputs` (a manifest, a key file): SQLite would rewrite or delete it.
    static func checkFiles(_ path: String, inputs: [FileSet.Input]) throws {
        guard path != "-" else { throw VaultError.journalNotAFile() }
        // Before anything is made or written (a bucket run probes its store first).
        try SQLiteDatabase.requireLibrary()
        let outputs = [FileSet.Input("the journal", path)] + FileSet.databaseSideFiles(of: path, owner: "the journal")
        let locations = try outputs.map { ($0.label, try OutputLocation($0.path, createFolders: true, what: $0.label)) }
        if let key = locations.first(where: { $0.1.holdsKey }) { throw VaultError.wouldReplaceKey(key.1.path) }
        try FileSet.check(inputs: inputs, outputs: locations)
    }

    /// Removes the journal when this run made it: a refused run leaves nothing behind.
    /// Called only on the way to a refusal: the connection is closed first (see `init`).
    func removeIfCreated() {
        guard created else { return }
        database.close()
        Self.remove(path, keeping: foundSideFiles)
        location.removeMadeFolders()
    }

    /// The side files first: a kill in between leaves no stale log beside a database made anew.
    /// Those in `keeping` were there before the run, and stay.
    private static func remove(_ path: String, keeping found: Set<String>) {
        for suffix in ["-wal", "-shm", "-journal"] where !found.contains(suffix) { unlink(path + suffix) }
        unlink(path)
    }

    /// Which of SQLite's side-file suffixes have a file beside `path` now.
    private static func existingSideFiles(_ path: String) -> Set<String> {
        Set(["-wal", "-shm", "-journal"].filter { suffix in
            var info = stat()
            return lstat(path + suffix, &info) == 0
        })
    }

    /// Whether the locked descriptor is still the file at `path` (not one removed meanwhile).
    private static func isStill(_ descriptor: Int32, at path: String) -> Bool {
        var held = stat(), named = stat()
        return fstat(descriptor, &held) == 0 && held.st_nlink > 0 && stat(path, &named) == 0
            && held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    deinit { close(lock) }
}

extension VaultError.Code {
    /// Another run holds the journal's lock.
    public static let journalInUse = VaultError.Code(name: "journalInUse", category: .refused)
}

extension VaultError {
    static func journalIsAStore(_ path: String, _ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notAJournal, "'\(path)' is \(what), not a migration journal; nothing was changed", file: file, line: line)
    }

    static func notAJournal(_ path: String, table: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notAJournal, "'\(path)' is not a migration journal: it holds a table '\(table.prefix(64))'", file: file, line: line)
    }

    /// A journal whose record of its temporary names is not in the form the tool writes
    /// (damaged, or edited by hand): not trusted to say what a rerun may remove.
    static func untrustedJournal(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notAJournal, "the journal '\(path)' records its temporary files in a form the tool does not write; it may be damaged, so nothing is removed or run by it",
                   file: file, line: line)
    }

    /// The journal could not be opened or set up (permissions, a damaged file, a full disk).
    static func journalUnusable(_ path: String, _ failure: SQLiteDatabase.Failure, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError.sqliteFailure("cannot use the journal '\(path)'", failure, file: file, line: line)
    }

    /// The journal could not record a job's end (a full disk, a lost folder): the run cannot keep
    /// its promise to resume, so it stops; outputs already written are complete either way.
    static func journalNotWritten(recording what: String, _ failure: SQLiteDatabase.Failure, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError.sqliteFailure("could not record \(what) in the journal", failure, file: file, line: line)
    }

    static func journalInUse(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.journalInUse, "another migration run is using the journal '\(path)'", file: file, line: line)
    }
}
