import Foundation
internal import GRDB
import Synchronization
import VaultCore
import VaultStorage

/// Migrating the vaults of a bucket where they live (issue 15), while the families' devices keep
/// writing them.
///
/// Every write is conditional: in place, `If-Match` the version this run read, so a vault a
/// device changed meanwhile is read again and migrated again (up to ``attemptsPerVault`` times,
/// then reported as a conflict) and the device's change is never overwritten; to another prefix,
/// `If-None-Match: *`, so nothing there is replaced.
///
/// A SQLite journal on the operator's machine holds one row per object, with its ETag before and
/// after. A job is recorded as `writing` (with the ETag it read and the hash of the bytes it is
/// about to send) before its write and `done` after, so a run killed between the two settles the
/// job by looking at the bucket when it is started again: each vault is migrated exactly once.
///
/// Only households whose key the operator holds can be migrated (vaults are end-to-end
/// encrypted); the others are reported `no-key` and counted, so the report says how much of the
/// fleet is left for the app to migrate on the families' devices.
public final class BucketMigration: Sendable {
    /// One object to migrate, and where its result goes.
    public struct Job: Sendable, Hashable {
        public let source: S3ObjectName
        public let output: S3ObjectName
        /// The household, when the object is named after it (`<64 hex>.vault`).
        public let namedHousehold: HouseholdID?
    }

    public struct Result: Sendable {
        public let job: Job
        public let status: MigrationStatus
        public let from: Int?
        public let to: Int
        public let etagBefore: String?
        public let etagAfter: String?
        public let error: VaultError?
    }

    /// Where results go: over the source objects, or under another prefix.
    public enum Destination: Sendable, Equatable {
        case inPlace
        case prefix(S3ObjectName)
    }

    /// `--shard I/N`: the I-th (1-based) of N equal ranges of household ids, by their first 8
    /// bytes, so N machines split one fleet. A listing takes the shard's run of keys
    /// (``keyRange(under:)``); a manifest's lines, the shard's households.
    /// `--shard auto` reads it from the job engine's environment (``Shard/fromEngine(_:count:)``).
    public struct Shard: Sendable, Equatable, CustomStringConvertible {
        public let index: Int
        public let count: Int
        /// Where the index and count came from: `--shard I/N`, or the variables an engine set
        /// ("JOB_COMPLETION_INDEX=2, HVT_SHARD_COUNT=8"), for the report.
        public let origin: String

        /// The most shards a fleet is split into: AWS Batch's largest array job.
        public static let maximumCount = 10_000

        public init(parsing text: String) throws {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), (1...Self.maximumCount).contains(count), (1...count).contains(index) else {
                throw VaultError.outOfRange("a shard ('\(text)')", "I/N with 1 ≤ I ≤ N ≤ \(Self.maximumCount), such as 1/4")
            }
            self.init(index: index, count: count, origin: "--shard \(text)")
        }

        init(index: Int, count: Int, origin: String) {
            self.index = index
            self.count = count
            self.origin = origin
        }

        /// One shard however it was named: the origin is for the report.
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.index == rhs.index && lhs.count == rhs.count }

        public func contains(_ household: HouseholdID) -> Bool {
            let leading = household.bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return Int(leading.multipliedFullWidth(by: UInt64(count)).high) == index - 1
        }

        public var description: String { "\(index)/\(count)" }
    }

    /// How many times a vault changed by someone else is read and migrated again.
    public static let attemptsPerVault = 5

    public let store: ObjectStore
    public let target: Int
    public let destination: Destination
    public let shard: Shard?
    public let jobs: [Job]
    /// Whether a job not named after its household is in the shard by its header (a manifest's).
    private let shardByHeader: Bool
    /// Nil in a dry run, which writes nothing, not even a journal.
    private let opened: MigrationJournal?
    private var journal: DatabaseQueue? { opened?.queue }
    /// Records waiting for the next journal transaction (``record(_:state:status:from:before:after:error:planned:deferred:)``).
    private let waitingRecords = Mutex<[JournalRecord]>([])

    /// The jobs of every object under `prefix` named `*.vault`; with a shard, of its run of keys
    /// only (``ShardKeyRange``): the listing starts after the shard's first key and stops at the
    /// first key past its end, so N shards list the prefix once between them.
    static func jobs(under prefix: S3ObjectName, destination: Destination, shard: Shard?, store: ObjectStore) throws -> [Job] {
        var jobs: [Job] = []
        try listRun(under: prefix, shard: shard, store: store) { object in
            guard object.key.hasSuffix(".vault") else { return }
            jobs.append(Self.job(S3ObjectName(bucket: prefix.bucket, key: object.key), below: prefix, destination: destination))
        }
        return jobs
    }

    /// Every object under `prefix`, or with a shard its run of keys only (``ShardKeyRange``):
    /// the listing starts after the shard's first key, sizes its pages to the keys still
    /// expected, and stops at the first key past its end.
    static func listRun(under prefix: S3ObjectName, shard: Shard?, store: ObjectStore, _ each: (S3Client.Listed) throws -> Void) throws {
        let range = shard?.keyRange(under: prefix.key)
        var listedInRange = 0
        var pageSize = 1000
        try store.withClient { client in
            try client.listPages(prefix, startAfter: range?.after, nextPageSize: { page in
                guard let range, let last = page.last else { return 1000 }
                pageSize = range.nextPageSize(listedInRange: listedInRange, last: last.key, previous: pageSize)
                return pageSize
            }) { page in
                for object in page {
                    if let range {
                        // A store that ignored start-after would hand this shard the keys of the
                        // shards before it, and two shards would migrate one vault.
                        if let after = range.after, !after.utf8.lexicographicallyPrecedes(object.key.utf8) {
                            throw VaultError.startAfterIgnored(prefix.description, key: object.key, after: after)
                        }
                        if range.isPastEnd(object.key) { return false }
                        listedInRange += 1
                    }
                    try each(object)
                }
                return true
            }
        }
    }

    /// Where a fleet run's vaults come from.
    public enum Source: Sendable {
        /// Every `*.vault` object under a prefix; the keys in a folder, one
        /// `<household id>.vaultkey` file each (as `derive --vault-key-out` writes them), or
        /// printed by a command (``HouseholdKeySource``).
        case listing(S3ObjectName, keys: HouseholdKeySource)
        /// The objects a manifest names, each with its key file (paths relative to the manifest).
        case manifest(bytes: [UInt8], path: String)
        /// Every current `*.vault` object an S3 Inventory report lists, with the keys as for a
        /// listing; `name` is where its manifest.json was read.
        case inventory(S3Inventory, name: S3ObjectName, keys: HouseholdKeySource)
    }

    /// The key files that open a job's vault.
    public struct KeyFiles: Sendable {
        public let keyFile: String?
        public let vaultKeyFile: String?
    }

    /// What a fleet run will do, before it does anything: its jobs, where each one's key is,
    /// what names the batch in its journal, and the journal's default name.
    public struct Plan: Sendable {
        public let jobs: [Job]
        /// Names the batch (its source and destination) in the journal's fingerprint.
        public let batch: String
        /// `BUCKET.migrate-journal.sqlite`, or `BUCKET.shard-I-of-N.migrate-journal.sqlite`.
        public let defaultJournal: String
        /// The run of keys a sharded listing covered (nil: no shard, or a manifest).
        public let listedRange: ShardKeyRange?
        /// Where the run checks that the store honours conditional writes, before its first
        /// write (``ObjectStore/requireConditionalWrites(under:)``): the prefix it writes under,
        /// one a bucket; none when there is nothing to write.
        public let probeFolders: [S3ObjectName]
        /// A manifest's object not named after its household is in a shard by its header, read
        /// when its job runs; a listing's objects are in the shard whose keys they are.
        let shardByHeader: Bool
        /// Where a listing's or an inventory's keys are (nil: a manifest's, by object).
        public let keySource: HouseholdKeySource?
        private let manifestKeys: [S3ObjectName: KeyFiles]
        private let manifestPath: String?

        /// The local files the run reads (the manifest and its key files), which the journal
        /// and its side files may not be.
        var localInputs: [FileSet.Input] {
            let keys = Set(manifestKeys.values.flatMap { [$0.keyFile, $0.vaultKeyFile].compactMap { $0 } }).sorted()
            return (manifestPath.map { [FileSet.Input("the manifest", $0)] } ?? []) + keys.map { FileSet.Input("the key file", $0) }
        }

        /// The key of a job's household, or nil when the operator holds none (`no-key`): the
        /// manifest's key files for its object, or the household's from `keys` (made of
        /// ``keySource``, one for the run). A key command that fails stops the run
        /// (``HouseholdKeys/Failure``).
        public func access(for job: Job, household: HouseholdID, keys: HouseholdKeys?,
                           loadFile: (KeyFiles) throws -> VaultAccess) throws -> VaultAccess? {
            guard let keys else { return try manifestKeys[job.source].map(loadFile) }
            return try keys.access(for: household)
        }

        init(jobs: [Job], batch: String, bucket: String, shard: Shard?, listedRange: ShardKeyRange?, keys keySource: HouseholdKeySource?,
             manifestKeys: [S3ObjectName: KeyFiles], manifestPath: String? = nil, shardByHeader: Bool? = nil, probeFolders: [S3ObjectName]) {
            self.jobs = jobs
            self.probeFolders = jobs.isEmpty ? [] : probeFolders
            self.batch = batch
            self.listedRange = listedRange
            self.shardByHeader = shardByHeader ?? (keySource == nil)
            defaultJournal = bucket + (shard.map { ".shard-\($0.index)-of-\($0.count)" } ?? "") + ".migrate-journal.sqlite"
            self.keySource = keySource
            self.manifestKeys = manifestKeys
            self.manifestPath = manifestPath
        }
    }

    /// The plan of a run: the listing of a prefix, or the lines of a manifest (every one an
    /// object; two that would write one output are refused by line). A prefix, inventory or
    /// manifest that lists no vault is refused (``VaultError/nothingListed(_:)``) unless
    /// `allowEmpty`: a mistyped prefix would otherwise pass as a run of none. A shard of its
    /// own may be empty (a small fleet in many shards), as long as the prefix is not.
    public static func plan(_ source: Source, destination: Destination, shard: Shard?, store: ObjectStore, allowEmpty: Bool = false) throws -> Plan {
        let to: String = switch destination {
        case .inPlace: "in place"
        case .prefix(let out): "to \(out)"
        }
        switch source {
        case .listing(let prefix, let keys):
            let listed = try jobs(under: prefix, destination: destination, shard: shard, store: store)
            if listed.isEmpty, !allowEmpty, try shard == nil || !holdsObjects(prefix, store: store) {
                throw VaultError.nothingListed("no *.vault object under \(prefix)")
            }
            return Plan(jobs: listed, batch: "source \(prefix) \(to)",
                        bucket: prefix.bucket, shard: shard, listedRange: shard?.keyRange(under: prefix.key), keys: keys,
                        manifestKeys: [:], probeFolders: probeFolders(listed, listed: prefix, destination: destination))
        case .inventory(let inventory, let name, let keys):
            // Like a manifest's objects: a vault not named after its household is in a shard by
            // its header; an inventory is read whole by every shard (its files are not in key order).
            var jobs: [Job] = []
            var outputs: Set<S3ObjectName> = [], listed: Set<S3ObjectName> = []
            var vaults = 0
            try inventory.forEachObject(store: store) { object in
                // A key listed twice (a report's files overlap) is one vault: one job, not two
                // migrations of it (in place), nor a refusal as two writes of one output (--out).
                guard object.key.hasSuffix(".vault"), listed.insert(object).inserted else { return }
                vaults += 1
                let job = Self.job(object, below: nil, destination: destination)
                if destination != .inPlace, !outputs.insert(job.output).inserted {
                    throw VaultError.inventoryOutputTwice(object.description, output: job.output.description)
                }
                if let shard, let household = job.namedHousehold, !shard.contains(household) { return }
                jobs.append(job)
            }
            if vaults == 0, !allowEmpty { throw VaultError.nothingListed("the inventory \(name) lists no current *.vault object") }
            return Plan(jobs: jobs, batch: "inventory \(name) \(to)", bucket: inventory.sourceBucket, shard: shard, listedRange: nil,
                        keys: keys, manifestKeys: [:], shardByHeader: true,
                        probeFolders: probeFolders(jobs, listed: nil, destination: destination))
        case .manifest(let bytes, let path):
            var jobs: [Job] = []
            var keys: [S3ObjectName: KeyFiles] = [:]
            var outputs: [S3ObjectName: Int] = [:]
            let entries = try BatchMigration.parseManifest(bytes, manifestPath: path, outDir: "")
            for entry in entries {
                guard case .object(let name) = try VaultLocation(entry.vault), !name.isPrefix else {
                    throw VaultError.fileInBucketBatch(line: entry.line, vault: entry.vault)
                }
                let job = Self.job(name, below: nil, destination: destination)
                if destination != .inPlace, let earlier = outputs.updateValue(entry.line, forKey: job.output) {
                    throw VaultError.manifestOutputTwice(earlier, entry.line, output: job.output.description)
                }
                keys[name] = KeyFiles(keyFile: entry.keyFile, vaultKeyFile: entry.vaultKeyFile)
                if let shard, let household = job.namedHousehold, !shard.contains(household) { continue }
                jobs.append(job)
            }
            // Once every line is known to name an object: the lines' own mistakes come first.
            try requireKeyFiles(entries)
            return Plan(jobs: jobs, batch: "manifest \(Hex.encode(SHA256.hash(bytes))) \(to)", bucket: jobs.first?.source.bucket ?? "manifest",
                        shard: shard, listedRange: nil, keys: nil, manifestKeys: keys, manifestPath: path,
                        probeFolders: probeFolders(jobs, listed: nil, destination: destination))
        }
    }

    /// Refuses a manifest naming a key file that cannot be read, by line, before anything is
    /// listed or written (as a folder batch does): every vault of it would fail.
    static func requireKeyFiles(_ entries: [BatchMigration.Job]) throws {
        var checked: Set<String> = []
        for entry in entries {
            for (what, path) in [("key file", entry.keyFile), ("vault-key file", entry.vaultKeyFile)] {
                guard let path, checked.insert(path).inserted else { continue }
                if access(path, R_OK) != 0 { throw VaultError.manifestFileUnreadable(line: entry.line, what: what, path: path) }
            }
        }
    }

    /// Whether anything at all is under `prefix`: one listing request of one key, so a shard
    /// with no vault of its own tells an empty range from a prefix that holds nothing.
    static func holdsObjects(_ prefix: S3ObjectName, store: ObjectStore) throws -> Bool {
        try store.withClient { !(try $0.list(prefix, pageSize: 1).objects.isEmpty) }
    }

    /// Where a run's probe goes (``Plan/probeFolders``): under `--out`'s prefix, or in place
    /// under the listed prefix; a manifest's or an inventory's objects in place have no prefix
    /// of the command's, so the probe goes in the folder of the first object of each bucket,
    /// where the run writes anyway.
    private static func probeFolders(_ jobs: [Job], listed: S3ObjectName?, destination: Destination) -> [S3ObjectName] {
        switch destination {
        case .prefix(let out): return [out]
        case .inPlace:
            if let listed { return [listed] }
            var first: [String: S3ObjectName] = [:]
            for job in jobs where first[job.output.bucket] == nil {
                let key = job.output.key
                first[job.output.bucket] = S3ObjectName(bucket: job.output.bucket, key: String(key[..<(key.lastIndex(of: "/").map(key.index(after:)) ?? key.startIndex)]))
            }
            return first.values.sorted { $0.description < $1.description }
        }
    }

    /// The job of one object. Under another prefix its output keeps its key below the source
    /// prefix, or (an object a manifest names) its last path part.
    public static func job(_ source: S3ObjectName, below prefix: S3ObjectName?, destination: Destination) -> Job {
        let name = source.key.split(separator: "/").last.map(String.init) ?? source.key
        let output: S3ObjectName = switch destination {
        case .inPlace: source
        case .prefix(let out): out.appending(prefix.map { String(source.key.dropFirst($0.key.count)) } ?? name)
        }
        let stem = name.hasSuffix(".vault") ? String(name.dropLast(".vault".count)) : name
        let household = Hex.isLowercase(stem, byteCount: 32) ? Hex.decode(stem).map(HouseholdID.init(bytes:)) : nil
        return Job(source: source, output: output, namedHousehold: household)
    }

    /// Opens or creates the journal (unless `dryRun`). A journal of another batch (another
    /// source, destination, shard or target) is refused: mixing two batches is how work gets
    /// lost. `command` is how the caller names this batch to a person (the tool: its command
    /// line); the journal keeps it, so a journal refusing another batch names its own.
    public init(_ plan: Plan, store: ObjectStore, target: Int, destination: Destination, shard: Shard?,
                journalPath: String, dryRun: Bool, command: String = "") throws {
        try Migration.checkTarget(target)
        let batch = plan.batch
        jobs = plan.jobs
        shardByHeader = plan.shardByHeader
        self.store = store
        self.target = target
        self.destination = destination
        self.shard = shard
        // A run with nothing to do (an empty prefix with `allowEmpty`, an empty shard) makes no
        // journal either: the bucket's default one would refuse the corrected command.
        guard !dryRun, !jobs.isEmpty else {
            opened = nil
            return
        }
        try MigrationJournal.checkFiles(journalPath, inputs: plan.localInputs)
        for folder in plan.probeFolders { try store.requireConditionalWrites(under: folder) }
        let opened = try MigrationJournal(path: journalPath, migrator: Self.migrator, tables: ["run", "object"], writeAheadLog: true)
        self.opened = opened
        let fingerprint = Hex.encode(SHA256.hash(Array("\(batch)\n\(target)\n\(shard?.description ?? "")".utf8)))
        do {
            try opened.queue.write { db in
                if let run = try Row.fetchOne(db, sql: "SELECT fingerprint, command FROM run") {
                    guard run["fingerprint"] == fingerprint else {
                        let owner: String? = run["command"]
                        throw VaultError.journalOfAnotherBatch(journalPath, belongsTo: owner?.isEmpty == false ? owner : nil)
                    }
                    // A journal an earlier version began names its batch from now on.
                    if !command.isEmpty { try db.execute(sql: "UPDATE run SET command = ? WHERE command IS NULL", arguments: [command]) }
                } else {
                    try db.execute(sql: "INSERT INTO run (id, fingerprint, batch, target, startedAt, command) VALUES (1, ?, ?, ?, ?, ?)",
                                   arguments: [fingerprint, batch, target, Date().timeIntervalSince1970, command])
                }
            }
        } catch let error as DatabaseError {
            opened.removeIfCreated()
            throw VaultError.journalUnusable(journalPath, error)
        } catch {
            opened.removeIfCreated()
            throw error
        }
    }

    private static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("bucket-v1") { db in
            try db.execute(sql: """
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
                """)
        }
        // The command the journal belongs to, for a refusal of another (issue 38).
        migrator.registerMigration("bucket-v2") { db in
            try db.execute(sql: "ALTER TABLE run ADD COLUMN command TEXT")
        }
        return migrator
    }()

    /// Removes the journal when this run made it: for a run that ends refused (no vault had its
    /// key here), whose journal holds nothing worth resuming.
    public func discardJournalIfNew() {
        opened?.removeIfCreated()
    }

    // MARK: Running

    /// Runs every job not yet done, `parallelism` at a time (the work waits on the network),
    /// and reports each as it finishes, jobs done by an earlier run first. `loadAccess` gives a
    /// household's key, or nil when the operator holds none. `breaker` stops the run early (the
    /// store gone, a signal): vaults in flight finish and are recorded, the rest are not
    /// started, and why it stopped is returned.
    @discardableResult
    public func run(parallelism: Int, breaker: RunBreaker = RunBreaker(), loadAccess: @escaping @Sendable (Job, HouseholdID) throws -> VaultAccess?,
                    report: @escaping @Sendable (Result) throws -> Void) throws -> RunBreaker.Stop? {
        let earlier = try journalRows()
        var pending: [Job] = []
        for job in jobs {
            if let row = earlier[job.source.description], row.state == .done {
                try report(Result(job: job, status: .previouslyDone, from: row.from, to: target, etagBefore: row.etagBefore, etagAfter: row.etagAfter, error: nil))
            } else {
                pending.append(job)
            }
        }
        let work = pending
        do {
            do {
                _ = try concurrently(work.count, parallelism: parallelism) { [self] index in
                    guard breaker.mayStart else { throw RunStopped() }
                    let job = work[index]
                    let result = try process(job, earlier: earlier[job.source.description], loadAccess: loadAccess)
                    breaker.record(result?.error)
                    if let result { try report(result) }
                }
            } catch is RunStopped {
                try recordWaiting()
                return breaker.stop
            } catch {
                // What the vaults done so far recorded is kept, whatever stopped the run.
                try? recordWaiting()
                throw error
            }
            try recordWaiting()
            return nil
        } catch let failure as JournalFailure {
            throw failure.error
        } catch let failure as HouseholdKeys.Failure {
            // A key command that cannot answer: the vaults done so far are recorded, no other
            // is opened.
            throw failure.error
        }
    }

    /// The journal could not be written (a full disk, a lost folder): the run cannot record
    /// progress, so it stops. Not a VaultError, so no job mistakes it for its own failure.
    private struct JournalFailure: Error {
        let error: VaultError
    }

    private struct JournalRow: Sendable {
        let state: JournalState
        let from: Int?
        let etagBefore: String?
        let etagAfter: String?
        /// SHA-256 (hex) of the bytes a write was about to send.
        let planned: String?
    }

    private func journalRows() throws -> [String: JournalRow] {
        guard let journal else { return [:] }
        return try journal.read { db in
            var rows: [String: JournalRow] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT source, state, fromVersion, etagBefore, etagAfter, planned FROM object") {
                // The table's CHECK admits only the states the tool writes.
                guard let state = JournalState(rawValue: row["state"]) else { throw VaultError.untrustedJournal(opened?.path ?? "") }
                rows[row["source"]] = JournalRow(state: state, from: row["fromVersion"], etagBefore: row["etagBefore"],
                                                 etagAfter: row["etagAfter"], planned: row["planned"])
            }
            return rows
        }
    }

    /// One vault; nil when it belongs to another shard (known only once its header is read).
    private func process(_ job: Job, earlier: JournalRow?, loadAccess: (Job, HouseholdID) throws -> VaultAccess?) throws -> Result? {
        do {
            if let earlier, [.writing, .failed].contains(earlier.state), earlier.planned != nil,
               let settled = try settleInterruptedWrite(job, earlier) {
                return settled
            }
            for _ in 0..<Self.attemptsPerVault {
                guard let source = try store.withClient({ try $0.get(job.source) }) else {
                    throw VaultError.noSuchObject(job.source.description, what: "vault")
                }
                let header = try VaultEnvelope(parsing: source.bytes).header
                if let shard, shardByHeader, job.namedHousehold == nil, !shard.contains(header.householdID) { return nil }
                guard let access = try loadAccess(job, header.householdID) else {
                    try record(job, state: .noKey, status: .noKey, from: Int(header.schemaVersion), before: source.etag, after: nil, error: nil)
                    return Result(job: job, status: .noKey, from: Int(header.schemaVersion), to: target, etagBefore: source.etag, etagAfter: nil, error: nil)
                }
                let outcome = try VaultMigration.migrate(source.bytes, access: access, to: target)
                let from = outcome.report.from
                let status: MigrationStatus = outcome.unchanged ? .unchanged : .migrated
                guard journal != nil else {
                    return Result(job: job, status: outcome.unchanged ? .unchanged : .wouldMigrate, from: from, to: target, etagBefore: source.etag, etagAfter: nil, error: nil)
                }
                if outcome.unchanged, destination == .inPlace {
                    try record(job, state: .done, status: status, from: from, before: source.etag, after: source.etag, error: nil, deferred: true)
                    return Result(job: job, status: status, from: from, to: target, etagBefore: source.etag, etagAfter: source.etag, error: nil)
                }
                try record(job, state: .writing, status: nil, from: from, before: source.etag, after: nil, error: nil,
                           planned: Hex.encode(SHA256.hash(outcome.bytes)))
                let condition: S3Client.WriteCondition = destination == .inPlace ? .replacing(etag: source.etag) : .creating
                switch try store.withClient({ try $0.put(job.output, outcome.bytes, condition: condition) }) {
                case .written(let etag):
                    try record(job, state: .done, status: status, from: from, before: source.etag, after: etag, error: nil, deferred: true)
                    return Result(job: job, status: status, from: from, to: target, etagBefore: source.etag, etagAfter: etag, error: nil)
                case .changedMeanwhile where destination == .inPlace:
                    continue  // a device wrote it: read its version and migrate that
                case .changedMeanwhile:
                    let error = VaultError.changedSinceRead(job.output.description)
                    try record(job, state: .conflict, status: .conflict, from: from, before: source.etag, after: nil,
                               error: "\(job.output) already exists and was not written by this run")
                    return Result(job: job, status: .conflict, from: from, to: target, etagBefore: source.etag, etagAfter: nil, error: error)
                }
            }
            let error = VaultError.changedSinceRead(job.source.description)
            try record(job, state: .conflict, status: .conflict, from: nil, before: nil, after: nil,
                       error: "changed by someone else \(Self.attemptsPerVault) times while it was being migrated")
            return Result(job: job, status: .conflict, from: nil, to: target, etagBefore: nil, etagAfter: nil, error: error)
        } catch let error as VaultError {
            try record(job, state: .failed, status: .failed, from: nil, before: nil, after: nil, error: error.reason)
            return Result(job: job, status: .failed, from: nil, to: target, etagBefore: nil, etagAfter: nil, error: error)
        }
    }

    /// A run was killed (or lost the store) between a job's write and its record: the bucket says
    /// whether the write landed. The journal kept the SHA-256 of the bytes the write sent; the
    /// object (in place) or the output holding exactly those bytes means it did. Anything else
    /// is migrated as usual: a vault already at the target is then `unchanged`, and an output
    /// someone else wrote is a conflict.
    private func settleInterruptedWrite(_ job: Job, _ earlier: JournalRow) throws -> Result? {
        guard let planned = earlier.planned, let before = earlier.etagBefore,
              let current = try store.withClient({ try $0.get(job.output) }),
              Hex.encode(SHA256.hash(current.bytes)) == planned else { return nil }
        try record(job, state: .done, status: .migrated, from: earlier.from, before: before, after: current.etag, error: nil)
        return Result(job: job, status: .migrated, from: earlier.from, to: target, etagBefore: before, etagAfter: current.etag, error: nil)
    }

    /// One journal row to write.
    private struct JournalRecord: Sendable {
        let source: String, output: String, state: JournalState, status: MigrationStatus?
        let from: Int?, before: String?, after: String?, error: String?, planned: String?
    }

    /// Records a job's state. A `deferred` record (a vault done) waits and goes into the journal
    /// with the next transaction, whichever thread makes it, instead of one of its own: a run
    /// made two transactions a vault (issue 29). Nothing is lost if a kill drops it: the vault's
    /// row still says `writing` with the hash of what was sent, which the next run settles by
    /// reading the object back; a vault done unchanged is read again and found unchanged.
    private func record(_ job: Job, state: JournalState, status: MigrationStatus?, from: Int?, before: String?, after: String?, error: String?,
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
    private func recordWaiting() throws {
        try write(waitingRecords.withLock { waiting in defer { waiting.removeAll() }; return waiting }, naming: "the last vaults done")
    }

    /// How many done vaults may wait for a transaction: what a kill can leave to settle.
    private static let recordsWaitingAtMost = 64

    private func write(_ rows: [JournalRecord], naming: String) throws {
        guard let journal, !rows.isEmpty else { return }
        do {
            try journal.write { db in
                let upsert = try db.cachedStatement(sql: """
                    INSERT INTO object (source, output, state, status, fromVersion, etagBefore, etagAfter, planned, error, attempts, completions)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, 0)
                    ON CONFLICT (source) DO UPDATE SET state = ?3, status = ?4, fromVersion = coalesce(?5, fromVersion),
                        etagBefore = coalesce(?6, etagBefore), etagAfter = ?7, planned = coalesce(?8, planned), error = ?9
                    """)
                let count = try db.cachedStatement(sql: """
                    UPDATE object SET attempts = attempts + 1, completions = completions + (CASE WHEN ?1 = 'done' THEN 1 ELSE 0 END)
                    WHERE source = ?2
                    """)
                for row in rows {
                    try upsert.execute(arguments: [row.source, row.output, row.state.rawValue, row.status?.rawValue, row.from, row.before, row.after,
                                                   row.planned, row.error])
                    if row.state != .writing { try count.execute(arguments: [row.state.rawValue, row.source]) }
                }
            }
        } catch let error as DatabaseError {
            throw JournalFailure(error: VaultError.journalNotWritten(recording: naming, error))
        }
    }
}
