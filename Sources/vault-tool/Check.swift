import ArgumentParser
import CLISupport
import VaultCore
import VaultFleet
import VaultStorage

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a vault against the schema's rules, or a fleet in a bucket a slice a night.",
        discussion: """
        Exit status 0 when every rule holds, 3 when there are findings. Each finding names the \
        record and the rule. With only the vault key, device subkeys cannot be checked and are \
        reported as skipped.

        A fleet in a bucket is checked in slices, the rolling check of a nightly job: with \
        --source s3://BUCKET/PREFIX/ (or --manifest of objects and their key files) and \
        --subset I/N, every object of slice I of N is read whole, its header checked, and with \
        its household's key (--vault-key-dir, or --vault-key-command run once a household \
        with HVT_HOUSEHOLD set, exit 66 meaning none here) opened and checked as above; --subset auto/N takes \
        the night's slice from the date, so N nightly runs read every object once. Standard \
        output gets one JSON line an object (status ok, no-key, truncated, foreign, damaged or \
        gone, with the reason); standard error a summary and the census of the slice. Exit \
        status 1 when an object is damaged or truncated. A --vault-key-dir that is missing, \
        unreadable, empty or holds no <household id>.vaultkey file, and a prefix with no \
        object (unless --allow-empty; one slice of a prefix that holds objects may be empty), \
        are refused with exit 64 before anything is read; a slice whose vaults all lack a key \
        here exits 78 unless --allow-no-keys.

        Examples:
          vault-tool check --key-file parent.nsec household.vault
          vault-tool check --vault-key-file household.vaultkey --json household.vault
          vault-tool check --source s3://family-vaults/vaults/ --subset auto/7 \\
            --vault-key-dir keys/ > check-report.jsonl
          # the keys from a secrets manager instead of a folder:
          vault-tool check --source s3://family-vaults/vaults/ --subset auto/7 \\
            --vault-key-command 'fleet-key-lookup --vault' > check-report.jsonl
          # a new environment, where the prefix may still be empty:
          vault-tool check --source s3://staging-vaults/vaults/ --subset auto/7 \\
            --vault-key-dir keys/ --allow-empty > check-report.jsonl
        """
    )

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var vault: VaultInputOptions

    @Option(help: ArgumentHelp("Fleet mode: check the objects under this prefix, s3://BUCKET/PREFIX/.", valueName: "PREFIX"))
    var source: String?

    @Option(help: ArgumentHelp("Fleet mode: check the objects a JSON Lines manifest names (vault, and keyFile or vaultKeyFile).", valueName: "FILE"))
    var manifest: String?

    @Option(help: ArgumentHelp("Fleet mode: check slice I of N (1-based, 3/7), or auto/N: the slice of the day, so N daily runs read every object once.", valueName: "SUBSET"))
    var subset: String?

    @Option(help: ArgumentHelp("Fleet mode: the folder of vault keys, one <household id>.vaultkey file each.", valueName: "DIR"))
    var vaultKeyDir: String?

    @Option(help: ArgumentHelp("Fleet mode: how many objects to read at once (default 16).", valueName: "N"))
    var jobs = 16

    @Flag(help: "Fleet mode: exit 0 when no vault had its key in --vault-key-dir (each is no-key), instead of 78.")
    var allowNoKeys = false

    @Flag(help: "Fleet mode: exit 0 when the prefix holds no object, instead of 64.")
    var allowEmpty = false

    @OptionGroup var now: NowOption

    @OptionGroup var log: LogFormatOption

    private var fleetMode: Bool { source != nil || manifest != nil }

    func validate() throws {
        guard fleetMode else {
            for (flag, given) in [("--subset", subset != nil), ("--vault-key-dir", vaultKeyDir != nil), ("--allow-no-keys", allowNoKeys),
                                  ("--allow-empty", allowEmpty)] where given {
                throw ValidationError("\(flag) needs --source s3://BUCKET/PREFIX/ or --manifest FILE")
            }
            try vault.access.requireOne()
            return
        }
        guard (source == nil) != (manifest == nil) else { throw ValidationError("give --source or --manifest, not both") }
        guard vault.input == "-", vault.access.keyFile == nil, vault.access.vaultKeyFile == nil, vault.access.keyCommand == nil else {
            throw ValidationError("a fleet check reads no VAULT and no --key-file or --vault-key-file: give --vault-key-dir DIR or --vault-key-command CMD, or key files in the manifest")
        }
        if manifest != nil, try fleetKeySource(folder: vaultKeyDir, access: vault.access) != nil {
            throw ValidationError("--vault-key-dir and --vault-key-command are for --source; a manifest names each object's key file")
        }
        try requireRange(jobs, 1...256, "--jobs")
        if json { throw ValidationError("a fleet check always writes JSON Lines; --json is for one vault") }
        // A mistyped subset is a usage error, said before anything is listed.
        do { _ = try parsedSubset() } catch let error as VaultError { throw ValidationError(error.reason) }
    }

    private func parsedSubset() throws -> FleetCheck.Subset? {
        try subset.map { try FleetCheck.Subset(parsing: $0, now: now.time) }
    }

    func run() throws {
        log.apply()
        if fleetMode {
            let fleetSource: FleetCheck.Source = if let source {
                .listing(try S3ObjectName.folder(parsing: source))
            } else {
                .manifest(bytes: try InputFiles.read(manifest!, what: "manifest", limit: InputLimits.listFile), path: manifest!)
            }
            try FleetCheckCommand(source: fleetSource, subset: try parsedSubset(), keys: try fleetKeySource(folder: vaultKeyDir, access: vault.access), parallelism: jobs,
                                  allowNoKeys: allowNoKeys, allowEmpty: allowEmpty).run()
            return
        }
        let (access, opened, _) = try vault.open(diagnostics)
        let report = try VaultCheck.run(opened.document, access: access)

        var text = ""
        if json {
            let value = JSONValue.object([
                ("ok", .bool(report.isClean)),
                ("findings", .array(report.findings.map {
                    .object([("rule", .string($0.rule.rawValue)), ("record", .string($0.record)), ("message", .string($0.message))])
                })),
                ("skipped", .array(report.skipped.map { .object([("rule", .string($0.rule.rawValue)), ("reason", .string($0.reason))]) })),
            ])
            text = String(decoding: value.serialized(), as: UTF8.self)
        } else {
            for finding in report.findings { text += "\(finding.record): \(finding.rule.rawValue): \(finding.message)".displaySafe + "\n" }
            for skip in report.skipped { text += "skipped \(skip.rule.rawValue): \(skip.reason)\n" }
            let count = report.findings.count
            text += report.isClean ? "ok: every rule holds\n" : "\(count) finding\(count == 1 ? "" : "s")\n"
        }
        try StandardStreams.writeOutput(Array(text.utf8))
        if !report.isClean { throw ExitCode(ExitStatus.authentication.rawValue) }
    }
}
