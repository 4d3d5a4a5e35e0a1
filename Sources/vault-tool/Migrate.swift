import ArgumentParser
import CLISupport
import Foundation
import VaultCore
import VaultFleet

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move vaults between schema versions, safely, one vault or a whole batch.",
        discussion: """
        Up (1 → 2) keeps every value. Down (2 → 1), for devices still on the old app, is refused \
        when the vault holds anything v1 cannot carry, unless --allow-lossy, which then lists \
        exactly what was dropped. What is written is opened again and compared with what was \
        meant before anything is replaced; --in-place keeps a backup unless --no-backup.

        Batch mode reads a JSON Lines manifest, one {"vault": PATH, "keyFile": PATH} or \
        {"vault": PATH, "vaultKeyFile": PATH} a line, and writes each result under --out-dir. A \
        SQLite journal records every job, so a run that is killed and started again finishes \
        the rest without redoing finished work. A JSON Lines report goes to standard output.

        A vault may be an object, s3://BUCKET/KEY (docs/object-storage.md). A fleet in a bucket \
        is migrated where it lives with --source s3://BUCKET/PREFIX/ and --in-place (or --out \
        s3://OTHER/PREFIX/), the keys read from --vault-key-dir (<household id>.vaultkey \
        files) or named by a manifest of objects; --inventory takes the objects an S3 Inventory \
        report lists instead of a listing. Every write is conditional on the version read: \
        a vault a family's device changes meanwhile is read and migrated again, never \
        overwritten. Vaults without a key here are reported as no-key and left for the app; \
        --shard I/N splits a fleet between N machines; --shard auto takes the shard a job \
        engine gives (a Kubernetes Indexed Job, an AWS Batch array job, a Cloud Run job), and \
        each shard lists only its own range of keys. A bucket run exits 0 when done, 75 \
        (EX_TEMPFAIL) when every failure was the object store's (throttling, 5xx, out of reach: \
        run it again later), and 1 when any vault failed for good.

        Mistakes stop a bucket run before anything is listed or written, with no journal made: \
        a --vault-key-dir that is missing, unreadable, empty or holds no <household id>.vaultkey \
        file, and a prefix or inventory that lists no *.vault object, exit 64 (--allow-empty \
        accepts an empty one; one shard of a prefix that holds objects may be empty). A run \
        that found vaults and had the key of none exits 78 unless --allow-no-keys. Every \
        request stays under the prefixes the command names: the check that the store honours \
        conditional writes writes, and then deletes (each version it made, on a bucket with \
        versioning), PREFIX.hvt-conditional-write-check-… under the prefix it writes to.

        Examples:
          vault-tool migrate --key-file parent.nsec --to 2 -o household.v2.vault \\
            household.vault
          vault-tool migrate --key-file parent.nsec --to 2 --dry-run household.vault
          vault-tool migrate --vault-key-file vk --to 2 --in-place \\
            --expect-revision 0 household.vault
          vault-tool migrate --manifest jobs.jsonl --to 2 --out-dir migrated \\
            --jobs 2 > report.jsonl
          vault-tool migrate --source s3://family-vaults/vaults/ --to 2 --in-place \\
            --vault-key-dir keys/ --shard 1/2 > report.jsonl
          # in each pod of a Kubernetes Indexed Job of 8 completions:
          vault-tool migrate --source s3://family-vaults/vaults/ --to 2 --in-place \\
            --vault-key-dir keys/ --shard auto --shard-count 8 > report.jsonl
          # the vaults of the day's S3 Inventory report, instead of a listing:
          vault-tool migrate --inventory s3://inv/family-vaults/manifest.json \\
            --to 2 --in-place --vault-key-dir keys/ > report.jsonl
          # a shard with no household of ours, where that is expected:
          vault-tool migrate --source s3://family-vaults/vaults/ --to 2 --in-place \\
            --vault-key-dir keys/ --shard 5/8 --allow-no-keys > report.jsonl
          # the keys from a secrets manager: the command prints the key of the household
          # in $HVT_HOUSEHOLD, or exits 66 when it holds none (no-key); any other failure
          # stops the run with exit 78 (docs/fleet.md):
          vault-tool migrate --source s3://family-vaults/vaults/ --to 2 --in-place \\
            --vault-key-command 'fleet-key-lookup --vault' > report.jsonl
          # with S3 Batch Operations' CSV completion report beside it:
          vault-tool migrate --source s3://family-vaults/vaults/ --to 2 --in-place \\
            --vault-key-dir keys/ --completion-report report.csv > report.jsonl
        """
    )

    @Option(help: ArgumentHelp("The schema version to migrate to.", valueName: "VERSION"))
    var to: Int

    @Flag(help: "Say what would change, and write nothing.")
    var dryRun = false

    @Flag(help: "With --dry-run of one vault: print the report as JSON.")
    var json = false

    @Flag(help: "Downgrade even when values would be lost; each dropped value is listed.")
    var allowLossy = false

    @Option(help: ArgumentHelp("Refuse (exit 4) unless the vault is at this revision (a v1 vault counts as 0).", valueName: "N"))
    var expectRevision: Int?

    @Flag(help: "Replace the input file itself (a backup is kept unless --no-backup).")
    var inPlace = false

    @Option(help: ArgumentHelp("With --in-place: the backup's suffix.", valueName: "SUFFIX"))
    var backup = ".bak"

    @Flag(help: "With --in-place: keep no backup.")
    var noBackup = false

    @OptionGroup var output: OutputOptions

    @Option(help: ArgumentHelp("Batch mode: the JSON Lines manifest of jobs.", valueName: "FILE"))
    var manifest: String?

    @Option(help: ArgumentHelp("Batch mode: the folder for migrated vaults.", valueName: "DIR"))
    var outDir: String?

    @Option(help: ArgumentHelp("Batch mode: the SQLite journal (default: DIR.migrate-journal.sqlite, beside DIR).", valueName: "FILE"))
    var journal: String?

    @Option(help: ArgumentHelp("Batch mode: how many vaults to migrate at once (default: one per core; 16 on a bucket).", valueName: "N"))
    var jobs: Int?

    @Option(help: ArgumentHelp("Bucket mode: migrate every *.vault object under this prefix, s3://BUCKET/PREFIX/.", valueName: "PREFIX"))
    var source: String?

    @Option(help: ArgumentHelp("Bucket mode: migrate every current *.vault object an S3 Inventory report (CSV) lists, given by its manifest.json, s3://BUCKET/…/manifest.json.", valueName: "MANIFEST"))
    var inventory: String?

    @Option(help: ArgumentHelp("Bucket mode: write the results under this prefix (s3://BUCKET/PREFIX/) instead of in place.", valueName: "PREFIX"))
    var out: String?

    @Option(help: ArgumentHelp("Bucket mode: the folder of vault keys, one <household id>.vaultkey file each (or --vault-key-command, run once a household).", valueName: "DIR"))
    var vaultKeyDir: String?

    @Option(help: ArgumentHelp("Bucket mode: take only the I-th of N equal ranges of household ids, I/N (1/2 and 2/2 on two machines), or auto: the index a job engine gives (Kubernetes JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, Cloud Run CLOUD_RUN_TASK_INDEX and CLOUD_RUN_TASK_COUNT; 0-based).", valueName: "SHARD"))
    var shard: String?

    @Option(help: ArgumentHelp("With --shard auto: how many shards the job has, where the engine does not say (or HVT_SHARD_COUNT).", valueName: "N"))
    var shardCount: Int?

    @Flag(help: "Batch mode: accept vaults that fail (they stay in the report and the journal) and exit 0.")
    var skipFailed = false

    @Option(help: ArgumentHelp("Bucket mode: also write each vault's result in the S3 Batch Operations completion report's CSV layout (Bucket, Key, VersionId, TaskStatus, HTTPStatusCode, ErrorCode, ResultMessage) to FILE or s3://BUCKET/KEY, such as --completion-report s3://family-vaults/reports/shard-3.csv.", valueName: "FILE"))
    var completionReport: String?

    @Flag(help: "Bucket mode: exit 0 when no vault had its key here (each is no-key), instead of 78.")
    var allowNoKeys = false

    @Flag(help: "Bucket mode: exit 0 when the prefix or inventory lists no *.vault object, instead of 64.")
    var allowEmpty = false

    @OptionGroup var vault: VaultInputOptions

    @OptionGroup var log: LogFormatOption

    /// A fleet in a bucket: --source, or a manifest with --in-place or --out.
    private var bucketMode: Bool { source != nil || inventory != nil || (manifest != nil && (inPlace || out != nil)) }

    func validate() throws {
        if bucketMode {
            guard inPlace != (out != nil) else { throw ValidationError("a bucket run takes --in-place or --out s3://BUCKET/PREFIX/, one of the two") }
            guard [source, inventory, manifest].compactMap({ $0 }).count == 1 else {
                throw ValidationError("give one of --source, --inventory and --manifest")
            }
            let listed = source != nil || inventory != nil
            let keys = try fleetKeySource(folder: vaultKeyDir, access: vault.access)
            guard listed == (keys != nil) else {
                throw ValidationError(listed ? "\(source != nil ? "--source" : "--inventory") needs --vault-key-dir DIR or --vault-key-command CMD (the manifest form names its own keys)"
                                             : "--vault-key-dir and --vault-key-command go with --source or --inventory; a manifest names its own keys")
            }
            guard vault.input == "-", output.output == nil, outDir == nil else {
                throw ValidationError("a bucket run names its own vaults and keys; give no IN, key option, -o or --out-dir")
            }
            guard !allowLossy else { throw ValidationError("--allow-lossy is not taken on a bucket: a fleet run never drops values") }
            // A fleet run keeps no backup object: the bucket's own versioning is the way back.
            guard !noBackup, backup == ".bak", expectRevision == nil, !json else {
                throw ValidationError("--backup, --no-backup, --expect-revision and --json belong to one vault; a bucket run keeps no backup (enable the bucket's versioning for a way back) and reports JSON Lines")
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
                guard !dryRun else { throw ValidationError("--completion-report is not written by a dry run, which writes nothing") }
            }
            return
        }
        if source != nil || inventory != nil || out != nil || vaultKeyDir != nil || shard != nil || shardCount != nil || completionReport != nil
            || allowNoKeys || allowEmpty {
            throw ValidationError("--source, --inventory, --out, --vault-key-dir, --shard, --completion-report, --allow-no-keys and --allow-empty belong to a bucket run (--source s3://BUCKET/PREFIX/)")
        }
        if manifest != nil {
            guard outDir != nil else { throw ValidationError("--manifest needs --out-dir") }
            guard !vault.access.anyGiven, vault.input == "-", output.output == nil, !inPlace else {
                throw ValidationError("--manifest names its own vaults and keys; give no IN, key option, -o or --in-place")
            }
            return
        }
        if outDir != nil || journal != nil || skipFailed { throw ValidationError("--out-dir, --journal and --skip-failed belong to --manifest") }
        try vault.access.requireOne()
        if inPlace {
            guard vault.input != "-" else { throw ValidationError("--in-place needs a vault file, not standard input") }
            guard output.output == nil else { throw ValidationError("give -o or --in-place, not both") }
        }
        if json, !dryRun { throw ValidationError("--json goes with --dry-run") }
    }

    /// `--shard I/N`, or `auto`: the engine's. A shard the environment cannot say is a usage
    /// error naming the variable, before anything is read.
    private func parsedShard() throws -> BucketMigration.Shard? {
        guard let shard else { return nil }
        guard shard == "auto" else { return try BucketMigration.Shard(parsing: shard) }
        do {
            return try BucketMigration.Shard.fromEngine(ProcessInfo.processInfo.environment, count: shardCount)
        } catch let error as VaultError where error.code == .engineShard {
            throw ToolError(.usage, error.reason, hint: error.hint)
        }
    }

    func run() throws {
        log.apply()
        if let jobs { try requireRange(jobs, 1...256, "--jobs") }
        if bucketMode {
            let bucketJobs: BucketCommand.Jobs = if let source {
                .listing(try S3ObjectName.folder(parsing: source))
            } else if let inventory, let name = try S3ObjectName(parsing: inventory) {
                .inventory(name)  // an object, not a prefix: validate() made sure
            } else {
                .manifest(manifest!)
            }
            let destination: BucketMigration.Destination = try out.map { .prefix(try S3ObjectName.folder(parsing: $0)) } ?? .inPlace
            let shard = try parsedShard()
            try BucketCommand(jobs: bucketJobs, target: to, destination: destination, keys: try fleetKeySource(folder: vaultKeyDir, access: vault.access),
                              shard: shard, journal: journal, parallelism: jobs ?? 16,
                              dryRun: dryRun, skipFailed: skipFailed, completionReport: completionReport,
                              allowNoKeys: allowNoKeys, allowEmpty: allowEmpty, command: batchCommand(bucketJobs, destination, shard)).run()
            return
        }
        if let manifest {
            try BatchCommand(manifest: manifest, target: to, outDir: outDir!, journal: journal, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
                             allowLossy: allowLossy, dryRun: dryRun, skipFailed: skipFailed,
                             command: "migrate --manifest \(manifest) --to \(to) --out-dir \(outDir!)").run()
            return
        }
        // In place, the vault is the output by request; its backup and it are published in that
        // order, so the old bytes are safe before they are replaced.
        let files = inPlace
            ? try CommandFiles(reads: vault.access.declaredInputs,
                               writes: (noBackup ? [] : [DeclaredOutput("backup", vault.input + backup, kind: .binary, exclusive: true, namedByTool: true)])
                                   + [DeclaredOutput("vault", vault.input, kind: .binary)])
            : try CommandFiles(reads: vault.declaredInputs, writes: [output.declared(.binary)], force: output.force)
        let (access, _, input) = try vault.open(diagnostics)
        let outcome = try VaultMigration.migrate(input, access: access, to: to, allowLossy: allowLossy, expectRevision: expectRevision)
        let report = outcome.report
        for loss in report.losses { diagnostics.warning("dropped: \(loss)") }

        guard let writer = files.writer(unlessDryRun: dryRun) else {
            let text = json ? String(decoding: reportJSON(report).serialized(), as: UTF8.self) : reportText(report)
            try StandardStreams.writeOutput(Array(text.utf8))
            return
        }
        if inPlace {
            guard !outcome.unchanged else {
                diagnostics.note("\(vault.input) is already at version \(to); nothing changed")
                return
            }
            if !noBackup { try writer.stage("backup", input) }
            try writer.write("vault", outcome.bytes)
        } else {
            try writer.write("-o", outcome.bytes)
        }
        diagnostics.note(outcome.unchanged
            ? "household \(outcome.household.shortHex)… is already at version \(to); written unchanged"
            : "household \(outcome.household.shortHex)… migrated from version \(report.from) to \(report.to)")
    }

    /// What a bucket run's journal keeps to name its batch when it refuses another: what decides
    /// the batch (source, destination, target, shard), as an operator would type it.
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
        return "migrate \(from) \(to) --to \(self.to)" + (shard.map { " --shard \($0)" } ?? "")
    }

    private func reportText(_ report: Migration.Report) -> String {
        if report.from == report.to { return "already at version \(report.to): nothing would change\n" }
        var text = "would migrate from version \(report.from) to \(report.to):\n"
        for change in report.changes { text += "  change: \(change)".displaySafe + "\n" }
        for loss in report.losses { text += "  lose:   \(loss)".displaySafe + "\n" }
        return text
    }
}

func reportJSON(_ report: Migration.Report) -> JSONValue {
    .object([
        ("from", .int(report.from)),
        ("to", .int(report.to)),
        ("changes", .array(report.changes.map(JSONValue.string))),
        ("losses", .array(report.losses.map(JSONValue.string))),
    ])
}
