import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultFiles
import VaultFleet
import VaultStorage

/// `migrate bucket` (or `migrate --source …`, `--inventory …`, `--manifest … --in-place`): a fleet
/// migrated where it lives; the run itself is ``BucketCommand``.
struct MigrateBucket: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bucket",
        abstract: "Migrate a fleet of vaults where it lives, in a bucket: a prefix, an S3 Inventory report or a manifest of objects.",
        discussion: """
        A fleet in a bucket is migrated where it lives with --source s3://BUCKET/PREFIX/ and \
        --in-place (or --out s3://OTHER/PREFIX/), the keys read from --vault-key-dir \
        (<household id>.vaultkey files) or named by a manifest of objects; --inventory takes \
        the objects an S3 Inventory report lists instead of a listing. Every write is \
        conditional on the version read: a vault a family's device changes meanwhile is read \
        and migrated again, never overwritten. Vaults without a key here are reported as no-key \
        and left for the app; --shard I/N splits a fleet between N machines; --shard auto takes \
        the shard a job engine gives (a Kubernetes Indexed Job, an AWS Batch array job, a Cloud \
        Run job), and each shard lists only its own range of keys. A bucket run exits 0 when \
        done, 75 (EX_TEMPFAIL) when every failure was the object store's (throttling, 5xx, out \
        of reach: run it again later), and 1 when any vault failed for good. A fleet run never \
        drops values and keeps no backup object: the bucket's own versioning is the way back.

        Mistakes stop a bucket run before anything is listed or written, with no journal made: \
        a --vault-key-dir that is missing, unreadable, empty or holds no <household id>.vaultkey \
        file, and a prefix or inventory that lists no *.vault object, exit 64 (--allow-empty \
        accepts an empty one; one shard of a prefix that holds objects may be empty). A run \
        that found vaults and had the key of none exits 66 unless --allow-no-keys. Every \
        request stays under the prefixes the command names: the check that the store honours \
        conditional writes writes, and then deletes (each version it made, on a bucket with \
        versioning), PREFIX.hvt-conditional-write-check-… under the prefix it writes to. The \
        word bucket may be left out: 'vault-tool migrate --source …' is this command.

        Examples:
          vault-tool migrate bucket --source s3://family-vaults/vaults/ --to 2 \\
            --in-place --vault-key-dir keys/ --shard 1/2 > report.jsonl
          # in each pod of a Kubernetes Indexed Job of 8 completions:
          vault-tool migrate bucket --source s3://family-vaults/vaults/ --to 2 \\
            --in-place --vault-key-dir keys/ --shard auto --shard-count 8 \\
            > report.jsonl
          # the vaults of the day's S3 Inventory report, instead of a listing:
          vault-tool migrate bucket --inventory s3://inv/family-vaults/manifest.json \\
            --to 2 --in-place --vault-key-dir keys/ > report.jsonl
          # a manifest of objects, each with its key file:
          vault-tool migrate bucket --manifest jobs.jsonl --to 2 --in-place \\
            > report.jsonl
          # a shard with no household of ours, where that is expected:
          vault-tool migrate bucket --source s3://family-vaults/vaults/ --to 2 \\
            --in-place --vault-key-dir keys/ --shard 5/8 --allow-no-keys \\
            > report.jsonl
          # the keys from a secrets manager: printed for the household in
          # $HVT_HOUSEHOLD, exit 66 for none (no-key); any other failure
          # stops the run with exit 78 (docs/fleet.md):
          vault-tool migrate bucket --source s3://family-vaults/vaults/ --to 2 \\
            --in-place --vault-key-command 'fleet-key-lookup vault-key' \\
            > report.jsonl
          # with S3 Batch Operations' CSV completion report beside it:
          vault-tool migrate bucket --source s3://family-vaults/vaults/ --to 2 \\
            --in-place --vault-key-dir keys/ --completion-report report.csv \\
            > report.jsonl
        """
    )

    @OptionGroup var target: MigrationTargetOptions

    @Option(help: ArgumentHelp("Migrate every *.vault object under this prefix, s3://BUCKET/PREFIX/.", valueName: "PREFIX"))
    var source: String?

    @Option(help: ArgumentHelp("Migrate every current *.vault object an S3 Inventory report (CSV) lists, given by its manifest.json, s3://BUCKET/…/manifest.json.", valueName: "MANIFEST"))
    var inventory: String?

    @Option(help: ArgumentHelp("Migrate the objects a JSON Lines manifest names, one {\"vault\": \"s3://…\", \"keyFile\": PATH} or {…, \"vaultKeyFile\": PATH} a line.", valueName: "FILE"))
    var manifest: String?

    @Flag(help: "Write each result over the object it came from.")
    var inPlace = false

    @Option(help: ArgumentHelp("Write the results under this prefix (s3://BUCKET/PREFIX/) instead of in place.", valueName: "PREFIX"))
    var out: String?

    @Option(help: ArgumentHelp("The folder of vault keys, one <household id>.vaultkey file each.", valueName: "DIR"))
    var vaultKeyDir: String?

    @Option(help: ArgumentHelp("Instead of --vault-key-dir: a command (run without a shell) run once a household, with its id in HVT_HOUSEHOLD, that prints its vault key, or exits 66 when it holds none (no-key); any other failure stops the run with exit 78.", valueName: "CMD"))
    var vaultKeyCommand: String?

    @Option(help: ArgumentHelp("Take only the I-th of N equal ranges of household ids, I/N (1/2 and 2/2 on two machines), or auto: the index a job engine gives (Kubernetes JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, Cloud Run CLOUD_RUN_TASK_INDEX and CLOUD_RUN_TASK_COUNT; 0-based).", valueName: "SHARD"))
    var shard: String?

    @Option(help: ArgumentHelp("With --shard auto: how many shards the job has, where the engine does not say (or HVT_SHARD_COUNT).", valueName: "N"))
    var shardCount: Int?

    @Option(help: ArgumentHelp("The SQLite journal (default: BUCKET.migrate-journal.sqlite, or BUCKET.shard-I-of-N.migrate-journal.sqlite, in the current folder).", valueName: "FILE"))
    var journal: String?

    @Option(help: ArgumentHelp("How many vaults to migrate at once (default 16).", valueName: "N"))
    var jobs: Int?

    @Flag(help: "Accept vaults that fail or change too often (they stay in the report and the journal) and exit 0.")
    var skipFailed = false

    @Option(help: ArgumentHelp("Also write each vault's result in the S3 Batch Operations completion report's CSV layout (Bucket, Key, VersionId, TaskStatus, HTTPStatusCode, ErrorCode, ResultMessage) to FILE or s3://BUCKET/KEY, such as --completion-report s3://family-vaults/reports/shard-3.csv.", valueName: "FILE"))
    var completionReport: String?

    @Flag(help: "Exit 0 when no vault had its key here (each is no-key), instead of 66.")
    var allowNoKeys = false

    @Flag(help: "Exit 0 when the prefix or inventory lists no *.vault object, instead of 64.")
    var allowEmpty = false

    @OptionGroup var log: LogFormatOption

    func validate() throws {
        // A command the tool will not run (shell syntax) is said first, before anything else.
        _ = try fleetKeySource(folder: vaultKeyDir, command: vaultKeyCommand)
        guard inPlace != (out != nil) else { throw ValidationError("a bucket run takes --in-place or --out s3://BUCKET/PREFIX/, one of the two") }
        guard [source, inventory, manifest].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give one of --source, --inventory and --manifest")
        }
        let listed = source != nil || inventory != nil
        guard listed == (try fleetKeySource(folder: vaultKeyDir, command: vaultKeyCommand) != nil) else {
            throw ValidationError(listed ? "\(source != nil ? "--source" : "--inventory") needs --vault-key-dir DIR or --vault-key-command CMD (the manifest form names its own keys)"
                                         : "--vault-key-dir and --vault-key-command go with --source or --inventory; a manifest names its own keys")
        }
        for (option, value) in [("--source", source), ("--out", out)] {
            if let value, !VaultLocation.isObject(value) { throw ValidationError("\(option) takes s3://BUCKET/PREFIX/, not '\(value)'") }
        }
        if let inventory, (try? S3ObjectName(parsing: inventory))?.isPrefix != false {
            throw ValidationError("--inventory takes s3://BUCKET/…/manifest.json, the report's manifest.json, not '\(inventory)'")
        }
        if let source, let out, let from = try? S3ObjectName.folder(parsing: source), let to = try? S3ObjectName.folder(parsing: out),
           from.overlaps(to) {
            throw ValidationError("--out must not overlap --source: a rerun would list the results as vaults to migrate")
        }
        if shardCount != nil, shard != "auto" { throw ValidationError("--shard-count goes with --shard auto") }
        if let completionReport {
            guard completionReport != "-" else { throw ValidationError("--completion-report takes FILE or s3://BUCKET/KEY: standard output carries the JSON Lines report") }
            guard !target.dryRun else { throw ValidationError("--completion-report is not written by a dry run, which writes nothing") }
        }
    }

    /// `--shard I/N`, or `auto`: the engine's. A shard the environment cannot say is a usage
    /// error naming the variable, before anything is read.
    private func parsedShard() throws -> BucketMigration.Shard? {
        guard let shard else { return nil }
        guard shard == "auto" else { return try BucketMigration.Shard(parsing: shard) }
        return try BucketMigration.Shard.fromEngine(ProcessInfo.processInfo.environment, count: shardCount)
    }

    func run() throws {
        log.apply()
        // Listed runs hold vault keys only; schema 3 seals each family's secrets under a key
        // only its parent key derives (docs/fleet.md, "Schema 3"): refused before the first vault.
        if source != nil || inventory != nil, Migration.needsParentKey(target.to) {
            throw VaultError.bucketRunCannotReachSchema3(target.to)
        }
        if let jobs { try requireRange(jobs, 1...256, "--jobs") }
        let bucketJobs: BucketCommand.Jobs = if let source {
            .listing(try S3ObjectName.folder(parsing: source))
        } else if let inventory, let name = try S3ObjectName(parsing: inventory) {
            .inventory(name)  // an object, not a prefix: validate() made sure
        } else {
            .manifest(manifest!)
        }
        let destination: BucketMigration.Destination = try out.map { .prefix(try S3ObjectName.folder(parsing: $0)) } ?? .inPlace
        let shard = try parsedShard()
        try BucketCommand(jobs: bucketJobs, target: target.to, destination: destination,
                          keys: try fleetKeySource(folder: vaultKeyDir, command: vaultKeyCommand),
                          shard: shard, journal: journal, parallelism: jobs ?? 16,
                          dryRun: target.dryRun, skipFailed: skipFailed, completionReport: completionReport,
                          allowNoKeys: allowNoKeys, allowEmpty: allowEmpty, command: batchCommand(bucketJobs, destination, shard)).run()
    }

    /// What a bucket run's journal keeps to name its batch when it refuses another: what decides
    /// the batch (source, destination, target, shard), as an operator would type it (spelt as
    /// before the modes had names, so an earlier run's journal still matches).
    private func batchCommand(_ jobs: BucketCommand.Jobs, _ destination: BucketMigration.Destination, _ shard: BucketMigration.Shard?) -> String {
        let from = switch jobs {
        case .listing(let prefix): "--source \(prefix)"
        case .inventory(let name): "--inventory \(name)"
        case .manifest(let path): "--manifest \(path)"
        }
        let to = switch destination {
        case .inPlace: "--in-place"
        case .prefix(let prefix): "--out \(prefix)"
        }
        return "migrate \(from) \(to) --to \(target.to)" + (shard.map { " --shard \($0)" } ?? "")
    }
}

extension VaultError {
    /// A listed bucket run (vault keys only) asked for schema 3 or later.
    static func bucketRunCannotReachSchema3(_ target: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.parentKeyNeeded, "a bucket run cannot migrate to schema version \(target): it holds vault keys, and schema 3 seals each family's secrets under a key only the parent key derives",
                   hint: "schema 3 is reached by the app, or by each family with its own key: vault-tool migrate vault --key-file PARENT.nsec --to 3 (docs/fleet.md, \"Schema 3\")",
                   file: file, line: line)
    }
}
