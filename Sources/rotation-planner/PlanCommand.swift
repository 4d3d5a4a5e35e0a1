import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultStorage

struct Plan: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
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

    @Option(help: ArgumentHelp("routine (a planned change of key; the default) or compromise (the old key may be known to someone else). Required after a device was revoked in the last 30 days.", valueName: "MODE"))
    var mode: RotationPlan.Mode?

    @Option(help: ArgumentHelp("Why, in a few words; recorded in the plan.", valueName: "TEXT"))
    var reason: String?

    @OptionGroup var now: RecordedNowOption

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the plan to FILE, a new file (a plan is never written over another file), instead of standard output.", valueName: "FILE"))
    var output: String?

    func validate() throws {
        try requireOneStandardInput([vault, keys.keyFile, keys.newKeyFile])
    }

    func run() throws {
        let planOutput = DeclaredOutput("-o", output, kind: .text, exclusive: true)
        let files = try CommandFiles(reads: [.init("--vault", vault)] + keys.declaredInputs, writes: [planOutput])
        let (old, new) = try keys.load()
        let bytes = try VaultLogFiles.readVault(vault, reading: .showing)
        let planned = try RotationPlanner.planned(vault: bytes, oldKey: old, newKey: new, mode: mode, reason: reason,
                                                  createdAt: now.time, template: PlanFiles.template())
        var plan = planned.plan
        try plan.sign(oldKey: old, newKey: new)
        if !planned.undatedRevocations.isEmpty {
            // A trial: a device revoked a minute before in a schema 1 vault, a routine plan, no word.
            let names = planned.undatedRevocations.joined(separator: ", ")
            diagnostics.warning("a routine plan, but the vault does not record when \(names) \(planned.undatedRevocations.count == 1 ? "was" : "were") revoked "
                                + "(the vault keeps no such time for it, as a schema 1 vault keeps none): if that was lately and a device was lost or stolen, the old key may be known: "
                                + "make the plan again with --mode compromise (or --mode routine to say this one is meant)")
        }
        // The characters that would drive or reorder a terminal or an editor showing the plan
        // (a device name's U+202E, U+2028, DEL, a C1 control) are written as `\uXXXX` wherever
        // it goes, as `show` escapes them: the same plan to any reader, since its planId is over
        // the canonical body (hostile trials: on a terminal, then in the file `cat` shows). On a
        // terminal it is read, not kept, and shows no key either.
        let shown = planOutput.path == nil && StandardStreams.outputIsTerminal, value = plan.jsonValue()
        try files.writer().write(planOutput, shown ? value.reported() : JSONValue.escapingInvisibles(value.serialized()))
        let relink = plan.devices.filter { $0.action == .relink }.count
        diagnostics.note("plan \(Hex.encode(plan.planID).prefix(16))…: \(plan.mode.rawValue) rotation of household \(plan.old.householdID.shortHex)… → \(plan.new.householdID.shortHex)…, \(counted(relink, "device")) to relink, \(counted(plan.groups.count, "group"))")
    }
}
