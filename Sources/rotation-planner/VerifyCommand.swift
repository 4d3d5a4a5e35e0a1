import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultFiles
import VaultStorage

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a rotation after the fact. Exit 0 when every check passes, 3 otherwise.",
        discussion: """
        The tombstone points to the new vault and holds no secret; every device the rotation \
        revoked is active in the new vault with the new key's subkey; no group lost a member \
        from another household; the new vault's key history names the old key. For schema 3, \
        the hand-over from both ends (docs/vault-format.md §10.5): each household's log \
        verifies, the old one ends with the move signed by the old key, and the new one begins \
        signed by the new key naming the old log; the successor is believed only then. With --out-dir \
        (the folder 'apply' wrote), both vaults are found there from the two keys. --json prints \
        {"passed", "checks": [{"name", "passed", "detail"}]}.

        Examples:
          rotation-planner verify --out-dir rotated --key-file old.nsec \\
            --new-key-file new.nsec
          rotation-planner verify --old-vault rotated/vaults/OLD.vault \\
            --new-vault rotated/vaults/NEW.vault --key-file old.nsec \\
            --new-key-file new.nsec
        """
    )

    @Option(help: ArgumentHelp("The tombstone at the old path.", valueName: "VAULT"))
    var oldVault: String?

    @Option(help: ArgumentHelp("The new vault.", valueName: "VAULT"))
    var newVault: String?

    @Option(help: ArgumentHelp("The folder (or s3://BUCKET/) 'apply' wrote: both vaults are found under its vaults/.", valueName: "DIR"))
    var outDir: String?

    @OptionGroup var keys: KeyPairOptions

    @Flag(help: "Print the checks as JSON.")
    var json = false

    func validate() throws {
        let byFolder = outDir != nil && oldVault == nil && newVault == nil
        let byPaths = outDir == nil && oldVault != nil && newVault != nil
        guard byFolder || byPaths else {
            throw ValidationError("give --out-dir DIR, or both --old-vault and --new-vault")
        }
    }

    func run() throws {
        let (old, new) = try keys.load()
        // The paths apply wrote: each household's vault path under the output folder.
        let tombstone = oldVault ?? VaultLocation.joined(outDir!, Household(parentPublicKey: old.publicKey).vaultPath)
        let newPath = newVault ?? VaultLocation.joined(outDir!, Household(parentPublicKey: new.publicKey).vaultPath)
        let tombstoneBytes = try about("the tombstone", tombstone) { try InputFiles.read(tombstone, what: "tombstone") }
        let newBytes = try about("the new vault", newPath) { try InputFiles.read(newPath, what: "vault") }
        var checks = try RotationVerifier.verify(tombstone: tombstoneBytes, newVault: newBytes, oldKey: old, newKey: new)
        // Schema 3: the successor is believed only when the new key's log confirms it.
        // On either vault: a tombstone written down to schema 2 does not skip the check.
        if max(LoggedVault.schemaVersion(tombstoneBytes) ?? 0, LoggedVault.schemaVersion(newBytes) ?? 0) >= 3 {
            func log(beside path: String) throws -> HouseholdLog? {
                try InputFiles.readIfPresent(LoggedVault.logPath(besideVault: path), what: "household log").map { try HouseholdLog(parsing: $0) }
            }
            checks += RotationVerifier.verifyHandOver(oldLog: try log(beside: tombstone), tombstone: tombstoneBytes, newLog: try log(beside: newPath), newVault: newBytes,
                                                      oldHousehold: Household(parentPublicKey: old.publicKey).id, newHousehold: Household(parentPublicKey: new.publicKey).id)
        }
        if json {
            try StandardStreams.writeOutput(JSONValue.object([
                ("passed", .bool(checks.allSatisfy(\.passed))),
                ("checks", .array(checks.map { .object([("name", .string($0.name)), ("passed", .bool($0.passed)), ("detail", .string($0.detail))]) })),
            ]).reported())
        } else {
            let text = checks.map { "\($0.passed ? "ok  " : "FAIL") \($0.name): \($0.detail)".displaySafe + "\n" }.joined()
            try StandardStreams.writeOutput(Array(text.utf8))
        }
        if checks.contains(where: { !$0.passed }) { throw ExitCode(ExitStatus.authentication.rawValue) }
    }
}
