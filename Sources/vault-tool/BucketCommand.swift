import ArgumentParser
import CLISupport
import Synchronization
import VaultCore
import VaultFiles
import VaultFleet
import VaultStorage

/// `migrate --source s3://BUCKET/PREFIX/` (or a manifest of objects) with `--in-place` or
/// `--out s3://…/`: the presentation of a fleet run on a bucket (the rules are VaultFleet's
/// ``BucketMigration``): a JSON Lines report on standard output, progress on a terminal's
/// standard error, a summary at the end, and with `--completion-report` the same results in S3
/// Batch Operations' CSV layout (``CompletionReport``). The exit code is what a job engine's retry
/// policy acts on: 0 done, 75 when every failure was the object store's (or the run stopped
/// early, the store gone or on SIGTERM, with the rest left for a rerun), 78 when the store's
/// configuration cannot work, 1 otherwise.
struct BucketCommand {
    enum Jobs {
        case listing(S3ObjectName)
        /// The path of a manifest: objects, each with the key file that opens it.
        case manifest(String)
        /// The manifest.json of an S3 Inventory report.
        case inventory(S3ObjectName)
    }

    let jobs: Jobs
    let target: Int
    let destination: BucketMigration.Destination
    /// `--vault-key-dir` or `--vault-key-command` of a listing or an inventory; nil for a manifest.
    let keys: HouseholdKeySource?
    let shard: BucketMigration.Shard?
    let journal: String?
    let parallelism: Int
    let dryRun: Bool
    let skipFailed: Bool
    /// `--completion-report FILE` or `s3://BUCKET/KEY`: nil for none.
    let completionReport: String?
    /// `--allow-no-keys`: a run where no vault had its key here passes.
    let allowNoKeys: Bool
    /// `--allow-empty`: a prefix or inventory that lists no vault passes.
    let allowEmpty: Bool
    /// The command as the journal keeps it, to name it when it refuses another.
    let command: String

    func run() throws {
        // A missing zlib stops an inventory run before anything is read (issue 48).
        if case .inventory = jobs { try S3Inventory.requireLibraries() }
        // A key folder mounted wrong is refused before anything is listed (issue 38).
        try keys?.requireUsable()
        // A manifest's mistakes are said before the store is reached (libcurl, credentials).
        let manifest = try manifestPath.map { path in
            let bytes = try InputFiles.read(path, what: "manifest", limit: InputLimits.listFile)
            _ = try BucketMigration.checkedManifest(bytes, path: path, destination: destination)
            return bytes
        }
        // A missing SQLite is said before the store is listed: a real run keeps a journal.
        if !dryRun { try BucketMigration.requireJournalLibrary() }
        // The store VaultTool.main registers: a bucket batch lists through it.
        let store = try ObjectStores.shared(as: ObjectStore.self, for: "s3://")
        let source: BucketMigration.Source = switch jobs {
        case .listing(let prefix): .listing(prefix, keys: keys!)
        case .manifest(let path): .manifest(bytes: manifest!, path: path)
        case .inventory(let name): .inventory(try S3Inventory(manifest: try InputFiles.read(name.description, what: "inventory manifest", limit: InputLimits.listFile), at: name),
                                              name: name, keys: keys!)
        }
        let plan = try BucketMigration.plan(source, destination: destination, shard: shard, store: store, allowEmpty: allowEmpty)
        // Declared before anything is written (the plan only read): the report may not be the
        // journal or the manifest, and an object there is replaced only at the version there now.
        let journalPath = journal ?? plan.defaultJournal
        let report = completionReport.map { DeclaredOutput("--completion-report", $0, kind: .text) }
        let files = try report.map { report in
            try CommandFiles(reads: [FileSet.Input("--journal", journalPath)] + (manifestPath.map { [FileSet.Input("--manifest", $0)] } ?? []),
                             writes: [report])
        }
        // The run changes the bucket before the report is written: a report that could not be
        // written there is refused first.
        if !dryRun, let files, let report { try files.requireWritable(report) }
        let migration = try BucketMigration(plan, store: store, target: target, destination: destination, shard: shard,
                                            journalPath: journalPath, dryRun: dryRun, command: command)
        let total = plan.jobs.count
        let progress = RunReport<MigrationStatus>(total: total, failing: [.failed, .conflict])
        // Every result only for a completion report; else only the failures, which decide the
        // exit code: a fleet's millions of done vaults are not held to the end for nothing.
        let keepsAll = files != nil
        let results = Mutex<[BucketMigration.Result]>([])
        // A job engine's SIGTERM stops the run between vaults, with its journal and summary.
        StopSignals.install()
        let householdKeys = keys.map { source in
            HouseholdKeys(source, loadFile: { files in try VaultAccessFiles.load(keyFile: files.keyFile, vaultKeyFile: files.vaultKeyFile) })
        }
        let stop = try migration.run(parallelism: parallelism, breaker: RunBreaker(signalled: { StopSignals.signalled }),
                                     loadAccess: { job, household in
            try plan.access(for: job, household: household, keys: householdKeys) { try VaultAccessFiles.load(keyFile: $0.keyFile, vaultKeyFile: $0.vaultKeyFile) }
        }, report: { result in
            try progress.add(result.status, Self.jsonLine(result, shard: shard))
            if keepsAll || result.isFailure { results.withLock { $0.append(result) } }
        })
        let finished = results.withLock { $0 }
        if let files, let report { try files.writer().write(report, CompletionReport.csv(finished)) }
        let counts = progress.finish()
        func count(_ status: MigrationStatus) -> Int { counts[status, default: 0] }
        let seen = counts.values.reduce(0, +)
        let shardNote: String = switch (shard, plan.listedRange) {
        case (nil, _): ""
        case (let shard?, let range?): " (shard \(shard): the keys \(range.after.map { "after \($0)" } ?? "from the first")"
            + " \(range.through.map { "through \($0)" } ?? "to the last"))"
        case (let shard?, nil): " (shard \(shard): \(total - seen) of the \(total) listed belong to other shards)"
        }
        let failure = stop.map { RunBreaker.failure($0, notStarted: total - seen) } ?? FleetRunOutcome.failure(of: finished, dryRun: dryRun)
        if dryRun {
            diagnostics.note("dry run: would migrate \(count(.wouldMigrate)), unchanged \(count(.unchanged)), no key \(count(.noKey)), failing \(count(.failed)) of \(seen) vaults (version \(target))\(shardNote); nothing was written")
        } else {
            diagnostics.note("migrated \(count(.migrated)), unchanged \(count(.unchanged)), done earlier \(count(.previouslyDone)), no key \(count(.noKey)), conflicts \(count(.conflict)), failed \(count(.failed)) of \(seen) vaults (version \(target))\(shardNote)")
        }
        if count(.noKey) > 0 {
            diagnostics.note("\(count(.noKey)) vaults have no key here and are left for the app to migrate on the families' devices")
        }
        guard let failure else {
            // Vaults were found and not one had its key here: the keys are not this fleet's, or
            // not where they were meant to be mounted (a vault of every household is `no-key`).
            if count(.noKey) > 0, count(.noKey) == seen, let keys {
                let error = VaultError.noKeyForAnyVault(keys.description, vaults: seen)
                guard allowNoKeys else {
                    // Its rows say only no-key: a mistake leaves no journal for the next run.
                    migration.discardJournalIfNew()
                    throw error
                }
                diagnostics.warning(error.reason)
            }
            return
        }
        if skipFailed, stop == nil {
            diagnostics.warning("\(count(.failed) + count(.conflict)) vaults failed or changed too often and were skipped; they are in the report and the journal")
            return
        }
        throw BatchCommand.withSkipHint(failure)
    }

    private var manifestPath: String? {
        if case .manifest(let path) = jobs { return path }
        return nil
    }

    /// One vault's line; a sharded run says its shard and where it came from on each.
    static func jsonLine(_ result: BucketMigration.Result, shard: BucketMigration.Shard? = nil) -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("vault", .string(result.job.source.description)),
            ("output", .string(result.job.output.description)),
            ("status", .string(result.status.rawValue)),
        ]
        if let from = result.from { entries.append(("from", .int(from))) }
        entries.append(("to", .int(result.to)))
        if let before = result.etagBefore { entries.append(("etagBefore", .string(before))) }
        if let after = result.etagAfter { entries.append(("etagAfter", .string(after))) }
        if let error = result.error {
            entries.append(("error", .string(error.reason)))
            entries.append(("exit", .int(Int(ExitStatus(error.code.category).rawValue))))
        }
        if let shard { entries += [("shard", .string(shard.description)), ("shardFrom", .string(shard.origin))] }
        return .object(entries)
    }
}

/// The keys of a fleet run that lists its vaults: `--vault-key-dir DIR`, or
/// `--vault-key-command CMD` run once a household (``HouseholdKeySource``); nil for neither.
/// Both is a usage error.
func fleetKeySource(folder: String?, command: String?) throws -> HouseholdKeySource? {
    switch (folder, command) {
    case (let folder?, nil): return .folder(folder)
    case (nil, let command?): return .command(SecretCommand(arguments: try KeyCommand(parsing: command, option: "--vault-key-command").arguments))
    case (nil, nil): return nil
    case (_?, _?): throw ValidationError("give --vault-key-dir or --vault-key-command, not both")
    }
}
