import Synchronization
import VaultCore
import VaultFiles
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
///
/// The type's parts, a file each: the shards (BucketShard, EngineShard, ShardKeyRange), the
/// listing (BucketListing), the plan and its three sources (BucketPlan), the journal
/// (BucketJournal) and the run itself (BucketRun).
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

    /// How many times a vault changed by someone else is read and migrated again.
    public static let attemptsPerVault = 5

    public let store: ObjectStore
    public let target: Int
    public let destination: Destination
    public let shard: Shard?
    public let jobs: [Job]
    /// Whether a job not named after its household is in the shard by its header (a manifest's).
    let shardByHeader: Bool
    /// Nil in a dry run, which writes nothing, not even a journal.
    let opened: MigrationJournal?
    /// Records waiting for the next journal transaction (``record(_:state:status:from:before:after:error:planned:deferred:)``).
    let waitingRecords = Mutex<[JournalRecord]>([])

    /// Opens or creates the journal (unless `dryRun`). A journal of another batch (another
    /// source, destination, shard or target) is refused: mixing two batches is how work gets
    /// lost. `command` is how the caller names this batch to a person (the tool: its command
    /// line); the journal keeps it, so a journal refusing another batch names its own.
    public init(_ plan: Plan, store: ObjectStore, target: Int, destination: Destination, shard: Shard?,
                journalPath: String, dryRun: Bool, command: String = "") throws {
        try Migration.checkTarget(target)
        if target >= 3 { throw VaultError.fleetRunCannotWriteLogs(target) }
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
        let opened = try MigrationJournal(path: journalPath, migrations: Self.migrations, tables: ["run", "object"], writeAheadLog: true)
        self.opened = opened
        let fingerprint = Hex.encode(SHA256.hash(Array("\(batch)\n\(target)\n\(shard?.description ?? "")".utf8)))
        do {
            try Self.start(opened, fingerprint: fingerprint, batch: batch, target: target, command: command)
        } catch {
            opened.removeIfCreated()
            throw error
        }
    }
}

extension VaultError.Code {
    /// A fleet run asked to write schema 3 vaults, which go out only with their household logs.
    public static let fleetRunCannotWriteLogs = VaultError.Code(name: "fleetRunCannotWriteLogs", category: .refused)
}

extension VaultError {
    static func fleetRunCannotWriteLogs(_ target: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.fleetRunCannotWriteLogs, "a fleet run cannot migrate to schema version \(target): a schema 3 vault is written only with its signed household log, which fleet runs do not write",
                   hint: "migrate each family's vault with its own key: vault-tool migrate vault --key-file PARENT.nsec --to 3 --in-place VAULT", file: file, line: line)
    }
}
