import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultSQLite

/// A folder batch's manifest, staged in a private temporary SQLite database (a file SQLite
/// makes in its temporary folder, `SQLITE_TMPDIR` or `TMPDIR`, and removes when it is closed)
/// and read back a group of jobs at a time. A batch once held every line as a job and its
/// output, about 1.4 KB each, so the documented 1 GiB manifest (ten million lines) meant
/// gigabytes; here memory stays flat, and the staging file grows with the manifest instead.
/// Its indexes find an output named twice as the lines are read, and an output that is an
/// input once they all are.
final class ManifestStaging: Sendable {
    private let database: SQLiteDatabase
    /// How many jobs the manifest has.
    let count: Int
    /// The SHA-256 of the manifest's bytes, in hex: a journal belongs to one manifest.
    let fingerprint: String

    /// Reads the manifest a line at a time: each line parsed (``BatchMigration/parseManifestLine``),
    /// and a line that repeats an earlier line's output refused by number, as it is read.
    init(manifestPath: String, outDir: String) throws {
        do {
            // Nothing in it outlives the run, so it has no rollback journal and is never synced;
            // a failed statement cannot be undone, which is harmless only because a failure
            // refuses the whole batch and closes the database.
            database = try SQLiteDatabase.temporaryFile()
            try database.withConnection { try $0.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF") }
            try database.write { db in
                try db.execute("""
                    CREATE TABLE job (seq INTEGER PRIMARY KEY, line INTEGER NOT NULL, vault TEXT NOT NULL, keyFile TEXT, vaultKeyFile TEXT,
                                      output TEXT NOT NULL, isObject INTEGER NOT NULL);
                    CREATE UNIQUE INDEX job_by_line ON job (line);
                    CREATE INDEX job_by_output ON job (output) WHERE NOT isObject;
                    CREATE TABLE input (identity BLOB PRIMARY KEY, label TEXT NOT NULL) WITHOUT ROWID;
                    CREATE TABLE output (identity BLOB PRIMARY KEY, label TEXT NOT NULL) WITHOUT ROWID;
                    """)
            }
        } catch let failure as SQLiteDatabase.Failure {
            throw Self.failure(failure)
        }
        (count, fingerprint) = try Self.read(manifestPath: manifestPath, outDir: outDir, into: database)
    }

    private static func read(manifestPath: String, outDir: String, into database: SQLiteDatabase) throws -> (Int, String) {
        let descriptor = try AtomicFile.openForReading(manifestPath, what: "manifest")
        defer { close(descriptor) }
        // A file known to be too large is refused before its first line, as a whole read did.
        var info = stat()
        if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) > InputLimits.listFile {
            throw VaultError.tooLarge(what: "manifest", name: manifestPath, limit: InputLimits.listFile)
        }
        let hasher = SHA256.Hasher()
        var reader = LineReader(descriptor: descriptor, name: "manifest '\(manifestPath)'",
                                limit: LineReader.Limit(bytes: InputLimits.listFile, what: "manifest", path: manifestPath), hasher: hasher)
        let base = BatchMigration.manifestFolder(manifestPath)
        var count = 0
        do {
            try database.write { db in
                try db.prepare("INSERT INTO job (line, vault, keyFile, vaultKeyFile, output, isObject) VALUES (?, ?, ?, ?, ?, ?)") { insert in
                    try db.prepare("SELECT min(line) FROM job WHERE output = ? AND NOT isObject") { earlier in
                        while let rawLine = try reader.next() {
                            guard let job = try BatchMigration.parseManifestLine(rawLine, line: reader.lineNumber, base: base, outDir: outDir) else { continue }
                            let isObject = VaultLocation.isObject(job.vault)
                            // Outputs are named after the vault files, so two lines can name one.
                            if !isObject {
                                try ManifestOutputs.refuse(job.output, line: job.line, firstLine: try earlier.first([job.output], { $0.optionalInt(0) }) ?? nil)
                            }
                            try insert.run([job.line, job.vault, job.keyFile, job.vaultKeyFile, job.output, isObject])
                            count += 1
                        }
                    }
                }
            }
        } catch let failure as SQLiteDatabase.Failure {
            throw Self.failure(failure)
        }
        guard count > 0 else { throw VaultError.manifestListsNoJobs(manifestPath) }
        return (count, Hex.encode(hasher.finish()))
    }

    /// The first line that names an object (`s3://`), if any.
    /// The first line whose job names only a vault key (no parent key).
    func firstJobWithoutParentKey() throws -> Int? {
        try staged {
            try database.read { db in try db.first("SELECT line FROM job WHERE keyFile IS NULL ORDER BY seq LIMIT 1") { $0.int(0) } }
        }
    }

    func firstObject() throws -> (line: Int, vault: String)? {
        try staged {
            try database.read { db in try db.first("SELECT line, vault FROM job WHERE isObject ORDER BY seq LIMIT 1") { (line: $0.int(0), vault: try $0.text(1)) } }
        }
    }

    /// The rule of ``FileSet/check(inputs:outputs:)`` for a whole manifest, through indexes
    /// instead of dictionaries of every file: the journal, then each line's output in order, is
    /// refused when it is the same file as any input (the manifest, a vault, a key file, of any
    /// line) or as an earlier output, by any spelling, link or hard link.
    func checkFiles(manifestPath: String, journal: OutputLocation, folder: OutputFolder) throws {
        func key(_ identity: FileIdentity) -> [UInt8] {
            (withUnsafeBytes(of: identity.device.bigEndian, Array.init) + withUnsafeBytes(of: identity.inode.bigEndian, Array.init)
                 + Array((identity.pendingName ?? "").utf8))
        }
        do {
            try database.write { db in
                func addInput(_ label: String, _ path: String) throws {
                    guard path != "-", let identity = FileIdentity.of(existing: path) ?? FileIdentity.of(missing: path) else { return }
                    try db.execute("INSERT OR IGNORE INTO input (identity, label) VALUES (?, ?)", [key(identity), "\(label) '\(path)'"])
                }
                try addInput("the manifest", manifestPath)
                // Lines often share a key file: a path just added is the same file again, so it
                // is resolved once for the run of lines that name it, not once a line (issue 29).
                var lastKeyFile: String?
                try Self.forEachJob(in: db) { job in
                    try addInput("the vault of manifest line \(job.line)", job.vault)
                    let keyFile = job.keyFile ?? job.vaultKeyFile
                    if let keyFile, keyFile != lastKeyFile {
                        try addInput("the \(job.keyFile != nil ? "key file" : "vault-key file") of manifest line \(job.line)", keyFile)
                    }
                    lastKeyFile = keyFile
                }
                func addOutput(_ label: String, _ location: OutputLocation) throws {
                    guard !location.holdsKey else { throw VaultError.wouldReplaceKey(location.path) }
                    let name = "\(label) '\(location.path)'", identity = key(location.identity)
                    if let other = try db.first("SELECT label FROM input WHERE identity = ?", [identity], { try $0.text(0) }) {
                        throw VaultError.sameFile(output: name, other: other, otherIsInput: true)
                    }
                    try db.execute("INSERT OR IGNORE INTO output (identity, label) VALUES (?, ?)", [identity, name])
                    if db.changes == 0, let other = try db.first("SELECT label FROM output WHERE identity = ?", [identity], { try $0.text(0) }) {
                        throw VaultError.sameFile(output: name, other: other, otherIsInput: false)
                    }
                }
                try addOutput("the journal", journal)
                for side in FileSet.databaseSideFiles(of: journal.path, owner: "the journal") {
                    try addOutput(side.label, OutputLocation(side.path, createFolders: true, what: side.label))
                }
                try Self.forEachJob(in: db) { job in
                    try addOutput("the output of manifest line \(job.line)",
                                  OutputLocation(path: job.output, name: OutputLocation.split(job.output).name, in: folder,
                                                 what: "the output of manifest line \(job.line)"))
                }
            }
        } catch let failure as SQLiteDatabase.Failure {
            throw Self.failure(failure)
        }
    }

    /// Hands `body` each job in manifest order, one row at a time.
    func forEachJob(_ body: (BatchMigration.Job) throws -> Void) throws {
        try staged { try database.read { db in try Self.forEachJob(in: db, body) } }
    }

    /// The jobs in manifest order from the `first` to the `last` (counted from 1).
    func jobs(_ first: Int, through last: Int) throws -> [BatchMigration.Job] {
        var jobs: [BatchMigration.Job] = []
        try staged { try database.read { db in try Self.forEachJob(in: db, from: first, through: last) { jobs.append($0) } } }
        return jobs
    }

    /// Whether the manifest has a job on line `line`.
    func hasLine(_ line: Int) -> Bool {
        (try? database.read { db in try db.first("SELECT EXISTS (SELECT 1 FROM job WHERE line = ?)", [line]) { $0.int(0) != 0 } }) == true
    }

    private static func forEachJob(in db: SQLiteDatabase.Connection, from: Int = 1, through: Int = .max, _ body: (BatchMigration.Job) throws -> Void) throws {
        try db.forEach("SELECT line, vault, keyFile, vaultKeyFile, output FROM job WHERE seq BETWEEN ? AND ? ORDER BY seq", [from, through]) { row in
            try body(BatchMigration.Job(line: row.int(0), vault: try row.text(1), keyFile: try row.optionalText(2), vaultKeyFile: try row.optionalText(3),
                                        output: try row.text(4)))
        }
    }

    /// Runs `body`, naming a failure of the staging database as this file's.
    private func staged<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as SQLiteDatabase.Failure {
            throw Self.failure(failure)
        }
    }

    private static func failure(_ failure: SQLiteDatabase.Failure) -> VaultError {
        VaultError.sqliteFailure("could not stage the manifest in a temporary database", failure)
    }
}
