import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultStorage

let diagnostics = Diagnostics(toolName: "vault-tool")

@main
struct VaultTool: ToolRoot {
    static let toolConfiguration = CommandConfiguration(
        commandName: "vault-tool",
        abstract: "Keys, sealing, opening, inspection and checks for a household's identity vault.",
        discussion: """
        Every input is a file or - for standard input; every output is -o FILE or standard output. \
        Secrets are read only from files, never from the command line.

        Exit codes: 0 ok, 1 I/O failure, 2 invalid input, 3 authentication or check failed, \
        4 refused for safety, 64 usage, 75 the object store failed through every attempt or went \
        away, or a fleet run stopped on SIGTERM (run it again later), 78 the object store's \
        configuration cannot work (an unknown host, TLS, access denied, no such bucket), 66 a fleet \
        run held the key of none of its vaults, 69 a library the command needs is not installed \
        (the message names its Debian package).

        Retries follow the AWS SDKs' standard mode: AWS_MAX_ATTEMPTS (default 3) and \
        AWS_RETRY_MODE (standard, adaptive, legacy), or max_attempts and retry_mode in the \
        profile:
          AWS_MAX_ATTEMPTS=5 vault-tool census s3://family-vaults/vaults/

        A key from a command instead of a file (run without a shell), and messages as JSON \
        lines for a container log (migrate, check, census):
          vault-tool inspect --key-command 'pass show family/parent' household.vault
          vault-tool check bucket --source s3://family-vaults/vaults/ \\
            --vault-key-dir keys --log-format json 2>&1 | jq -c 'select(.event)'

        A first session, with the example household of the source tree (Examples/: a \
        document and the key it belongs to; a document names its parent key, so a new key \
        from keygen seals a document of its own):
          vault-tool keygen -o parent.nsec
          vault-tool derive --key-file parent.nsec --device-id kitchen-ipad
          vault-tool seal --key-file Examples/household.nsec -o household.vault \\
            Examples/household.json
          vault-tool inspect --key-file Examples/household.nsec household.vault
          vault-tool check --key-file Examples/household.nsec household.vault
        """,
        version: SuiteVersion.text,
        subcommands: [Keygen.self, Derive.self, Seal.self, Open.self, Inspect.self, Check.self, Migrate.self, Census.self, Diff.self, Merge.self, Device.self, Log.self, SampleFleetCommand.self]
    )

    static func main() {
        ToolMain.run(Self.self, objectStore: { try ObjectStore.connect(environment: ProcessInfo.processInfo.environment) }, hints: hints,
                     arguments: ModeDispatch.arguments)
    }
}

/// The next steps for refusals this tool's flags resolve.
private let hints: [VaultError.Code: String] = [
    .lossyDowngrade: "pass --allow-lossy to migrate anyway; the dropped values are then listed",
    .mergeFailsCheck: "the parent resolves it by hand: open both copies with --key-file and --reveal-secrets, edit, and seal",
    .journalOfAnotherBatch: "run the command the journal belongs to, or give this one a new --journal",
    .earlierJournal: "resume that run with --journal naming it",
    .fleetCheckFailed: "restore each damaged object from a backup, or have the household's device write it again; make each key file readable",
    .journalNeedsAName: "name the journal with --journal FILE",
    .fileInBucketBatch: "migrate files with --out-dir DIR, or check each with vault-tool check vault FILE, instead",
    .objectInFolderBatch: "give --in-place or --out s3://BUCKET/PREFIX/ instead of --out-dir",
    .vaultsFailed: "run the same command again (finished vaults are not redone), or accept them with --skip-failed",
    .noKeyForAnyVault: "give this fleet's keys (the folder of its <household id>.vaultkey files, or a --vault-key-command that prints them), or pass --allow-no-keys when none is expected",
    .keyFolderUnusable: "name the folder holding the <household id>.vaultkey files with --vault-key-dir (a Secret mounted there, in a job)",
    .nothingListed: "check the prefix for a typo; pass --allow-empty where an empty one is expected",
]
