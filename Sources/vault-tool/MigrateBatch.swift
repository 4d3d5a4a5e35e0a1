import ArgumentParser
import CLISupport
import Foundation
import VaultCore
import VaultFleet

/// `migrate batch` (or `migrate --manifest … --out-dir …`): the vaults a manifest names, files or
/// objects, each written under a folder; the run itself is ``BatchCommand``.
struct MigrateBatch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Migrate the vaults a JSON Lines manifest names into a folder, resumably.",
        discussion: """
        The manifest has one {"vault": PATH, "keyFile": PATH} or {"vault": PATH, \
        "vaultKeyFile": PATH} a line; each result is written under --out-dir. A SQLite journal \
        records every job, so a run that is killed and started again finishes the rest without \
        redoing finished work. A JSON Lines report goes to standard output. The word batch may \
        be left out: 'vault-tool migrate --manifest FILE --out-dir DIR …' is this command.

        Examples:
          vault-tool migrate batch --manifest jobs.jsonl --to 2 --out-dir migrated \\
            --jobs 2 > report.jsonl
          vault-tool migrate batch --manifest jobs.jsonl --to 2 --out-dir migrated \\
            --dry-run > would.jsonl
          vault-tool migrate --manifest jobs.jsonl --to 2 --out-dir migrated \\
            > report.jsonl
        """
    )

    @OptionGroup var target: MigrationTargetOptions

    @Flag(help: "Downgrade even when values would be lost; each dropped value is listed.")
    var allowLossy = false

    @Option(help: ArgumentHelp("The JSON Lines manifest of jobs.", valueName: "FILE"))
    var manifest: String

    @Option(help: ArgumentHelp("The folder for migrated vaults.", valueName: "DIR"))
    var outDir: String

    @Option(help: ArgumentHelp("The SQLite journal (default: DIR.migrate-journal.sqlite, beside DIR).", valueName: "FILE"))
    var journal: String?

    @Option(help: ArgumentHelp("How many vaults to migrate at once (default: one per core).", valueName: "N"))
    var jobs: Int?

    @Flag(help: "Accept vaults that fail (they stay in the report and the journal) and exit 0.")
    var skipFailed = false

    @OptionGroup var log: LogFormatOption

    func run() throws {
        log.apply()
        if let jobs { try requireRange(jobs, 1...256, "--jobs") }
        // The journal keeps the command as it was spelt before the modes had names, so a
        // journal of an earlier run still names its batch.
        try BatchCommand(manifest: manifest, target: target.to, outDir: outDir, journal: journal, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
                         allowLossy: allowLossy, dryRun: target.dryRun, skipFailed: skipFailed,
                         command: "migrate --manifest \(manifest) --to \(target.to) --out-dir \(outDir)").run()
    }
}
