import ArgumentParser
import CLISupport
import VaultCore
import VaultFleet

/// `sample-fleet`: made-up households for trying the batch tools (VaultFleet's ``SampleFleet``).
struct SampleFleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample-fleet",
        abstract: "Make a fleet of made-up households to try the batch tools on (test data only).",
        discussion: """
        Writes N households with random keys into DIR, which must be new or empty: \
        vaults/<household id>.vault, the parent keys as keys/<household id>.nsec (0600), and \
        manifest.jsonl, one line a vault, as migrate --manifest reads it. The households look \
        like the app's (two to five iPads, one to three children, their groups) but are not \
        anyone's. Never use them, or this folder, for real data: the keys sit beside the vaults.

        Examples:
          vault-tool sample-fleet --households 2000 --out-dir trial
          vault-tool migrate --manifest trial/manifest.jsonl --to 2 --out-dir trial-v2
          vault-tool census trial/vaults
        """
    )

    @Option(help: ArgumentHelp("How many households to make.", valueName: "N")) var households: Int
    @Option(help: ArgumentHelp("The new or empty folder to write them in.", valueName: "DIR")) var outDir: String
    @Option(name: .customLong("schema-version"), help: ArgumentHelp("The vaults' schema version (1, 2 or 3; a schema 3 vault has its household log beside it, vaults/<household id>.log).", valueName: "N")) var schemaVersion = 1
    @OptionGroup var now: RecordedNowOption  // each vault's updatedAt

    func run() throws {
        try requireRange(households, 1...10_000_000, "--households")
        let showProgress = StandardStreams.errorIsTerminal
        try SampleFleet.write(households: households, into: outDir, version: schemaVersion, now: now.time) { written in
            if showProgress { StandardStreams.writeError(Array("\r\(written)/\(households) households".utf8)) }
        }
        if showProgress { StandardStreams.writeError(Array("\r\u{1b}[K".utf8)) }
        diagnostics.note("\(households) sample households (schema version \(schemaVersion)) → \(outDir)/vaults, keys in \(outDir)/keys, manifest \(outDir)/manifest.jsonl; test data only")
    }
}
