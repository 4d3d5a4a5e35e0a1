import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultFiles
import VaultStorage

struct Apply: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Carry out a plan: the new vault, the tombstone at the old path, and the app's operations.",
        discussion: """
        Refuses (exit 4) a plan whose vault changed since it was made, or keys that are not the \
        plan's, and (exit 3) a plan whose signatures fail; nothing is written then. Writes the \
        operations (JSON Lines, to --ops or standard output), DIR/vaults/<new household id>.vault, \
        and last DIR/vaults/<old household id>.vault (the tombstone, which retires the old \
        vault), all staged before any is published. Applying a plan again changes nothing: \
        when DIR holds what this plan produced, apply says so (exit 0); when a run was cut off \
        after the new vault (a kill, a closed pipe), running it again writes the operations and \
        the tombstone that match it; when DIR holds anything else, apply refuses (exit 4).

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

    private func report(_ plan: RotationPlan, newPath: String, oldPath: String, operations: Int, alreadyApplied: Bool) throws {
        guard json else { return }
        try StandardStreams.writeOutput(reported(plan, newPath: newPath, oldPath: oldPath, operations: operations, alreadyApplied: alreadyApplied))
    }

    /// Staged with what it reports, so that it is published first (``OutputWriter/publish()``):
    /// a full standard output then changes nothing (a trial: both vaults and the operations were
    /// written, and the report, lost, could never be made again).
    private func stageReport(_ writer: OutputWriter, _ output: DeclaredOutput?, _ plan: RotationPlan, newPath: String, oldPath: String, operations: Int) throws {
        guard let output else { return }
        try writer.stage(output, reported(plan, newPath: newPath, oldPath: oldPath, operations: operations, alreadyApplied: false))
    }

    private func reported(_ plan: RotationPlan, newPath: String, oldPath: String, operations: Int, alreadyApplied: Bool) -> [UInt8] {
        JSONValue.object([
            ("planId", .string(Hex.encode(plan.planID))), ("alreadyApplied", .bool(alreadyApplied)),
            ("newVault", .string(newPath)), ("tombstone", .string(oldPath)),
            // An earlier apply wrote the operations; this run wrote none.
            ("ops", alreadyApplied ? .null : .string(ops!)), ("operations", alreadyApplied ? .null : .int(operations)),
        ]).reported()
    }

    func run() throws {
        let plan = try PlanFiles.read(plan)
        let newPath = VaultLocation.joined(outDir, plan.new.vaultPath), oldPath = VaultLocation.joined(outDir, plan.old.vaultPath)
        // Schema 3: the old household's log ends with the move, signed by the old key, beside the
        // tombstone; the new household's begins, signed by the new key, naming the old log's
        // last event before the move (docs/vault-format.md §10.5).
        let logs = (new: LoggedVault.logPath(besideVault: newPath), old: LoggedVault.logPath(besideVault: oldPath))
        let out = (newVault: DeclaredOutput("new vault", newPath, kind: .binary, createFolders: true, namedByTool: true),
                   ops: DeclaredOutput("--ops", ops, kind: .text),
                   newLog: DeclaredOutput.householdLog(logs.new, label: "new log", createFolders: true, namedByTool: true),
                   tombstone: DeclaredOutput("tombstone", oldPath, kind: .binary, createFolders: true, namedByTool: true),
                   oldLog: DeclaredOutput.householdLog(logs.old, label: "old log", createFolders: true, namedByTool: true))
        let jsonReport = json ? DeclaredOutput("--json", nil, kind: .text) : nil
        let files = try CommandFiles(
            reads: [.init("plan", self.plan), .init("--vault", vault), .init("the vault's log", LoggedVault.logPath(besideVault: vault))] + keys.declaredInputs,
            writes: [out.newVault, out.ops, out.newLog, out.tombstone, out.oldLog] + (jsonReport.map { [$0] } ?? []))
        let (old, new) = try keys.load()
        let source = try VaultLogFiles.readVault(vault, reading: .verifyingLog)
        let sourceLog = try oldLog(source, oldKey: old)
        let existing = (new: try files.currentContents(out.newVault), tombstone: try files.currentContents(out.tombstone))
        let writer = files.writer()
        if let newVault = existing.new, let tombstone = existing.tombstone,
           try RotationApplier.wasApplied(plan, vault: source, newVault: newVault, tombstone: tombstone, oldKey: old, newKey: new) {
            diagnostics.note("this plan was already applied: \(newPath) and \(oldPath) are its result; nothing was changed")
            try report(plan, newPath: newPath, oldPath: oldPath, operations: 0, alreadyApplied: true)
            return
        }
        if let newVault = existing.new, existing.tombstone == nil,
           let outcome = try RotationApplier.resume(plan, vault: source, newVault: newVault, oldKey: old, newKey: new) {
            // An earlier run was cut off after publishing the new vault (a kill, a closed pipe):
            // the old vault is still live, so this run finishes what it began.
            try writer.stage(out.ops, JSONValue.operationLines(outcome.operations))
            try writer.stageVault(out.tombstone, handOver(outcome, plan: plan, sourceLog: sourceLog, oldKey: old, newKey: new).old, log: out.oldLog)
            try stageReport(writer, jsonReport, plan, newPath: newPath, oldPath: oldPath, operations: outcome.operations.count)
            try writer.publish()
            diagnostics.note("finished an apply that was cut off: the new vault \(newPath) was already there; tombstone \(oldPath); \(outcome.operations.count) operations for the app")
            return
        }
        if existing.new != nil || existing.tombstone != nil {
            throw VaultError.outDirHoldsAnotherVault(outDir)
        }
        let outcome = try RotationApplier.apply(plan, vault: source, oldKey: old, newKey: new)
        // All three staged before any is published. The operations first: on standard output a
        // closed pipe then publishes nothing, and no run can leave the vaults published with
        // the operations lost. The tombstone last, because it retires the old vault: until then
        // the household still has a vault that opens with the old key, and a run cut off before
        // it is finished by running it again.
        let logged = try handOver(outcome, plan: plan, sourceLog: sourceLog, oldKey: old, newKey: new)
        try writer.stage(out.ops, JSONValue.operationLines(outcome.operations))
        try writer.stageVault(out.newVault, logged.new, log: out.newLog)
        try writer.stageVault(out.tombstone, logged.old, log: out.oldLog)
        try stageReport(writer, jsonReport, plan, newPath: newPath, oldPath: oldPath, operations: outcome.operations.count)
        try writer.publish()
        diagnostics.note("new vault \(newPath); tombstone \(oldPath); \(outcome.operations.count) operations for the app")
    }

    /// The source vault's household log, verified, when it is schema 3 (the old key signs the
    /// move, so it must be allowed to: it is that household's parent).
    private func oldLog(_ source: [UInt8], oldKey: SecretKey) throws -> HouseholdLog? {
        guard let version = LoggedVault.schemaVersion(source), version >= 3 else { return nil }
        let household = Household(parentPublicKey: oldKey.publicKey).id
        return try VaultLogFiles.read(LoggedVault.logPath(besideVault: vault), ofVault: vault, logOption: nil).readyForChange(household: household, vault: source, signer: oldKey.publicKey, action: .rotate, at: currentTime(),
                                                               clock: currentTime()).log
    }

    /// The two vaults with their logs: the old log ends with the move (naming the successor and
    /// its vault), the new one begins naming the old log's last event before it.
    private func handOver(_ outcome: RotationApplier.Outcome, plan: RotationPlan, sourceLog: HouseholdLog?, oldKey: SecretKey, newKey: SecretKey) throws -> (new: LoggedVault, old: LoggedVault) {
        guard let sourceLog, let before = sourceLog.head else { return (try LoggedVault(vault: outcome.newVault, log: nil), try LoggedVault(vault: outcome.tombstone, log: nil)) }
        let oldHousehold = Household(parentPublicKey: oldKey.publicKey).id, newHousehold = Household(parentPublicKey: newKey.publicKey).id
        let now = currentTime()
        let newLog = try HouseholdLog(events: []).appending(
            .init(.start, summary: "moved here from household \(oldHousehold.shortHex)… (rotation, \(plan.mode.rawValue))", details: [["predecessor", oldHousehold.hex, before.idHex]]),
            household: newHousehold, vault: outcome.newVault, revision: outcome.newDocument.revision ?? 0, signer: newKey, at: now)
        let oldLog = try sourceLog.appending(
            .init(.rotate, summary: "moved to household \(newHousehold.shortHex)… (rotation, \(plan.mode.rawValue))",
                  details: [["successor", newHousehold.hex, HouseholdLog.vaultDigest(outcome.newVault)]]),
            household: oldHousehold, vault: outcome.tombstone, revision: outcome.tombstoneDocument.revision ?? 0, signer: oldKey, at: now)
        return (try LoggedVault(vault: outcome.newVault, log: newLog), try LoggedVault(vault: outcome.tombstone, log: oldLog))
    }
}

extension VaultError.Code {
    /// `apply --out-dir` holds a vault of the plan's households that is not this plan's result.
    public static let outDirHoldsAnotherVault = VaultError.Code(name: "outDirHoldsAnotherVault", category: .refused)
}

extension VaultError {
    static func outDirHoldsAnotherVault(_ outDir: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outDirHoldsAnotherVault, "'\(outDir)' already holds a vault of one of the plan's households, not the result of this plan; nothing was changed",
                   hint: "apply into an empty --out-dir, or move those vaults away first", file: file, line: line)
    }
}
