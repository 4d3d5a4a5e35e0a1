import ArgumentParser
import CLISupport
import VaultCore

/// `migrate`: three modes, each its own command with only its own options (issue 39): one vault
/// (``MigrateVault``), a folder batch (``MigrateBatch``) and a fleet in a bucket
/// (``MigrateBucket``). The mode may be left out, as before the split: ``ModeDispatch`` reads it
/// from the options given.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Move vaults between schema versions, safely: one vault, a folder batch, or a fleet in a bucket.",
        discussion: """
        Up (1 → 2) keeps every value. Down (2 → 1), for devices still on the old app, is refused \
        when the vault holds anything v1 cannot carry, unless --allow-lossy, which then lists \
        exactly what was dropped. What is written is opened again and compared with what was \
        meant before anything is replaced.

        Each mode has its own options, shown by its own --help:
          vault    one vault, a file or an object (-o FILE or --in-place)
          batch    the vaults a JSON Lines manifest names, into --out-dir
          bucket   a fleet where it lives: --source, --inventory or --manifest

        The mode may be left out: it is then read from the options given (--manifest with \
        --out-dir is a batch; --source, --inventory, or --manifest with --in-place or --out is \
        a bucket; anything else one vault). Options of two modes together are a usage error \
        (exit 64) that names them.

        Examples:
          vault-tool migrate vault --key-file parent.nsec --to 2 \\
            -o household.v2.vault household.vault
          vault-tool migrate batch --manifest jobs.jsonl --to 2 --out-dir migrated \\
            > report.jsonl
          vault-tool migrate bucket --source s3://family-vaults/vaults/ --to 2 \\
            --in-place --vault-key-dir keys/ > report.jsonl
          # the same, the mode read from the options:
          vault-tool migrate --source s3://family-vaults/vaults/ --to 2 --in-place \\
            --vault-key-dir keys/ > report.jsonl
          vault-tool migrate bucket --help
        """,
        subcommands: [MigrateVault.self, MigrateBatch.self, MigrateBucket.self]
    )
}

/// `--to` and `--dry-run`: what every mode of `migrate` takes.
struct MigrationTargetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The schema version to migrate to.", valueName: "VERSION"))
    var to: Int

    @Flag(help: "Say what would change, and write nothing.")
    var dryRun = false
}

func reportJSON(_ report: Migration.Report) -> JSONValue {
    .object([
        ("from", .int(report.from)),
        ("to", .int(report.to)),
        ("changes", .array(report.changes.map(JSONValue.string))),
        ("losses", .array(report.losses.map(JSONValue.string))),
    ])
}
