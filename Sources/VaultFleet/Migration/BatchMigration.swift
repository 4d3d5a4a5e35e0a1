import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultSQLite

/// Migrating many vaults in one run, crash-safely and resumably (issue 4).
///
/// A SQLite journal (``MigrationJournal``) holds one row per manifest line: pending, done or
/// failed, with the error. Jobs go in groups (``groupSize``): each writes its output through the write path
/// (``StagedOutput``), the group's outputs are made durable and named together, and only then
/// are its jobs marked done, in one transaction. A run killed at any instant leaves every output
/// either absent, the old one, or complete; started again, it skips done jobs and retries the
/// rest. One failed vault does not stop the others.
///
/// Before anything is written, every output is checked against every file the batch reads (the
/// manifest, each line's vault and key files) and the journal (issue 16): a vault stored inside
/// the output folder, or named like a key file or the journal there, refuses the whole batch.
/// A dry run makes the same checks and migrations in memory and writes nothing at all: no
/// folder, no journal.
public final class BatchMigration: Sendable {
    /// One manifest line.
    public struct Job: Sendable, Equatable {
        public let line: Int
        public let vault: String
        public let keyFile: String?
        public let vaultKeyFile: String?
        public let output: String
    }

    public struct Result: Sendable {
        public let job: Job
        public let status: MigrationStatus
        public let from: Int?
        public let to: Int
        public let error: VaultError?
        /// What a lossy migration (`allowLossy`) dropped from this vault, each value named.
        public var losses: [String] = []
    }

    public let target: Int
    public let allowLossy: Bool
    /// Nil in a dry run, which has no journal.
    private let journal: MigrationJournal?
    private var database: SQLiteDatabase? { journal?.database }
    /// The manifest's lines, read back a group at a time (``ManifestStaging``).
    private let staging: ManifestStaging
    /// How many jobs the manifest has.
    public let total: Int
    private let folder: OutputFolder
    /// 0666 less the umask, read once: umask(2) can only be read by setting it, which two
    /// workers doing at once could leave changed for the whole process.
    private let outputMode = AtomicFile.publicFileMode
    /// The start of the temporary names of this batch's outputs, kept in its journal: a
    /// manifest line's output is `<prefix><line>.tmp` until it has its own name, so a rerun
    /// after a kill removes exactly those (nil in a dry run).
    private let temporaryPrefix: String?
    /// Key files read once a run, not once a job.
    private let keys = KeyCache()

    /// The journal of a batch: `named`, else beside the output folder, not in it (`migrated` →
    /// `migrated.migrate-journal.sqlite`), so the folder holds only vaults and can be synced or
    /// counted as it is. A folder named `.`, `..` or `/` has no such neighbour inside what the
    /// operator named, so its journal must be named; and a folder holding the journal of a run
    /// an earlier version began (inside it) resumes only through that one, never starts over.
    public static func journalPath(named: String?, outDir: String) throws -> String {
        if let named {
            guard named != "-" else { throw VaultError.journalNotAFile() }
            return named
        }
        let earlier = outDir + "/.migrate-journal.sqlite"
        if FileManager.default.fileExists(atPath: earlier) { throw VaultError.earlierJournal(earlier) }
        var folder = outDir
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        guard !["", ".", "..", "/"].contains(OutputLocation.split(folder).name) else { throw VaultError.journalNeedsAName(outDir: outDir) }
        // "new/../store" with no "new" is the existing "store": its journal goes beside that
        // (the kernel could not open "new/../store.migrate-journal.sqlite").
        if folder.split(separator: "/").contains(".."), let resolved = ResolvedPath(folder) { folder = resolved.path }
        return folder + ".migrate-journal.sqlite"
    }

    /// Reads the manifest, checks every file of the batch, and (unless `dryRun`) opens or
    /// creates the journal. A journal from another manifest or target version is refused: mixing
    /// two batches is how work gets lost. `command` names this batch to a person (the tool: its
    /// command line); the journal keeps it, so a journal refusing another batch names its own.
    public init(manifestPath: String, outDir: String, journalPath: String, target: Int, allowLossy: Bool, dryRun: Bool = false,
                command: String = "") throws {
        try Migration.checkTarget(target)
        self.target = target
        self.allowLossy = allowLossy
        staging = try ManifestStaging(manifestPath: manifestPath, outDir: outDir)
        total = staging.count
        // Objects are migrated where they live (``BucketMigration``), never into a local folder.
        if let object = try staging.firstObject() { throw VaultError.objectInFolderBatch(line: object.line, object: object.vault) }
        // Schema 3's secrets are sealed under a key only the parent key derives: a line with a
        // vault key alone is refused before any folder or journal is made.
        if Migration.needsParentKey(target), let line = try staging.firstJobWithoutParentKey() {
            throw VaultError.parentKeyNeeded("manifest line \(line): a migration to schema version \(target)")
        }
        // A schema 3 vault is written only with its signed household log, which fleet runs do
        // not yet write (docs/fleet.md, "Schema 3").
        if target >= 3 { throw VaultError.fleetRunCannotWriteLogs(target) }
        folder = try OutputFolder(outDir, create: true)
        try staging.checkFiles(manifestPath: manifestPath, journal: OutputLocation(journalPath, createFolders: true, what: "the journal"), folder: folder)
        // Everything a typo could get wrong is checked before the journal exists: the target
        // (above), the manifest's lines, that each named file is there, and that the output
        // folder can be written or made. A mistake then costs nothing to correct.
        var lastReadable: String?  // a key file many lines share is checked once for their run
        try staging.forEachJob { job in
            for (what, path) in [("vault", job.vault), ("key file", job.keyFile), ("vault-key file", job.vaultKeyFile)] {
                guard let path, path != lastReadable else { continue }
                if access(path, R_OK) != 0 { throw VaultError.manifestFileUnreadable(line: job.line, what: what, path: path, errno: errno) }
                if what != "vault" { lastReadable = path }
            }
        }
        try folder.requireWritable(what: "the output folder")
        guard !dryRun else {
            journal = nil
            temporaryPrefix = nil
            return
        }
        _ = try folder.opened()
        do {
            let opened = try MigrationJournal(path: journalPath, migrations: Self.migrations, tables: ["run", "job"])
            do {
                temporaryPrefix = try Self.start(opened, path: journalPath, target: target, staging: staging, command: command)
            } catch {
                opened.removeIfCreated()
                throw error
            }
            journal = opened
        } catch {
            // A refused run leaves nothing it made: the folder it just made, while still empty;
            // but not when another run holds the journal: that run may have made the same
            // folder at the same moment and be writing into it (a trial's two runs started
            // together: the loser's rmdir failed every vault of the winner).
            if (error as? VaultError)?.code != .journalInUse { folder.removeIfMadeAndEmpty() }
            throw error
        }
        let prefix = temporaryPrefix!, staging = staging
        try folder.removeLeftoverTemporaryFiles { name in
            guard name.hasPrefix(prefix), name.hasSuffix(".tmp") else { return false }
            let text = name.dropFirst(prefix.count).dropLast(4)
            // A line of this manifest, its number written as the batch writes it.
            guard let line = Int(text), String(line) == text else { return false }
            return staging.hasLine(line)
        }
    }

    /// The temporary name of a manifest line's output.
    private func temporaryName(_ job: Job) -> String? { temporaryPrefix.map { "\($0)\(job.line).tmp" } }

    /// Records a new batch in its journal, or checks that the journal is this batch's; returns
    /// the batch's temporary-name prefix, made once and kept in the journal.
    private static func start(_ journal: MigrationJournal, path journalPath: String, target: Int, staging: ManifestStaging,
                              command: String) throws -> String {
        do {
            return try startRecorded(journal, path: journalPath, target: target, staging: staging, command: command)
        } catch let failure as SQLiteDatabase.Failure {
            throw VaultError.journalUnusable(journalPath, failure)
        }
    }

    private static func startRecorded(_ journal: MigrationJournal, path journalPath: String, target: Int, staging: ManifestStaging,
                                      command: String) throws -> String {
        try journal.database.write { db in
            let run = try db.first("SELECT manifestSHA256, target, temporaryPrefix, command FROM run") { row in
                (manifest: try row.optionalText(0), target: row.optionalInt(1), temporaryPrefix: try row.optionalText(2), command: try row.optionalText(3))
            }
            if let run {
                guard run.manifest == staging.fingerprint, run.target == target else {
                    let owner = run.command
                    throw VaultError.journalOfAnotherBatch(journalPath, belongsTo: owner?.isEmpty == false ? owner : nil)
                }
                if !command.isEmpty { try db.execute("UPDATE run SET command = ? WHERE command IS NULL", [command]) }
                if let prefix = run.temporaryPrefix {
                    // The prefix decides what a rerun removes: a journal whose prefix is not one
                    // this tool makes (damaged, or edited by hand) is not trusted with that.
                    guard isTemporaryPrefix(prefix) else { throw VaultError.untrustedJournal(journalPath) }
                    return prefix
                }
                // A journal an earlier version began, whose temporaries had random names.
                let prefix = newTemporaryPrefix()
                try db.execute("UPDATE run SET temporaryPrefix = ?", [prefix])
                return prefix
            }
            let prefix = newTemporaryPrefix()
            try db.execute("INSERT INTO run (id, manifestSHA256, target, startedAt, temporaryPrefix, command) VALUES (1, ?, ?, ?, ?, ?)",
                           [staging.fingerprint, target, Date().timeIntervalSince1970, prefix, command])
            try db.prepare("INSERT INTO job (line, vault, output, state) VALUES (?, ?, ?, 'pending')") { insert in
                try staging.forEachJob { job in try insert.run([job.line, job.vault, job.output]) }
            }
            return prefix
        }
    }

    /// Whether `prefix` is exactly what ``newTemporaryPrefix()`` makes.
    static func isTemporaryPrefix(_ prefix: String) -> Bool {
        let bytes = Array(prefix.utf8)
        return bytes.count == 18 && prefix.hasPrefix(".hvt-") && prefix.hasSuffix("-") && bytes[5..<17].allSatisfy { AtomicFile.nameAlphabet.utf8.contains($0) }
    }

    /// ".hvt-" and 12 random letters and digits, then "-": a line's temporary name stays short
    /// (at most 32 bytes) and is unlike any other batch's.
    private static func newTemporaryPrefix() -> String {
        ".hvt-" + AtomicFile.randomNamePart(12) + "-"
    }

    private static let migrations = SQLiteMigrations([
        ("v1", """
                CREATE TABLE run (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    manifestSHA256 TEXT NOT NULL,
                    target INTEGER NOT NULL,
                    startedAt REAL NOT NULL
                );
                CREATE TABLE job (
                    line INTEGER PRIMARY KEY,
                    vault TEXT NOT NULL,
                    output TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
                    status TEXT,
                    fromVersion INTEGER,
                    error TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    completions INTEGER NOT NULL DEFAULT 0
                );
                """),
        ("v2", "ALTER TABLE run ADD COLUMN temporaryPrefix TEXT"),
        // The command the journal belongs to, for a refusal of another (issue 38).
        ("v3", "ALTER TABLE run ADD COLUMN command TEXT"),
    ])

    /// How many jobs a worker takes at once: their outputs are made durable by one flush and
    /// their journal rows written by one transaction, instead of a flush and a commit each.
    public static let groupSize = 64

    /// The group size for `parallelism` workers: each staged output holds a descriptor until its
    /// group is published, so every worker's group must fit in the open-file limit.
    static func groupSize(parallelism: Int) -> Int {
        var limit = rlimit()
        let open = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1024
        return max(1, min(groupSize, (open - 64) / max(1, parallelism)))
    }

    /// Runs every job not yet done, `parallelism` at a time, and reports each as its group
    /// finishes (jobs done by an earlier run first). `loadAccess` reads a job's key. Jobs are
    /// read from the staging database a group at a time, each group a range of manifest lines.
    /// `breaker` stops the run between groups (SIGTERM): the groups under way finish and are
    /// recorded, the rest are not started, and why it stopped is returned.
    @discardableResult
    public func run(parallelism: Int, breaker: RunBreaker = RunBreaker(), loadAccess: @escaping @Sendable (Job) throws -> VaultAccess,
                    report: @escaping @Sendable (Result) throws -> Void) throws -> RunBreaker.Stop? {
        let size = Self.groupSize(parallelism: parallelism)
        let groups = (total + size - 1) / size
        // Only a resumed run has jobs done by an earlier one: a new run or a dry run reads its
        // manifest back once, not once to find none done and again to run it.
        let resumed = try journalRead { db in
            try db.first("SELECT EXISTS (SELECT 1 FROM job WHERE state = ?)", [JournalState.done.rawValue]) { $0.int(0) != 0 } ?? false
        } ?? false
        for index in 0..<groups where resumed {
            for job in try group(index, size: size, done: true) {
                try report(Result(job: job, status: .previouslyDone, from: nil, to: target, error: nil))
            }
        }
        // A failure to record in the journal stops the run; a vault's own failure is a result.
        do {
            _ = try concurrently(groups, parallelism: parallelism) { [self] index in
                guard breaker.mayStart else { throw RunStopped() }
                try runGroup(index, size: size, resumed: resumed, loadAccess: loadAccess, report: report)
            }
        } catch is RunStopped {
            return breaker.stop
        }
        return nil
    }

    private func runGroup(_ index: Int, size: Int, resumed: Bool, loadAccess: (Job) throws -> VaultAccess,
                          report: (Result) throws -> Void) throws {
        // A new run has nothing done to leave out.
        let pending = resumed ? try group(index, size: size, done: false) : try staging.jobs(index * size + 1, through: (index + 1) * size)
        guard !pending.isEmpty else { return }
        for result in try process(pending, loadAccess: loadAccess) { try report(result) }
    }

    /// The jobs of group `index` that an earlier run did (`done`), or that are still to do. A
    /// job the journal has done whose output is no longer there (the folder emptied, or moved
    /// away, to start again) is to do again: the journal records work, and the work is gone.
    private func group(_ index: Int, size: Int, done: Bool) throws -> [Job] {
        let jobs = try staging.jobs(index * size + 1, through: (index + 1) * size)
        guard database != nil, let first = jobs.first?.line, let last = jobs.last?.line else { return done ? [] : jobs }
        var finished: Set<Int> = []
        try journalRead { db in
            try db.forEach("SELECT line FROM job WHERE state = ? AND line BETWEEN ? AND ?", [JournalState.done.rawValue, first, last]) { finished.insert($0.int(0)) }
        }
        return jobs.filter { (finished.contains($0.line) && Self.isRegularFile($0.output)) == done }
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// One group: each vault migrated in memory and its output staged, then every output made
    /// durable and named together, then every job recorded in one transaction. A vault that
    /// fails is recorded failed and does not hold up the others.
    private func process(_ group: [Job], loadAccess: (Job) throws -> VaultAccess) throws -> [Result] {
        var results: [Result] = []
        var staged: [StagedOutput] = []
        for job in group {
            do {
                let input = try BoundedRead.file(job.vault, limit: InputLimits.document, what: "vault")
                let outcome = try VaultMigration.migrate(input, access: keys.access(for: job, load: loadAccess), to: target, allowLossy: allowLossy, logVerified: false)
                let from = outcome.report.from
                guard database != nil else {
                    results.append(Result(job: job, status: outcome.unchanged ? .unchanged : .wouldMigrate, from: from, to: target, error: nil,
                                      losses: outcome.report.losses))
                    continue
                }
                let output = try OutputLocation(path: job.output, name: OutputLocation.split(job.output).name, in: folder)
                staged.append(try outcome.bytes.withUnsafeBytes { bytes in
                    try StagedOutput(output, bytes: bytes, mode: outputMode, flush: false, temporaryName: temporaryName(job))
                })
                results.append(Result(job: job, status: outcome.unchanged ? .unchanged : .migrated, from: from, to: target, error: nil,
                                      losses: outcome.report.losses))
            } catch let error as VaultError {
                results.append(Result(job: job, status: .failed, from: nil, to: target, error: error))
            }
        }
        guard database != nil else { return results }
        do {
            try StagedOutput.publishTogether(staged)
        } catch let error as VaultError {
            // Outputs named before the failure are complete, but not recorded: a rerun redoes them.
            results = results.map { $0.error != nil ? $0 : Result(job: $0.job, status: .failed, from: nil, to: target, error: error) }
        }
        try record(results)
        return results
    }

    private func record(_ results: [Result]) throws {
        guard let database else { return }
        do {
            try database.write { db in
                // Prepared once a group, not once a job.
                try db.prepare("""
                    UPDATE job SET state = ?, status = ?, fromVersion = ?, error = ?, attempts = attempts + 1,
                        completions = completions + (CASE WHEN ? = 'done' THEN 1 ELSE 0 END)
                    WHERE line = ?
                    """) { update in
                    for result in results {
                        let state: JournalState = result.error == nil ? .done : .failed
                        try update.run([state.rawValue, result.status.rawValue, result.from, result.error?.reason, state.rawValue, result.job.line])
                    }
                }
            }
        } catch let error as SQLiteDatabase.Failure {
            // The journal could not be written (a full disk, a lost folder): this run cannot
            // record progress, so it stops; the outputs just written are complete either way.
            let lines = results.map(\.job.line)
            throw VaultError.journalNotWritten(recording: "manifest lines \(lines.first!)–\(lines.last!)", error)
        }
    }

    /// A read of the journal (nil in a dry run, which has none); SQLite's failure named as the
    /// journal's.
    @discardableResult
    private func journalRead<T>(_ body: (SQLiteDatabase.Connection) throws -> T) throws -> T? {
        guard let database else { return nil }
        do {
            return try database.read(body)
        } catch let failure as SQLiteDatabase.Failure {
            throw VaultError.journalUnusable(journal?.path ?? "", failure)
        }
    }

    // MARK: Manifest

    /// One JSON object a line: `vault` and exactly one of `keyFile`, `vaultKeyFile`. Relative
    /// paths are relative to the manifest's folder. Outputs are `outDir/<vault file name>`; two
    /// jobs with the same name are refused. Any bad line refuses the whole batch, by number.
    /// Reads no file, so it can be fuzzed and tested on its own; a folder batch stages the
    /// same lines a piece at a time (``stage(manifestPath:outDir:into:)``).
    public static func parseManifest(_ bytes: [UInt8], manifestPath: String, outDir: String) throws -> [Job] {
        let base = manifestFolder(manifestPath)
        var jobs: [Job] = []
        var outputs = ManifestOutputs<String>()
        try LineReader.forEachLine(in: bytes, name: "the manifest '\(manifestPath)'") { line, rawLine in
            guard let job = try parseManifestLine(rawLine, line: line, base: base, outDir: outDir) else { return }
            // Objects are migrated in place or under a prefix, where the caller checks outputs.
            if !VaultLocation.isObject(job.vault) { try outputs.claim(job.output, line: line) }
            jobs.append(job)
        }
        guard !jobs.isEmpty else { throw VaultError.manifestListsNoJobs(manifestPath) }
        return jobs
    }

    /// One manifest line as a job; nil for a blank line. `base` is the manifest's folder.
    static func parseManifestLine(_ rawLine: ArraySlice<UInt8>, line: Int, base: String, outDir: String) throws -> Job? {
        func resolve(_ path: String) -> String {
            path.hasPrefix("/") || base.isEmpty || VaultLocation.isObject(path) ? path : base + "/" + path
        }
        let vault: String, keyFile: String?, vaultKeyFile: String?
        do {
            guard var reader = try JSONObjectReader(line: rawLine) else { return nil }
            vault = try reader.string("vault")
            keyFile = try reader.optionalString("keyFile")
            vaultKeyFile = try reader.optionalString("vaultKeyFile")
            try reader.finish()
        } catch let error as VaultError {
            throw error.withContext(prefix: "manifest line \(line): ")
        }
        guard (keyFile == nil) != (vaultKeyFile == nil) else {
            throw VaultError.manifestLineNeedsOneKey(line)
        }
        let name = OutputLocation.split(vault).name
        // The output is named after the vault file, so the name must be a file's name.
        guard !["", ".", ".."].contains(name), !vault.utf8.contains(0) else {
            throw VaultError.manifestVaultNotAFile(line, vault: vault)
        }
        let output = outDir.utf8.last == UInt8(ascii: "/") ? outDir + name : outDir + "/" + name
        return Job(line: line, vault: resolve(vault), keyFile: keyFile.map(resolve), vaultKeyFile: vaultKeyFile.map(resolve), output: output)
    }

    /// The folder a manifest's relative paths start from: its own, or "" for a manifest named
    /// without one (its lines then stay as written, not "./…"). The split is the write path's,
    /// at the last "/" byte (``OutputLocation/split(_:)``).
    static func manifestFolder(_ path: String) -> String {
        path.utf8.contains(UInt8(ascii: "/")) ? OutputLocation.split(path).folder : ""
    }

}

extension VaultError {
    /// A file a manifest line names cannot be read (missing, or not readable), found before
    /// the batch starts.
    public static func manifestFileUnreadable(line: Int, what: String, path: String, errno code: Int32, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        let why = ErrnoText.of(code)
        return VaultError(.io, "manifest line \(line): cannot read the \(what) '\(path.prefix(200))': \(why); nothing was started", file: file, line: sourceLine)
    }

    /// A manifest (read whole, or staged) with no job on any line.
    static func manifestListsNoJobs(_ manifestPath: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "the manifest '\(manifestPath)' lists no jobs", file: file, line: line)
    }

    /// A manifest line with both or neither of keyFile and vaultKeyFile.
    static func manifestLineNeedsOneKey(_ line: Int, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "manifest line \(line) needs exactly one of keyFile and vaultKeyFile", file: file, line: sourceLine)
    }

    /// A manifest line whose vault names no file (empty, `.`, `..`, or with a NUL), so no output
    /// can be named after it.
    static func manifestVaultNotAFile(_ line: Int, vault: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "manifest line \(line): vault should name a file, not '\(vault)'", file: file, line: sourceLine)
    }

}
