import FoundationEssentials
import VaultCore
import VaultSQLite

/// The bucket batch's journal: its schema, the batch it belongs to, the rows a rerun reads and
/// the records the run writes (see ``BucketMigration`` for what a row promises).
extension BucketMigration {
    /// Loads what the journal needs (SQLite), asked before the store is listed: a missing
    /// library stops a run (exit 69) before a fleet's listing is waited out (a trial: the run
    /// listed the bucket, then stopped; where the store was unreachable, it said that, exit 75).
    public static func requireJournalLibrary() throws { try SQLiteDatabase.requireLibrary() }

    /// The journal's one connection; nil in a dry run, which writes nothing, not even a journal.
    var journal: SQLiteDatabase? { opened?.database }

    /// Records a new batch in its journal, or checks that the journal is this batch's.
    static func start(_ opened: MigrationJournal, fingerprint: String, batch: String, target: Int, command: String) throws {
        do {
            try opened.database.write { db in
                let run = try db.first("SELECT fingerprint, command FROM run") { (fingerprint: try $0.optionalText(0), command: try $0.optionalText(1)) }
                if let run {
                    guard run.fingerprint == fingerprint else {
                        let owner = run.command
                        throw VaultError.journalOfAnotherBatch(opened.path, belongsTo: owner?.isEmpty == false ? owner : nil)
                    }
                    // A journal an earlier version began names its batch from now on.
                    if !command.isEmpty { try db.execute("UPDATE run SET command = ? WHERE command IS NULL", [command]) }
                } else {
                    try db.execute("INSERT INTO run (id, fingerprint, batch, target, startedAt, command) VALUES (1, ?, ?, ?, ?, ?)",
                                   [fingerprint, batch, target, Date().timeIntervalSince1970, command])
                }
            }
        } catch let failure as SQLiteDatabase.Failure {
            throw VaultError.journalUnusable(opened.path, failure)
        }
    }

    static let migrations = SQLiteMigrations([
        ("bucket-v1", """
                CREATE TABLE run (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    fingerprint TEXT NOT NULL,
                    batch TEXT NOT NULL,
                    target INTEGER NOT NULL,
                    startedAt REAL NOT NULL
                );
                CREATE TABLE object (
                    source TEXT PRIMARY KEY,
                    output TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('writing', 'done', 'failed', 'no-key', 'conflict')),
                    status TEXT,
                    fromVersion INTEGER,
                    etagBefore TEXT,
                    etagAfter TEXT,
                    planned TEXT,
                    error TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    completions INTEGER NOT NULL DEFAULT 0
                );
                """),
        // The command the journal belongs to, for a refusal of another (issue 38).
        ("bucket-v2", "ALTER TABLE run ADD COLUMN command TEXT"),
    ])


    /// Removes the journal when this run made it: for a run that ends refused (no vault had its
    /// key here), whose journal holds nothing worth resuming.
    public func discardJournalIfNew() {
        opened?.removeIfCreated()
    }


    /// The journal could not be written (a full disk, a lost folder): the run cannot record
    /// progress, so it stops. Not a VaultError, so no job mistakes it for its own failure.
    struct JournalFailure: Error {
        let error: VaultError
    }

    struct JournalRow: Sendable {
        let state: JournalState
        let from: Int?
        let etagBefore: String?
        let etagAfter: String?
        /// SHA-256 (hex) of the bytes a write was about to send.
        let planned: String?
    }

    func journalRows() throws -> [String: JournalRow] {
        guard let journal else { return [:] }
        do {
            return try journal.read { db in
                var rows: [String: JournalRow] = [:]
                try db.forEach("SELECT source, state, fromVersion, etagBefore, etagAfter, planned FROM object") { row in
                    // The table's CHECK admits only the states the tool writes.
                    guard let state = JournalState(rawValue: try row.text(1)) else { throw VaultError.untrustedJournal(opened?.path ?? "") }
                    rows[try row.text(0)] = JournalRow(state: state, from: row.optionalInt(2), etagBefore: try row.optionalText(3),
                                                       etagAfter: try row.optionalText(4), planned: try row.optionalText(5))
                }
                return rows
            }
        } catch let failure as SQLiteDatabase.Failure {
            throw VaultError.journalUnusable(opened?.path ?? "", failure)
        }
    }


    /// One journal row to write.
    struct JournalRecord: Sendable {
        let source: String, output: String, state: JournalState, status: MigrationStatus?
        let from: Int?, before: String?, after: String?, error: String?, planned: String?
    }

    /// Records a job's state. A `deferred` record (a vault done) waits and goes into the journal
    /// with the next transaction, whichever thread makes it, instead of one of its own: a run
    /// made two transactions a vault (issue 29). Nothing is lost if a kill drops it: the vault's
    /// row still says `writing` with the hash of what was sent, which the next run settles by
    /// reading the object back; a vault done unchanged is read again and found unchanged.
    func record(_ job: Job, state: JournalState, status: MigrationStatus?, from: Int?, before: String?, after: String?, error: String?,
                        planned: String? = nil, deferred: Bool = false) throws {
        guard journal != nil else { return }
        let row = JournalRecord(source: job.source.description, output: job.output.description, state: state, status: status,
                                from: from, before: before, after: after, error: error, planned: planned)
        let rows: [JournalRecord] = waitingRecords.withLock { waiting in
            waiting.append(row)
            guard !deferred || waiting.count >= Self.recordsWaitingAtMost else { return [] }
            defer { waiting.removeAll(keepingCapacity: true) }
            return waiting
        }
        try write(rows, naming: rows.count > 1 ? "\(job.source) and \(rows.count - 1) vaults done before it" : job.source.description)
    }

    /// Writes the records still waiting; at the end of a run.
    func recordWaiting() throws {
        try write(waitingRecords.withLock { waiting in defer { waiting.removeAll() }; return waiting }, naming: "the last vaults done")
    }

    /// How many done vaults may wait for a transaction: what a kill can leave to settle.
    private static let recordsWaitingAtMost = 64

    private func write(_ rows: [JournalRecord], naming: String) throws {
        guard let journal, !rows.isEmpty else { return }
        do {
            try journal.write { db in
                try db.prepare("""
                    INSERT INTO object (source, output, state, status, fromVersion, etagBefore, etagAfter, planned, error, attempts, completions)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, 0)
                    ON CONFLICT (source) DO UPDATE SET state = ?3, status = ?4, fromVersion = coalesce(?5, fromVersion),
                        etagBefore = coalesce(?6, etagBefore), etagAfter = ?7, planned = coalesce(?8, planned), error = ?9
                    """) { upsert in
                    try db.prepare("""
                        UPDATE object SET attempts = attempts + 1, completions = completions + (CASE WHEN ?1 = 'done' THEN 1 ELSE 0 END)
                        WHERE source = ?2
                        """) { count in
                        for row in rows {
                            try upsert.run([row.source, row.output, row.state.rawValue, row.status?.rawValue, row.from, row.before, row.after,
                                            row.planned, row.error])
                            if row.state != .writing { try count.run([row.state.rawValue, row.source]) }
                        }
                    }
                }
            }
        } catch let error as SQLiteDatabase.Failure {
            throw JournalFailure(error: VaultError.journalNotWritten(recording: naming, error))
        }
    }
}
