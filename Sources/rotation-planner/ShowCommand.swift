import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultStorage

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
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
            try StandardStreams.writeOutput(JSONValue.object([
                ("planId", .string(id)), ("verified", .bool(true)), ("mode", .string(plan.mode.rawValue)),
                ("from", .string(plan.old.householdID.hex)), ("to", .string(plan.new.householdID.hex)),
                ("relink", .array(relink.map { .string($0.deviceId) })), ("retire", .array(retire.map { .string($0.deviceId) })),
                ("groups", .int(plan.groups.count)), ("additions", .int(additions)), ("removals", .int(removals)),
                ("children", .int(plan.children.count)), ("childKeys", .string(plan.wrapKey.rawValue)), ("wrapKey", .string(plan.wrapKey.rawValue)),
                ("steps", .array(plan.steps.map { .object([("id", .string($0.id)), ("text", .string($0.text))]) })),
            ]).reported())
            return
        }
        var text = try template.text("show.title", ["planId": String(id.prefix(16)) + "…"]) + "\n\n"
        text += try template.text("show.mode.\(plan.mode.rawValue)") + "\n"
        if let reason = plan.reason { text += try template.text("show.reason", ["reason": reason.displaySafe]) + "\n" }
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
        // A step names devices and groups from the vault: one line each, whatever a name holds
        // (issue 44: a device name with a line break added a forged step to what support approves).
        for (index, step) in plan.steps.enumerated() { text += "  \(index + 1). \(step.text.displaySafe)\n" }
        text += "\n" + (try template.text("show.irreversible")) + "\n"
        try StandardStreams.writeOutput(Array(text.displaySafeKeepingNewlines.utf8))
    }
}
