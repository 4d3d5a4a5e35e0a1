import ArgumentParser
import CLISupport
import VaultCore
import VaultFiles

/// `check`: one vault (``CheckVault``), or a fleet in a bucket a slice a night (``CheckBucket``),
/// each with only its own options (issue 39). The mode may be left out, as before the split:
/// ``ModeDispatch`` reads it from the options given.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a vault against the schema's rules, or a fleet in a bucket a slice a night.",
        discussion: """
        Each mode has its own options, shown by its own --help:
          vault    one vault against the schema's rules (exit 3 on findings)
          bucket   the rolling check of a fleet in a bucket (--source or a manifest)

        The mode may be left out: --source or --manifest makes it a bucket check, anything \
        else one vault. Options of both together are a usage error (exit 64) that names them.

        Examples:
          vault-tool check vault --key-file parent.nsec household.vault
          vault-tool check bucket --source s3://family-vaults/vaults/ \\
            --subset auto/7 --vault-key-dir keys/ > check-report.jsonl
          # the same, the mode read from the options:
          vault-tool check --key-file parent.nsec household.vault
        """,
        subcommands: [CheckVault.self, CheckBucket.self]
    )
}

/// `check vault` (or `check` with one vault's options): the schema's rules over one vault.
struct CheckVault: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Check one vault against the schema's rules.",
        discussion: """
        Exit status 0 when every rule holds, 3 when there are findings. Each finding names the \
        record and the rule. With only the vault key, device subkeys cannot be checked and are \
        reported as skipped. The word vault may be left out: 'vault-tool check --key-file …' is \
        this command.

        Examples:
          vault-tool check vault --key-file parent.nsec household.vault
          vault-tool check vault --vault-key-file household.vaultkey --json \\
            household.vault
          vault-tool check --key-file parent.nsec household.vault
        """
    )

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var vault: VaultInputOptions

    @OptionGroup var log: LogFormatOption

    @Option(name: .customLong("log"), help: ArgumentHelp("Also verify this household log (schema 3, docs/vault-format.md §10), as 'vault-tool log verify' does; a broken one is a finding.", valueName: "FILE"))
    var householdLog: String?

    /// The log given is the one beside the vault, whose verdict is then a finding, not also a
    /// warning; a log named elsewhere leaves the one beside it to be said as every reader says it.
    private var checksLogBeside: Bool {
        householdLog != nil && VaultLogFiles.logBeside(vault: vault.input, otherThan: householdLog) == nil
    }

    func validate() throws {
        try vault.access.requireOne()
        try requireOneStandardInput(vault.paths + [householdLog])
    }

    func run() throws {
        log.apply()
        _ = try CommandFiles(reads: vault.declaredInputs + (householdLog.map { [FileSet.Input("--log", $0)] } ?? []), writes: [])
        let (access, opened, bytes) = try vault.open(diagnostics, reading: checksLogBeside ? .verifyingLog : .showing)
        let report = try VaultCheck.run(opened.document, access: access) + VaultCheck.secretsInText(opened.document, access: access)
        // The log's verdict: nil when it holds (or none was given), else why not.
        var logProblem: String?
        var logHint: String?
        var logEvents: Int?
        if let householdLog {
            do {
                let verified = try HouseholdLog(parsing: InputFiles.read(householdLog, what: "household log")).verified(household: opened.header.householdID, vault: bytes)
                try verified.check(against: opened.document)
                logEvents = verified.entries.count
            } catch let error as VaultError where error.code.category == .authentication {
                logProblem = error.reason
                logHint = error.hint
            }
        }

        var text = ""
        if json {
            let value = JSONValue.object([
                ("ok", .bool(report.isClean && logProblem == nil)),
                ("findings", .array(report.findings.map {
                    .object([("rule", .string($0.rule.rawValue)), ("record", .string($0.record)), ("message", .string($0.message))])
                })),
                ("skipped", .array(report.skipped.map { .object([("rule", .string($0.rule.rawValue)), ("reason", .string($0.reason))]) })),
            ] + (householdLog == nil ? [] : [("log", .object([("ok", .bool(logProblem == nil)), ("events", logEvents.map(JSONValue.int) ?? .null),
                                                               ("problem", logProblem.map(JSONValue.string) ?? .null),
                                                               ("hint", logHint.map(JSONValue.string) ?? .null)]))]))
            text = String(decoding: value.reported(), as: UTF8.self)
        } else {
            for finding in report.findings { text += "\(finding.record): \(finding.rule.rawValue): \(finding.message)".displaySafe + "\n" }
            for skip in report.skipped { text += "skipped \(skip.rule.rawValue): \(skip.reason)\n" }
            if let logProblem { text += "household log: \(logProblem)".displaySafe + "\n" }
            if let logHint { text += "  hint: \(logHint)".displaySafe + "\n" }
            if let logEvents { text += "household log: \(counted(logEvents, "event")) signed and linked; the vault is the last one's\n" }
            let count = report.findings.count + (logProblem == nil ? 0 : 1)
            text += count == 0 ? "ok: every rule holds\n" : "\(count) finding\(count == 1 ? "" : "s")\n"
        }
        try StandardStreams.writeOutput(Array(text.utf8))
        if !report.isClean || logProblem != nil { throw ExitCode(ExitStatus.authentication.rawValue) }
    }
}
