import ArgumentParser
import CLISupport
import VaultCore
import VaultFiles
import VaultFleet
import VaultStorage

/// `check bucket` (or `check --source …`, `check --manifest …`): the rolling check of a fleet in
/// a bucket; the run itself is ``FleetCheckCommand``.
struct CheckBucket: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bucket",
        abstract: "Check a fleet in a bucket a slice a night: every object read whole, and opened with its household's key.",
        discussion: """
        A fleet in a bucket is checked in slices, the rolling check of a nightly job: with \
        --source s3://BUCKET/PREFIX/ (or --manifest of objects and their key files) and \
        --subset I/N, every object of slice I of N is read whole, its header checked, and with \
        its household's key (--vault-key-dir, or --vault-key-command run once a household with \
        HVT_HOUSEHOLD set, exit 66 meaning none here) opened and checked as 'vault-tool check vault' \
        does; --subset auto/N takes the night's slice from the date, so N nightly runs read \
        every object once. Standard output gets one JSON line an object (status ok, no-key, \
        truncated, foreign, damaged or gone, with the reason); standard error a summary and the \
        census of the slice. Exit status 1 when an object is damaged or truncated. A \
        --vault-key-dir that is missing, unreadable, empty or holds no <household id>.vaultkey \
        file, and a prefix with no object (unless --allow-empty; one slice of a prefix that \
        holds objects may be empty), are refused with exit 64 before anything is read; a slice \
        whose vaults all lack a key here exits 66 unless --allow-no-keys. The word bucket may \
        be left out: 'vault-tool check --source …' is this command.

        Examples:
          vault-tool check bucket --source s3://family-vaults/vaults/ \\
            --subset auto/7 --vault-key-dir keys/ > check-report.jsonl
          # the keys from a secrets manager instead of a folder:
          vault-tool check bucket --source s3://family-vaults/vaults/ \\
            --subset auto/7 --vault-key-command 'fleet-key-lookup vault-key' \\
            > check.jsonl
          # a new environment, where the prefix may still be empty:
          vault-tool check bucket --source s3://staging-vaults/vaults/ \\
            --subset auto/7 --vault-key-dir keys/ --allow-empty > check-report.jsonl
          vault-tool check --manifest objects.jsonl --subset auto/30 > check.jsonl
        """
    )

    @Option(help: ArgumentHelp("Check the objects under this prefix, s3://BUCKET/PREFIX/.", valueName: "PREFIX"))
    var source: String?

    @Option(help: ArgumentHelp("Check the objects a JSON Lines manifest names (vault, and keyFile or vaultKeyFile).", valueName: "FILE"))
    var manifest: String?

    @Option(help: ArgumentHelp("Check slice I of N (1-based, 3/7), or auto/N: the slice of the day, so N daily runs read every object once.", valueName: "SUBSET"))
    var subset: String?

    @Option(help: ArgumentHelp("The folder of vault keys, one <household id>.vaultkey file each.", valueName: "DIR"))
    var vaultKeyDir: String?

    @Option(help: ArgumentHelp("Instead of --vault-key-dir: a command (run without a shell) run once a household, with its id in HVT_HOUSEHOLD, that prints its vault key, or exits 66 when it holds none (no-key); any other failure stops the run with exit 78.", valueName: "CMD"))
    var vaultKeyCommand: String?

    @Option(help: ArgumentHelp("How many objects to read at once (default 16).", valueName: "N"))
    var jobs = 16

    @Flag(help: "Exit 0 when no vault had its key in --vault-key-dir (each is no-key), instead of 66.")
    var allowNoKeys = false

    @Flag(help: "Exit 0 when the prefix holds no object, instead of 64.")
    var allowEmpty = false

    @OptionGroup var now: NowOption

    @OptionGroup var log: LogFormatOption

    func validate() throws {
        // A command the tool will not run (shell syntax) is said first, before anything else.
        _ = try fleetKeySource(folder: vaultKeyDir, command: vaultKeyCommand)
        guard (source == nil) != (manifest == nil) else {
            throw ValidationError(source == nil ? "give --source s3://BUCKET/PREFIX/ or --manifest FILE" : "give --source or --manifest, not both")
        }
        if manifest != nil, try fleetKeySource(folder: vaultKeyDir, command: vaultKeyCommand) != nil {
            throw ValidationError("--vault-key-dir and --vault-key-command are for --source; a manifest names each object's key file")
        }
        try requireRange(jobs, 1...256, "--jobs")
        // A mistyped subset is a usage error, said before anything is listed.
        do { _ = try parsedSubset() } catch let error as VaultError { throw ValidationError(error.reason) }
    }

    private func parsedSubset() throws -> FleetCheck.Subset? {
        try subset.map { try FleetCheck.Subset(parsing: $0, now: now.time) }
    }

    func run() throws {
        log.apply()
        let fleetSource: FleetCheck.Source = if let source {
            .listing(try S3ObjectName.folder(parsing: source))
        } else {
            .manifest(bytes: try InputFiles.read(manifest!, what: "manifest", limit: InputLimits.listFile), path: manifest!)
        }
        try FleetCheckCommand(source: fleetSource, subset: try parsedSubset(), keys: try fleetKeySource(folder: vaultKeyDir, command: vaultKeyCommand), parallelism: jobs,
                              allowNoKeys: allowNoKeys, allowEmpty: allowEmpty).run()
    }
}
