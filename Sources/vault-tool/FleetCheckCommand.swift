import CLISupport
import Synchronization
import VaultCore
import VaultFleet
import VaultStorage

/// `check --source s3://BUCKET/PREFIX/ --subset I/N` (or a manifest of objects): the
/// presentation of a rolling integrity check (the rules are VaultFleet's ``FleetCheck``): a JSON
/// Lines report on standard output, progress on a terminal's standard error, and a summary with
/// the slice's census at the end; exit 1 when an object is damaged or truncated.
struct FleetCheckCommand {
    let source: FleetCheck.Source
    let subset: FleetCheck.Subset?
    /// `--vault-key-dir` or `--vault-key-command`; nil for a manifest's key files.
    let keys: HouseholdKeySource?
    let parallelism: Int
    /// `--allow-no-keys`: a slice where no vault had its key here passes.
    let allowNoKeys: Bool
    /// `--allow-empty`: a prefix with no object passes.
    let allowEmpty: Bool

    func run() throws {
        // A key folder mounted wrong is refused before anything is listed: every vault would
        // be `no-key`, and the night would pass having opened nothing (issue 38).
        try keys?.requireUsable()
        // A manifest's mistakes are said before the store is reached (libcurl, credentials).
        if case .manifest(let bytes, let path) = source { _ = try BucketMigration.checkedManifest(bytes, path: path, destination: nil) }
        // The store VaultTool.main registers.
        let store = try ObjectStores.shared(as: ObjectStore.self, for: "s3://")
        let objects = try FleetCheck.objects(source, subset: subset, store: store, allowEmpty: allowEmpty)
        let progress = RunReport<FleetCheck.Status>(total: objects.count, failing: Set(FleetCheck.Status.allCases.filter(\.isFailure)))
        let kinds = Mutex([VaultCensus.Kind: Int]())
        // Objects with a vault's header, each one's household named: the vaults a key could open.
        let vaults = Mutex(0)
        let loadFile: @Sendable (BucketMigration.KeyFiles) throws -> VaultAccess = { try VaultAccessFiles.load(keyFile: $0.keyFile, vaultKeyFile: $0.vaultKeyFile) }
        try FleetCheck.run(objects, store: store, keys: keys.map { HouseholdKeys($0, loadFile: loadFile) }, parallelism: parallelism,
                           loadAccess: loadFile, report: { result in
            if let kind = result.kind, result.status != .foreign { kinds.withLock { $0[kind, default: 0] += 1 } }
            if result.household != nil { vaults.withLock { $0 += 1 } }
            try progress.add(result.status, Self.jsonLine(result, subset: subset))
        })
        let counts = progress.finish()
        func count(_ status: FleetCheck.Status) -> Int { counts[status, default: 0] }
        let slice = subset.map { " of slice \($0.origin)" } ?? ""
        diagnostics.note("checked \(objects.count) objects\(slice): ok \(count(.ok)), no key \(count(.noKey)), key unreadable \(count(.keyUnreadable)), truncated \(count(.truncated)), foreign \(count(.foreign)), damaged \(count(.damaged)), gone \(count(.gone))")
        let census = kinds.withLock { $0 }.sorted { $0.key < $1.key }
            .map { "format \($0.key.format), suite \($0.key.suite), schema \($0.key.schemaVersion): \($0.value)" }
        if !census.isEmpty { diagnostics.note("census of the slice: \(census.joined(separator: "; "))") }
        guard FleetCheck.Status.allCases.contains(where: { $0.isFailure && count($0) > 0 }) else {
            let opened = vaults.withLock { $0 }
            // Vaults were read and not one had its key here: the folder is not this fleet's. A
            // slice of one or two vaults says too little: in a fleet with a few households whose
            // keys are not here, tonight's slice may hold only theirs, and the nightly check
            // failed at random (the image's walk-through did, one run in a dozen).
            if let keys, count(.noKey) > 0, count(.noKey) == opened {
                let error = VaultError.noKeyForAnyVault(keys.description, vaults: opened)
                guard allowNoKeys || (subset != nil && opened < Self.sliceEvidence) else {
                    throw error
                }
                diagnostics.warning(error.reason)
            }
            return
        }
        throw VaultError.fleetCheckFailed(damaged: count(.damaged), truncated: count(.truncated), keyUnreadable: count(.keyUnreadable))
    }

    /// The least vaults a slice must hold, none with its key here, to say the keys are not
    /// this fleet's (exit 66); fewer are said in a warning.
    static let sliceEvidence = 3

    /// One object's line; a sliced run says its slice on each.
    static func jsonLine(_ result: FleetCheck.Result, subset: FleetCheck.Subset?) -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("object", .string(result.object.description)),
            ("status", .string(result.status.rawValue)),
            ("size", .int(result.size)),
        ]
        if let etag = result.etag { entries.append(("etag", .string(etag))) }
        if let kind = result.kind {
            entries += [("format", .int(Int(kind.format))), ("suite", .int(Int(kind.suite))), ("schemaVersion", .int(Int(kind.schemaVersion)))]
        }
        if let household = result.household { entries.append(("householdId", .string(household.hex))) }
        if let reason = result.reason { entries.append(("reason", .string(reason))) }
        if let subset { entries += [("subset", .string(subset.description)), ("subsetFrom", .string(subset.origin))] }
        return .object(entries)
    }
}
