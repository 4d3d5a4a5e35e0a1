import FoundationEssentials
import VaultCore
import VaultFiles
import VaultStorage

/// The rolling integrity check of a fleet in a bucket, in slices, as restic checks a repository
/// with `check --read-data-subset n/t`: one run reads every object of one slice in full, so N
/// runs (a nightly job over N nights) read every object once.
///
/// Each object is read whole. Its header is checked, and its length against the smallest vault;
/// with its household's key, it is opened (which authenticates every byte) and checked as
/// `vault-tool check` checks one vault. The same pass counts the slice's vaults by kind (the
/// census of the slice), since every header is at hand.
public enum FleetCheck {
    /// What one object turned out to be.
    public enum Status: String, Sendable, CaseIterable {
        /// It opens with its household's key and every rule holds.
        case ok
        /// A vault's header, but shorter than the smallest vault: cut off in a copy or upload.
        case truncated
        /// Not a vault envelope at all (it does not start with `MTVAULT`).
        case foreign
        /// A vault's header, but it does not open, or opens and breaks a rule, or its header
        /// names another household than its object name, or a kind this build cannot read.
        case damaged
        /// A sound header; no key here to open it, so the rest is unchecked.
        case noKey = "no-key"
        /// Its household's key file is there but cannot be read: the operator's fault, which a
        /// nightly job must hear of, since the vault goes unchecked.
        case keyUnreadable = "key-unreadable"
        /// Removed between the listing and the read (a household deleted meanwhile): no finding.
        case gone

        /// The statuses a nightly job must alert on.
        public var isFailure: Bool { self == .truncated || self == .damaged || self == .keyUnreadable }
    }

    /// `--subset I/N` (1-based, as restic's `n/t`) or `--subset auto/N`: the slice of tonight,
    /// the day's number since 1970 modulo N, so N nightly runs cover the fleet once.
    ///
    /// The slices of a listing are the runs of keys of `migrate --shard I/N`
    /// (``ShardKeyRange``): a vault named `<household id>.vault` under the prefix falls in the
    /// slice of its household, any other object in the slice its key sorts into, and each slice
    /// lists only its own keys. A manifest's objects have no prefix to sort under: a vault named
    /// after its household falls in its household's slice, any other object in the slice of the
    /// SHA-256 of its key, so a stray object is read once every N runs too.
    public struct Subset: Sendable, Equatable, CustomStringConvertible {
        /// The same ranges as a shard's.
        let shard: BucketMigration.Shard
        /// How it was named: "3/7", or "auto/7 on 2026-11-25", for the report.
        public let origin: String

        public var index: Int { shard.index }
        public var count: Int { shard.count }

        /// As many slices as a fleet can be split into shards.
        public static let maximumCount = BucketMigration.Shard.maximumCount

        public init(parsing text: String, now: Timestamp) throws {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let count = Int(parts[1]), (1...Self.maximumCount).contains(count) else {
                throw VaultError.outOfRange("a subset ('\(text)')", "I/N with 1 ≤ I ≤ N ≤ \(Self.maximumCount), such as 3/7, or auto/N")
            }
            if parts[0] == "auto" {
                // Days and slots rounded down, also before 1970 (where Swift's / and % round
                // toward zero).
                let day = now.seconds >= 0 ? now.seconds / 86_400 : (now.seconds - 86_399) / 86_400
                let index = Int((day % Int64(count) + Int64(count)) % Int64(count)) + 1
                shard = BucketMigration.Shard(index: index, count: count, origin: "--subset \(text)")
                origin = "auto/\(count) on \(now.rfc3339.prefix(10))"
            } else {
                guard let index = Int(parts[0]), (1...count).contains(index) else {
                    throw VaultError.outOfRange("a subset ('\(text)')", "I/N with 1 ≤ I ≤ N ≤ \(Self.maximumCount), such as 3/7, or auto/N")
                }
                shard = BucketMigration.Shard(index: index, count: count, origin: "--subset \(text)")
                origin = "\(index)/\(count)"
            }
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.shard == rhs.shard }

        /// Whether a manifest's object named `key` is this slice's to read.
        public func containsManifestObject(_ key: String) -> Bool {
            let job = BucketMigration.job(S3ObjectName(bucket: "", key: key), below: nil, destination: .inPlace)
            if let household = job.namedHousehold { return shard.contains(household) }
            let leading = SHA256.hash(Array(key.utf8)).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return shard.leadingRange.contains(leading)
        }

        public var description: String { shard.description }
    }

    /// One object's outcome.
    public struct Result: Sendable {
        public let object: S3ObjectName
        public let size: Int
        public let etag: String?
        public let status: Status
        /// The header's kind and household, when it has a vault's header.
        public let kind: VaultCensus.Kind?
        public let household: HouseholdID?
        /// Why it is not `ok`, in words that quote no secret.
        public let reason: String?
    }

    /// What to check: every object under a prefix, or the objects a manifest names (each with
    /// its key file, relative to the manifest).
    public enum Source: Sendable {
        case listing(S3ObjectName)
        case manifest(bytes: [UInt8], path: String)
    }

    /// One object to check, with the key files a manifest gives it.
    public struct Entry: Sendable {
        public let object: S3ObjectName
        /// The listing's length; nil for a manifest's object.
        let size: Int?
        let manifestKeys: BucketMigration.KeyFiles?
    }

    /// The objects of `subset` (all of them without one), in the listing's or the manifest's
    /// order. Keys ending in `/` (folder markers) are no objects. A prefix with no object is
    /// refused unless `allowEmpty` (a mistyped prefix would pass every night having read
    /// nothing); a slice of its own may be empty, as long as the prefix is not.
    public static func objects(_ source: Source, subset: Subset?, store: ObjectStore, allowEmpty: Bool = false) throws -> [Entry] {
        switch source {
        case .listing(let prefix):
            var found: [Entry] = []
            try BucketMigration.listRun(under: prefix, shard: subset?.shard, store: store) { listed in
                // A migration's conditional-write probe is no object of the fleet.
                guard !listed.key.hasSuffix("/"), !ObjectStore.isConditionalWriteProbe(listed.key) else { return }
                found.append(Entry(object: S3ObjectName(bucket: prefix.bucket, key: listed.key), size: listed.size, manifestKeys: nil))
            }
            if found.isEmpty, !allowEmpty, try subset == nil || !BucketMigration.holdsObjects(prefix, store: store) {
                throw VaultError.nothingListed("no object under \(prefix)")
            }
            return found
        case .manifest(let bytes, let path):
            // A key file that cannot be read would fail each of its objects as key-unreadable;
            // said once, by line, before anything is read.
            return try BucketMigration.checkedManifest(bytes, path: path, destination: nil).compactMap { entry, name -> Entry? in
                guard subset?.containsManifestObject(name.key) != false else { return nil }
                return Entry(object: name, size: nil, manifestKeys: BucketMigration.KeyFiles(keyFile: entry.keyFile, vaultKeyFile: entry.vaultKeyFile))
            }
        }
    }

    /// Reads and checks one object. `loadAccess` gives the household's key, or nil when the
    /// operator holds none. Errors of the store (after its retries) are thrown: the run stops,
    /// as a slice that was not read is not checked.
    public static func check(_ object: S3ObjectName, size: Int? = nil, store: ObjectStore,
                             loadAccess: (HouseholdID) throws -> VaultAccess?) throws -> Result {
        // Larger than any vault (by the listing, or grown since): only its first bytes are read,
        // to say what it is.
        if let size, size > InputLimits.document { return try oversized(object, size: size, store: store) }
        let read: S3Client.Object?
        do {
            read = try store.withClient { try $0.get(object) }
        } catch let error as VaultError where error.code == .tooLarge {
            return try oversized(object, size: size, store: store)
        }
        guard let read else {
            return Result(object: object, size: 0, etag: nil, status: .gone, kind: nil, household: nil, reason: "removed while the check ran")
        }
        let bytes = read.bytes
        func result(_ status: Status, _ reason: String?, kind: VaultCensus.Kind? = nil, household: HouseholdID? = nil) -> Result {
            Result(object: object, size: bytes.count, etag: read.etag, status: status, kind: kind, household: household, reason: reason)
        }
        let kind: VaultCensus.Kind
        switch VaultCensus.sorting(header: bytes[...], length: nil) {
        case .notVault(let reason): return result(.foreign, reason)
        case .truncated(let reason, let cut): return result(.truncated, reason, kind: cut)
        case .vault(let sorted): kind = sorted
        }
        let header: VaultHeader
        do {
            header = try VaultEnvelope(parsing: bytes).header
        } catch let error as VaultError {
            return result(.damaged, error.reason, kind: kind)
        }
        let household = header.householdID
        let named = BucketMigration.job(object, below: nil, destination: .inPlace).namedHousehold
        if let named, named != household {
            return result(.damaged, "named for household \(named.hex.prefix(12))… but its header says \(household.hex.prefix(12))…",
                          kind: kind, household: household)
        }
        let access: VaultAccess
        do {
            guard let loaded = try loadAccess(household) else { return result(.noKey, nil, kind: kind, household: household) }
            access = loaded
        } catch let failure as HouseholdKeys.Failure {
            // A key command that cannot answer is no finding about this vault: the run stops.
            throw failure
        } catch {
            // The operator's key file, not the vault: the object stays unchecked, and says why.
            return result(.keyUnreadable, "its key cannot be read: \((error as? VaultError)?.reason ?? "\(error)")", kind: kind, household: household)
        }
        do {
            let opened = try Vault.open(bytes, with: access)
            let report = try VaultCheck.run(opened.document, access: access)
            guard !report.findings.isEmpty else { return result(.ok, nil, kind: kind, household: household) }
            // Rules only: the records and messages name the family's devices and children, which
            // a report kept in a log has no need of (`check` of the one vault shows them).
            let count = report.findings.count
            let rules = Set(report.findings.map(\.rule.rawValue)).sorted().joined(separator: ", ")
            return result(.damaged, "\(count) finding\(count == 1 ? "" : "s") of check (rules \(rules))", kind: kind, household: household)
        } catch let error as VaultError {
            return result(.damaged, error.reason, kind: kind, household: household)
        }
    }

    /// An object larger than any vault: its header says whether it is a vault (then damaged:
    /// no tool can open it) or something else under the prefix.
    private static func oversized(_ object: S3ObjectName, size: Int?, store: ObjectStore) throws -> Result {
        let header = try store.withClient { try $0.get(object, range: 0..<VaultEnvelope.headerByteCount) }
        let bytes = header?.bytes ?? []
        let length = size.map { "\($0) bytes" } ?? "more bytes"
        let isVault = VaultCensus.sorting(header: bytes[...], length: size).startsLikeAVault
        return Result(object: object, size: size ?? bytes.count, etag: header?.etag, status: isVault ? .damaged : .foreign, kind: nil, household: nil,
                      reason: "\(length), larger than any vault (\(InputLimits.describe(bytes: InputLimits.document))): not read whole")
    }

    /// Checks `objects`, `parallelism` at a time (the work waits on the network), reporting each
    /// as it finishes. A household's key is the manifest's key files for its object (read by
    /// `loadAccess`), or the household's from `keys` (a folder's `<household id>.vaultkey`, or
    /// what a key command prints). A key command that fails stops the run with its error: no
    /// other object is read.
    public static func run(_ objects: [Entry], store: ObjectStore, keys: HouseholdKeys?, parallelism: Int,
                           loadAccess: @escaping @Sendable (BucketMigration.KeyFiles) throws -> VaultAccess,
                           report: @escaping @Sendable (Result) throws -> Void) throws {
        do {
            _ = try concurrently(objects.count, parallelism: parallelism) { index in
                let entry = objects[index]
                try report(try check(entry.object, size: entry.size, store: store) { household in
                    if let files = entry.manifestKeys { return try loadAccess(files) }
                    return try keys?.access(for: household)
                })
            }
        } catch let failure as HouseholdKeys.Failure {
            throw failure.error
        }
    }
}

extension VaultError {
    /// A rolling check found damaged or truncated objects, or keys it could not read: each is in
    /// the report.
    public static func fleetCheckFailed(damaged: Int, truncated: Int, keyUnreadable: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.fleetCheckFailed, "\(damaged) damaged and \(truncated) truncated objects, and \(keyUnreadable) whose key file cannot be read; each is named in the report",
                   file: file, line: line)
    }
}
