import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultStorage

let diagnostics = Diagnostics(toolName: "rotation-planner")

@main
struct RotationPlannerTool: ToolRoot {
    static let toolConfiguration = CommandConfiguration(
        commandName: "rotation-planner",
        abstract: "Move a household to a new parent key: plan, review, apply, verify.",
        discussion: """
        Every device subkey and the vault key derive from the parent key, so a new key changes \
        the vault's key and path, every device's identity and every group membership. The plan \
        says all of it in advance, holds no secret, and is signed by both keys; apply refuses a \
        plan that is stale, changed, or not for these keys.

        Exit codes: 0 ok, 1 I/O failure, 2 invalid input, 3 a signature or verification failed, \
        4 refused (stale plan, wrong keys), 64 usage, 75 the object store failed through every \
        attempt (run it again later), 78 the object store's configuration cannot work, 69 a library the command needs is not \
        installed (the message names its Debian package).

        A rotation:
          vault-tool keygen -o new.nsec
          rotation-planner plan --vault household.vault --key-file old.nsec \\
            --new-key-file new.nsec -o plan.json
          rotation-planner show plan.json
          rotation-planner apply plan.json --vault household.vault \\
            --key-file old.nsec --new-key-file new.nsec --out-dir rotated
          rotation-planner verify --old-vault rotated/vaults/OLD.vault \\
            --new-vault rotated/vaults/NEW.vault --key-file old.nsec \\
            --new-key-file new.nsec
        """,
        version: SuiteVersion.text,
        subcommands: [Plan.self, Show.self, Apply.self, Verify.self]
    )

    static func main() {
        ToolMain.run(Self.self, objectStore: { try ObjectStore.connect(environment: ProcessInfo.processInfo.environment) }, hints: [
            // No --vault-key-file here: a rotation signs and re-seals as the parent.
            .vaultKeyGivenAsParentKey: "a key rotation needs the parent key (the nsec on the family's recovery sheet), never the vault key support holds",
            .modeNeededAfterRevocation: "give --mode compromise if a revoked device was lost or stolen (the children get new keys), or --mode routine if each was retired knowingly",
        ])
    }
}

extension RotationPlan.Mode: ExpressibleByArgument {}

/// The old and new key files every subcommand but `show` reads.
struct KeyPairOptions: ParsableArguments {
    /// The current (old) key: the parent's key, as every other command takes it.
    @OptionGroup var old: ParentKeyOption

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("The new parent key (make one with 'vault-tool keygen'); --key-file is the current, old one.", valueName: "FILE"))
    var newKeyFile: String

    var keyFile: String? { old.keyFile }

    var declaredInputs: [FileSet.Input] { [old.declaredInput, .init("--new-key-file", newKeyFile)].compactMap { $0 } }

    func load() throws -> (old: SecretKey, new: SecretKey) {
        (try old.load(diagnostics), try KeyFiles.parentKey(newKeyFile, diagnostics))
    }
}

enum PlanFiles {
    static func read(_ path: String) throws -> RotationPlan {
        try RotationPlan(json: InputFiles.read(path, what: "plan"))
    }

    static func template() throws -> TextTemplate {
        try TextTemplate(language: "en", text: String(decoding: PackageResources.rotation_plan_en_txt, as: UTF8.self))
    }
}
