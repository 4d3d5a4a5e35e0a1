import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultStorage

extension BucketMigration {
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
            for (entry, name) in try checkedManifest(bytes, path: path, destination: destination) {
                let job = Self.job(name, below: nil, destination: destination)
                keys[name] = KeyFiles(keyFile: entry.keyFile, vaultKeyFile: entry.vaultKeyFile)
                if let shard, let household = job.namedHousehold, !shard.contains(household) { continue }
                jobs.append(job)
            }
            return Plan(jobs: jobs, batch: "manifest \(Hex.encode(SHA256.hash(bytes))) \(to)", bucket: jobs.first?.source.bucket ?? "manifest",
                        shard: shard, listedRange: nil, keys: nil, manifestKeys: keys, manifestPath: path,
                        probeFolders: probeFolders(jobs, listed: nil, destination: destination))
        }
    }

    /// A bucket manifest's lines, each with the object it names, held to every rule that needs
    /// no store: each line names an object (not a file, not a prefix), no two lines write one
    /// output (`destination`, nil for a check, which writes none), and every key file can be
    /// read. A command asks it before it reaches the store: a manifest of local files loaded
    /// libcurl and asked every credential source first, and a missing library or credentials
    /// hid the line's own mistake (two trials).
    public static func checkedManifest(_ bytes: [UInt8], path: String, destination: Destination?) throws -> [(entry: BatchMigration.Job, object: S3ObjectName)] {
        var outputs = ManifestOutputs<S3ObjectName>()
        let entries = try BatchMigration.parseManifest(bytes, manifestPath: path, outDir: "").map { entry -> (entry: BatchMigration.Job, object: S3ObjectName) in
            guard case .object(let name) = try VaultLocation(entry.vault), !name.isPrefix else {
                throw VaultError.fileInBucketBatch(line: entry.line, vault: entry.vault)
            }
            // In place too: two lines naming one object would migrate it twice, the second
            // racing the first's compare-and-swap (a trial: not refused, where --out refused it).
            if let destination { try outputs.claim(Self.job(name, below: nil, destination: destination).output, line: entry.line) }
            return (entry, name)
        }
        // Once every line is known to name an object: the lines' own mistakes come first.
        try requireKeyFiles(entries.map(\.entry))
        return entries
    }

    /// Refuses a manifest naming a key file that cannot be read, by line, before anything is
    /// listed or written (as a folder batch does): every vault of it would fail.
    static func requireKeyFiles(_ entries: [BatchMigration.Job]) throws {
        var checked: Set<String> = []
        for entry in entries {
            for (what, path) in [("key file", entry.keyFile), ("vault-key file", entry.vaultKeyFile)] {
                guard let path, checked.insert(path).inserted else { continue }
                if access(path, R_OK) != 0 { throw VaultError.manifestFileUnreadable(line: entry.line, what: what, path: path, errno: errno) }
                // A folder or a FIFO passes access(2), and every vault of it failed later (a review).
                try AtomicFile.requireRegularFileIfPresent(path, what: "the \(what) of manifest line \(entry.line)")
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

}
