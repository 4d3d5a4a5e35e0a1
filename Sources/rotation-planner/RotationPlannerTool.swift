import ArgumentParser
import CLISupport
import Foundation
import VaultCore
import VaultStorage

let diagnostics = Diagnostics(toolName: "rotation-planner")

@main
struct RotationPlannerTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotation-planner",
        abstract: "Move a household to a new parent key: plan, review, apply, verify.",
        discussion: """
        Every device subkey and the vault key derive from the parent key, so a new key changes \
        the vault's key and path, every device's identity and every group membership. The plan \
        says all of it in advance, holds no secret, and is signed by both keys; apply refuses a \
        plan that is stale, changed, or not for these keys.

        Exit codes: 0 ok, 1 I/O failure, 2 invalid input, 3 a signature or verification failed, \
        4 refused (stale plan, wrong keys), 64 usage.

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
        version: "0.1.0",
        subcommands: [Plan.self, Show.self, Apply.self, Verify.self]
    )

    static func main() {
        ToolMain.run(Self.self, objectStore: { try ObjectStore.connect(environment: ProcessInfo.processInfo.environment) })
    }
}

extension RotationPlan.Mode: ExpressibleByArgument {}

/// The old and new key files every subcommand but `show` reads.
struct KeyPairOptions: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp("The current (old) parent key.", valueName: "FILE"))
    var keyFile: String

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("The new parent key (make one with 'vault-tool keygen').", valueName: "FILE"))
    var newKeyFile: String

    var declaredInputs: [FileSet.Input] { [.init("--key-file", keyFile), .init("--new-key-file", newKeyFile)] }

    func load() throws -> (old: SecretKey, new: SecretKey) {
        (try KeyFiles.parentKey(keyFile, diagnostics), try KeyFiles.parentKey(newKeyFile, diagnostics))
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

struct Plan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a signed rotation plan from the current vault and the two keys.",
        discussion: """
        A v1 vault is migrated to v2 in memory, and the plan says so. The plan holds no secret; \
        it names the vault's revision and SHA-256 so a stale plan is caught. An existing plan \
        file is never replaced: it may be the record of a rotation already applied.

        Example:
          rotation-planner plan --vault household.vault --key-file old.nsec \\
            --new-key-file new.nsec --mode compromise --reason "phone stolen" \\
            -o plan.json
        """
    )

    @Option(help: ArgumentHelp("The household's current vault: a file, or s3://BUCKET/KEY.", valueName: "VAULT"))
    var vault: String

    @OptionGroup var keys: KeyPairOptions

    @Option(help: ArgumentHelp("routine (a planned change of key) or compromise (the old key may be known to someone else).", valueName: "MODE"))
    var mode: RotationPlan.Mode = .routine

    @Option(help: ArgumentHelp("Why, in a few words; recorded in the plan.", valueName: "TEXT"))
    var reason: String?

    @Option(help: ArgumentHelp("The plan's time (RFC 3339), instead of now; for reproducible plans.", valueName: "TIME"))
    var now: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the plan to FILE instead of standard output.", valueName: "FILE"))
    var output: String?

    func validate() throws {
        try requireOneStandardInput([vault, keys.keyFile, keys.newKeyFile])
        if let now, Timestamp(rfc3339: now) == nil { throw ValidationError("--now takes an RFC 3339 time such as 2026-11-22T10:00:00Z") }
    }

    func run() throws {
        let files = try CommandFiles(reads: [.init("--vault", vault)] + keys.declaredInputs, writes: [DeclaredOutput("-o", output, kind: .text, exclusive: true)])
        let (old, new) = try keys.load()
        var plan = try RotationPlanner.plan(vault: InputFiles.read(vault, what: "vault"), oldKey: old, newKey: new, mode: mode, reason: reason,
                                            createdAt: now.flatMap(Timestamp.init(rfc3339:)) ?? currentTime(), template: PlanFiles.template())
        try plan.sign(oldKey: old, newKey: new)
        try files.writer().write("-o", plan.jsonValue().serialized())
        let relink = plan.devices.filter { $0.action == .relink }.count
        diagnostics.note("plan \(Hex.encode(plan.planID).prefix(16))…: \(plan.mode.rawValue) rotation of household \(plan.old.householdID.shortHex)… → \(plan.new.householdID.shortHex)…, \(counted(relink, "device")) to relink, \(counted(plan.groups.count, "group"))")
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a plan's signatures and explain it: what changes, for whom, in which order.",
        discussion: """
        Exit 3 when a signature does not verify or the plan was changed.

        Example:
          rotation-planner show plan.json
        """
    )

    @Argument(help: ArgumentHelp("The plan.", valueName: "PLAN"))
    var plan: String

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        let plan = try PlanFiles.read(plan)
        try plan.verifySignatures()
        let template = try PlanFiles.template()
        let relink = plan.devices.filter { $0.action == .relink }, retire = plan.devices.filter { $0.action == .retire }
        let additions = plan.groups.map(\.add.count).reduce(0, +), removals = plan.groups.map(\.remove.count).reduce(0, +)
        let id = Hex.encode(plan.planID)
        if json {
            StandardStreams.writeOutput(JSONValue.object([
                ("planId", .string(id)), ("verified", .bool(true)), ("mode", .string(plan.mode.rawValue)),
                ("from", .string(plan.old.householdID.hex)), ("to", .string(plan.new.householdID.hex)),
                ("relink", .array(relink.map { .string($0.deviceId) })), ("retire", .array(retire.map { .string($0.deviceId) })),
                ("groups", .int(plan.groups.count)), ("additions", .int(additions)), ("removals", .int(removals)),
                ("children", .int(plan.children.count)), ("childKeys", .string(plan.wrapKey.rawValue)), ("wrapKey", .string(plan.wrapKey.rawValue)),
                ("steps", .array(plan.steps.map { .object([("id", .string($0.id)), ("text", .string($0.text))]) })),
            ]).serialized())
            return
        }
        var text = try template.text("show.title", ["planId": String(id.prefix(16)) + "…"]) + "\n\n"
        text += try template.text("show.mode.\(plan.mode.rawValue)") + "\n"
        if let reason = plan.reason { text += try template.text("show.reason", ["reason": reason]) + "\n" }
        text += try template.text("show.signatures") + "\n"
        text += try template.text("show.households", ["oldHousehold": plan.old.householdID.shortHex + "…", "newHousehold": plan.new.householdID.shortHex + "…"]) + "\n"
        text += try template.text("show.source", ["revision": "\(plan.source.revision)", "sha256": String(plan.source.sha256.prefix(16)) + "…"]) + "\n\n"
        text += try template.text("show.devices", ["relink": "\(relink.count)", "retire": "\(retire.count)"]) + "\n"
        var devices = TextTable()
        for device in plan.devices {
            devices.add(device.action.rawValue, device.deviceId, device.deviceName, "\(device.oldSubkeyPublicKey.prefix(12))… → \(device.newSubkeyPublicKey.prefix(12))…")
        }
        text += devices.render(indent: "  ")
        text += try template.text("show.groups", ["groupCount": "\(plan.groups.count)", "addCount": "\(additions)", "removeCount": "\(removals)"]) + "\n"
        text += try template.text("show.children.\(plan.children.first?.action.rawValue ?? plan.wrapKey.rawValue)", ["childCount": "\(plan.children.count)"]) + "\n"
        if let warning = plan.wrapKeyWarning { text += "Wrap key: replaced. \(warning)\n" }
        text += "\n" + (try template.text("show.steps")) + "\n"
        for (index, step) in plan.steps.enumerated() { text += "  \(index + 1). \(step.text)\n" }
        text += "\n" + (try template.text("show.irreversible")) + "\n"
        StandardStreams.writeOutput(Array(text.displaySafeKeepingNewlines.utf8))
    }
}

struct Apply: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Carry out a plan: the new vault, the tombstone at the old path, and the app's operations.",
        discussion: """
        Refuses (exit 4) a plan whose vault changed since it was made, or keys that are not the \
        plan's, and (exit 3) a plan whose signatures fail; nothing is written then. Writes \
        DIR/vaults/<new household id>.vault, the operations (JSON Lines, to --ops or standard \
        output), and last DIR/vaults/<old household id>.vault (the tombstone, which retires the \
        old vault), all staged before any is published. Applying a plan again changes nothing: \
        when DIR holds what this plan produced, apply says so (exit 0); when it holds anything \
        else, apply refuses (exit 4).

        With --json (which needs --ops), standard output is one JSON object: the plan id, \
        the two vaults written, the operation count, and whether the plan had already been \
        applied.

        Examples:
          rotation-planner apply plan.json --vault household.vault \\
            --key-file old.nsec --new-key-file new.nsec --out-dir rotated \\
            --ops ops.jsonl
          rotation-planner apply plan.json --vault household.vault \\
            --key-file old.nsec --new-key-file new.nsec --out-dir rotated \\
            --ops ops.jsonl --json
        """
    )

    @Argument(help: ArgumentHelp("The signed plan.", valueName: "PLAN"))
    var plan: String

    @Option(help: ArgumentHelp("The vault the plan was made from.", valueName: "VAULT"))
    var vault: String

    @OptionGroup var keys: KeyPairOptions

    @Option(help: ArgumentHelp("Where to write vaults/<household id>.vault for both households: a folder, or s3://BUCKET/.", valueName: "DIR"))
    var outDir: String

    @Option(help: ArgumentHelp("Write the operations to FILE instead of standard output.", valueName: "FILE"))
    var ops: String?

    @Flag(help: "Print what was done as JSON (needs --ops).")
    var json = false

    func validate() throws {
        try requireOneStandardInput([plan, vault, keys.keyFile, keys.newKeyFile])
        if json, ops == nil || ops == "-" { throw ValidationError("--json needs --ops FILE (not -): standard output carries the JSON") }
    }

    private func report(_ plan: RotationPlan, newPath: String, oldPath: String, operations: Int, alreadyApplied: Bool) {
        guard json else { return }
        StandardStreams.writeOutput(JSONValue.object([
            ("planId", .string(Hex.encode(plan.planID))), ("alreadyApplied", .bool(alreadyApplied)),
            ("newVault", .string(newPath)), ("tombstone", .string(oldPath)),
            // An earlier apply wrote the operations; this run wrote none.
            ("ops", alreadyApplied ? .null : .string(ops!)), ("operations", alreadyApplied ? .null : .int(operations)),
        ]).serialized())
    }

    func run() throws {
        let plan = try PlanFiles.read(plan)
        let newPath = VaultLocation.joined(outDir, plan.new.vaultPath), oldPath = VaultLocation.joined(outDir, plan.old.vaultPath)
        let files = try CommandFiles(
            reads: [.init("plan", self.plan), .init("--vault", vault)] + keys.declaredInputs,
            writes: [DeclaredOutput("new vault", newPath, kind: .binary, createFolders: true, namedByTool: true), DeclaredOutput("--ops", ops, kind: .text),
                     DeclaredOutput("tombstone", oldPath, kind: .binary, createFolders: true, namedByTool: true)])
        let (old, new) = try keys.load()
        let source = try InputFiles.read(vault, what: "vault")
        let existing = (new: try files.currentContents("new vault"), tombstone: try files.currentContents("tombstone"))
        if existing.new != nil || existing.tombstone != nil {
            guard let newVault = existing.new, let tombstone = existing.tombstone,
                  try RotationApplier.wasApplied(plan, vault: source, newVault: newVault, tombstone: tombstone, oldKey: old, newKey: new) else {
                throw ToolError(.refused, "'\(outDir)' already holds a vault of one of the plan's households, not the result of this plan; nothing was changed",
                                hint: "apply into an empty --out-dir, or move those vaults away first")
            }
            diagnostics.note("this plan was already applied: \(newPath) and \(oldPath) are its result; nothing was changed")
            report(plan, newPath: newPath, oldPath: oldPath, operations: 0, alreadyApplied: true)
            return
        }
        let outcome = try RotationApplier.apply(plan, vault: source, oldKey: old, newKey: new)
        // All three staged before any is published; the tombstone last, because it retires the
        // old vault: until then the household still has a vault that opens with the old key.
        let writer = files.writer()
        try writer.stage("new vault", outcome.newVault)
        try writer.stage("--ops", Array(outcome.operations.map { $0.serialized(pretty: false) + [0x0a] }.joined()))
        try writer.stage("tombstone", outcome.tombstone)
        try writer.publish()
        diagnostics.note("new vault \(newPath); tombstone \(oldPath); \(outcome.operations.count) operations for the app")
        report(plan, newPath: newPath, oldPath: oldPath, operations: outcome.operations.count, alreadyApplied: false)
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a rotation after the fact. Exit 0 when every check passes, 3 otherwise.",
        discussion: """
        The tombstone points to the new vault and holds no secret; every device the rotation \
        revoked is active in the new vault with the new key's subkey; no group lost a member \
        from another household; the new vault's key history names the old key. With --out-dir \
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
        let checks = try RotationVerifier.verify(tombstone: about("the tombstone", tombstone) { try InputFiles.read(tombstone, what: "tombstone") },
                                                 newVault: about("the new vault", newPath) { try InputFiles.read(newPath, what: "vault") },
                                                 oldKey: old, newKey: new)
        if json {
            StandardStreams.writeOutput(JSONValue.object([
                ("passed", .bool(checks.allSatisfy(\.passed))),
                ("checks", .array(checks.map { .object([("name", .string($0.name)), ("passed", .bool($0.passed)), ("detail", .string($0.detail))]) })),
            ]).serialized())
        } else {
            let text = checks.map { "\($0.passed ? "ok  " : "FAIL") \($0.name): \($0.detail)".displaySafe + "\n" }.joined()
            StandardStreams.writeOutput(Array(text.utf8))
        }
        if checks.contains(where: { !$0.passed }) { throw ExitCode(ExitStatus.authentication.rawValue) }
    }
}
