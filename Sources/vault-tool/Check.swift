import ArgumentParser
import CLISupport
import VaultCore

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a vault against the schema's rules.",
        discussion: """
        Exit status 0 when every rule holds, 3 when there are findings. Each finding names the \
        record and the rule. With only the vault key, device subkeys cannot be checked and are \
        reported as skipped.

        Examples:
          vault-tool check --key-file parent.nsec household.vault
          vault-tool check --vault-key-file household.vaultkey --json household.vault
        """
    )

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var vault: VaultInputOptions

    func validate() throws {
        try vault.access.requireOne()
    }

    func run() throws {
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
        StandardStreams.writeOutput(Array(text.utf8))
        if !report.isClean { throw ExitCode(ExitStatus.authentication.rawValue) }
    }
}
