import ArgumentParser
import CLISupport
import VaultCore

struct VaultMode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Revoke devices in a household's vault and say which group removals the app must make.",
        discussion: """
        Marks the chosen devices revoked (status, and in schema v2 revokedAt and \
        revocationReason, with the revision raised), removes their subkeys from every group, and \
        names each device revoked. The app's group removals (mls.remove, JSON Lines) go to \
        --ops FILE; without it, into the --json report (groupRemovals) or to standard output. A device is named by its id, an id prefix of 4 characters or \
        more, or its whole name in any case and spacing: part of a name ("room" for "Bedroom \
        iPad") or a name several devices answer to is refused, listing the devices it could mean. \
        Refuses (exit 4, nothing written) to revoke the primary without --promote, every active \
        device without --allow-empty, an unknown id without --ignore-unknown, or devices not \
        seen since a date still to come.

        Examples:
          device-revoker vault --key-file parent.nsec --vault household.vault \\
            --device 0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D -o new.vault \\
            --ops ops.jsonl
          device-revoker vault --key-file parent.nsec --vault household.vault \\
            --device "bedroom ipad" -o new.vault --ops ops.jsonl --json
          device-revoker vault --vault-key-file vk --vault household.vault \\
            --all-except KITCHEN-ID --dry-run --json
        """
    )

    @OptionGroup var access: VaultAccessOptions

    @Option(help: ArgumentHelp("The vault: a file, or s3://BUCKET/KEY.", valueName: "VAULT"))
    var vault: String

    @Option(name: .customLong("device"), help: ArgumentHelp("A device to revoke: its id, a unique id prefix (4 characters or more), or its whole name, any case (repeatable).", valueName: "ID"))
    var devices: [String] = []

    @Option(help: ArgumentHelp("A file of devices (ids, id prefixes or whole names), one a line; it must list one at least.", valueName: "FILE"))
    var devicesFile: String?

    @Option(help: ArgumentHelp("Revoke devices last seen before this date (not after now).", valueName: "DATE"))
    var notSeenSince: String?

    @Option(help: ArgumentHelp("Revoke every device except this one (named as for --device).", valueName: "ID"))
    var allExcept: String?

    @Option(help: ArgumentHelp("The active device that becomes primary when the primary is revoked.", valueName: "ID"))
    var promote: String?

    @Option(help: ArgumentHelp("Why (recorded in schema v2 vaults).", valueName: "TEXT"))
    var reason: String?

    @Option(help: ArgumentHelp("Refuse unless the vault is at this revision (a v1 vault counts as 0).", valueName: "N"), transform: expectedRevision)
    var expectRevision: Int?

    @Flag(help: "Allow revoking every active device.")
    var allowEmpty = false

    @Flag(help: "Skip device ids the vault does not have, instead of refusing.")
    var ignoreUnknown = false

    @Flag(help: "Show the blast radius and write nothing.")
    var dryRun = false

    @Flag(help: "Print the blast radius (--dry-run) or what was revoked as JSON on standard output.")
    var json = false

    @OptionGroup var now: RecordedNowOption

    @Option(name: .shortAndLong, help: ArgumentHelp("The changed vault.", valueName: "FILE"))
    var output: String?

    @Option(help: ArgumentHelp("Write the app's mls.remove operations (JSON Lines) to FILE; without it they go to standard output, never nowhere.", valueName: "FILE"))
    var ops: String?

    /// Where the operations go of themselves: `--ops`, else standard output; nil with `--json`,
    /// whose report holds them (`groupRemovals`). A revocation's group removals are never
    /// dropped: the app must make them, or the device stays in its groups.
    var opsOutput: String? { ops ?? (json ? nil : "-") }

    @Flag(help: "Allow the vault to go to a terminal.")
    var force = false

    @OptionGroup var signer: SignerOptions

    func validate() throws {
        try access.requireOne()
        let selectors = [!devices.isEmpty, devicesFile != nil, notSeenSince != nil, allExcept != nil].filter { $0 }.count
        guard selectors == 1 else { throw ValidationError("choose the devices one way: --device, --devices-file, --not-seen-since or --all-except") }
        if let notSeenSince { _ = try parseSince(notSeenSince) }
        if !dryRun, output == nil { throw ValidationError("give -o OUT for the changed vault, or --dry-run") }
        if json, output == "-" { throw ValidationError("--json prints on standard output: give -o FILE for the changed vault") }
        // A dry run given -o rehearses that run, and is refused as it is.
        if ops == nil, !json, output == "-" {
            throw ValidationError("the group removals go to standard output without --ops or --json, and the vault takes it: give --ops FILE")
        }
        try requireOneStandardInput(access.paths + [vault, devicesFile])
    }

    func run() throws {
        // A real run's report is an output like the others, published first: one that cannot be
        // written (a closed pipe) publishes nothing, rather than leave a vault changed unsaid. A
        // dry run declares it too, where it prints its plan: what the real run would refuse
        // beside it (`--ops -`, the same standard output) refuses the dry run alike.
        let jsonOutput = json ? DeclaredOutput("--json", "-", kind: .text) : nil
        // A dry run given -o rehearses that run: it declares every output the run would write
        // (the operations on standard output too), and is refused as it is. Without -o it shows
        // the plan, and declares only what it names.
        let rehearsed = !dryRun || output != nil
        let opsFile = opsOutput.flatMap { rehearsed || ops != nil ? DeclaredOutput("--ops", $0, kind: .text) : nil }
        let vaultOutput = output.map { DeclaredOutput("-o", $0, kind: .binary) }
        let logs = VaultLogFiles(signer, vault: vault, output: output)
        let files = try CommandFiles(reads: self.access.declaredInputs + signer.declaredInputs + logs.declaredInputs + [.init("--vault", vault)] + (devicesFile.map { [.init("--devices-file", $0)] } ?? []),
                                     writes: [jsonOutput, opsFile, vaultOutput].compactMap { $0 } + logs.declaredOutputs, force: force)
        let access = try self.access.load(diagnostics)!
        let input = try VaultLogFiles.readVault(vault, logPath: logs.input, reading: .verifyingLog)
        let opened = try Vault.open(input, with: access)
        // A schema 3 vault's log is verified, and the signer allowed, before anything is planned.
        let change = try LoggedChange(logs, vault: vault, opened: opened, input: input, access: access, action: .revoke, at: now.time, diagnostics)
        let selector: VaultRevocation.Selector
        if let devicesFile {
            let listed = try readList(devicesFile, what: "devices file")
            // An empty list revokes nothing: a file cut short or the wrong file, not a request.
            guard !listed.isEmpty else { throw VaultError.emptyDevicesFile(InputFiles.displayName(devicesFile)) }
            selector = .devices(listed)
        }
        else if let notSeenSince { selector = .notSeenSince(try parseSince(notSeenSince)) }
        else if let allExcept { selector = .allExcept(allExcept) }
        else { selector = .devices(devices) }
        let options = try VaultRevocation.Options(selector: selector, promote: promote, reason: reason, allowEmpty: allowEmpty,
                                              ignoreUnknown: ignoreUnknown, now: now.time)
        let plan = VaultRevocation.plan(opened.document, options: options)
        try Vault.checkRevision(opened.document, expected: expectRevision, changing: !plan.revoke.isEmpty)
        for id in plan.alreadyRevoked { diagnostics.note("device '\(id)' is already revoked; nothing to do for it") }
        if ignoreUnknown, plan.refusals.isEmpty { for id in plan.unknown { diagnostics.warning("no device matches \(id); skipped (--ignore-unknown)") } }
        if reason != nil, opened.document.version < 2 {
            let key = self.access.keyFile.map { ShellWord.option("--key-file", $0, quoted: true) }
                ?? ShellWord.option("--vault-key-file", self.access.vaultKeyFile ?? "FILE", quoted: true)
            diagnostics.warning("a schema v1 vault cannot record why a device was revoked; the reason is not kept (upgrade it first: vault-tool migrate \(key) --to 2 --in-place \(ShellWord.path(vault)))")
        }

        // The vault revoked and its record: the change this run makes, and a dry run compares.
        func revoked() throws -> (document: VaultDocument, recorded: LoggedVault) {
            let document = try VaultRevocation.apply(plan, to: opened.document, options: options)
            // Nothing to revoke: the output is the very bytes that were checked, not a second read.
            let bytes = plan.revoke.isEmpty ? input : try Vault.sealVerified(document, access: access)
            let names = plan.revoke.map { "\(RecordedText.named($0.deviceName)) (\(RecordedText.named(String($0.deviceId.prefix(8)))))" }.joined(separator: ", ")
            // The device promoted is part of the change, and of its record, by its whole id: the
            // same revocation run again with another --promote is another change (a trial took it
            // for the one done, two devices of one name and ids alike in their first 8 characters).
            let promoted = plan.newPrimary.flatMap { id in opened.document.devices.first { $0.deviceId == id } }
                .map { "; new primary \(RecordedText.named($0.deviceName)) (\(RecordedText.recordedID($0.deviceId)))" } ?? ""
            return (document, try change.record(.init(.revoke, summary: "revoked \(counted(plan.revoke.count, "device")): \(names)\(promoted)", reason: reason,
                                                      details: plan.revoke.map { ["device", RecordedText.recordedID($0.deviceId)] }),
                                                vault: bytes, revision: document.revision))
        }
        // A real run has its -o (validate()).
        guard let writer = files.writer(unlessDryRun: dryRun), let vaultOutput else {
            // What the real run would find at -o is asked first, as the real run stages its
            // outputs before it says anything: a log there of another change (refused), or of
            // this one made earlier; then what staging the vault there would refuse. Asked of a
            // run with nothing to revoke too: its real run still writes -o and its log.
            var madeEarlier = false
            if plan.refusals.isEmpty, let vaultOutput {
                madeEarlier = try files.rehearseStagingVault(vaultOutput, revoked().recorded, logs: logs, change: change)
            }
            try StandardStreams.writeOutput(Array((json ? String(decoding: radiusJSON(plan).reported(), as: UTF8.self) : radiusText(plan)).utf8))
            let unwritten = [output.map { _ in "-o" }, ops.map { _ in "--ops" }].compactMap { $0 }
            if !unwritten.isEmpty { diagnostics.note("dry run: \(unwritten.joined(separator: " and ")) not written") }
            if madeEarlier, !plan.revoke.isEmpty {
                diagnostics.note("dry run: an earlier run made this change to \(ShellWord.path(output ?? "-")); the real run changes nothing")
            }
            // A dry run of a revocation that would be refused is refused too (exit 4), as the
            // real run would be: a script cannot mistake it for a go-ahead.
            if !plan.refusals.isEmpty { throw Self.refused(plan) }
            return
        }
        guard plan.refusals.isEmpty else {
            // With --json a refused run says why on standard output too, as its dry run would.
            if json { try StandardStreams.writeOutput(radiusJSON(plan).reported()) }
            throw Self.refused(plan)
        }
        let (document, recorded) = try revoked()
        // The operations first: were the vault published and they not, a rerun would find
        // nothing to revoke and the app would never learn which groups to leave.
        if let jsonOutput { try writer.stage(jsonOutput, radiusJSON(plan, written: document).reported()) }
        if let opsFile { try writer.stage(opsFile, JSONValue.operationLines(VaultRevocation.operations(plan))) }
        let madeEarlier = try writer.stageVault(vaultOutput, recorded, log: logs.declaredOutput)
        try writer.publish()
        diagnostics.note(plan.revoke.isEmpty
            ? "nothing to revoke; the vault is unchanged"
            : "\(madeEarlier ? "an earlier run made this change; nothing changed: it " : "")revoked \(counted(plan.revoke.count, "device")), \(counted(plan.removals.count, "group removal"))\(composed: plan.newPrimary.map { ", new primary '\($0.displaySafe)'" } ?? "")\(composed: document.revision.map { ", revision \($0)" } ?? ""):\n"
                + DisplayText(composed: String(Self.deviceTable(plan.revoke).dropLast())))
        if opsOutput == "-", !plan.removals.isEmpty {
            diagnostics.note("the app's group removals (mls.remove, JSON Lines) are on standard output; give --ops FILE to write them to a file")
        }
        if !plan.revoke.isEmpty {
            // Every linked device received the parent key in its device link (seed 000, Flow 2):
            // a lost or stolen one may expose it, and revoking does not take the key back.
            let keyFile = self.access.keyFile ?? "PARENT.nsec"
            diagnostics.note("""
                next step if the device was lost or stolen: it holds the family's key (device links carry the nsec), so move the family to a new key:
                  vault-tool keygen -o new-parent.nsec
                  rotation-planner plan --mode compromise \(ShellWord.option("--vault", output ?? "NEW.vault")) \(ShellWord.option("--key-file", keyFile)) --new-key-file new-parent.nsec -o rotation-plan.json
                """)
        }
    }

    /// The refusal of a plan that trips guard rails, for the real run and its dry run alike.
    static func refused(_ plan: VaultRevocation.Plan) -> VaultError {
        VaultError.revocationRefused(plan.refusals.map { describe($0, plan) }.joined(separator: "; "))
    }

    /// A guard rail as this tool words it: with the option that overrides or settles it.
    static func describe(_ refusal: VaultRevocation.Refusal, _ plan: VaultRevocation.Plan) -> String {
        switch refusal {
        case .unknownDevices(let ids):
            // Skipping is offered only when something else matched: when nothing did, the name
            // is mistyped, and skipping it would change nothing.
            ids.map { id in "no device matches \(id)" + (plan.closest[id].map { $0.isEmpty ? "" : "; closest: \($0.joined(separator: ", "))" } ?? "") }
                .joined(separator: "; ") + (plan.revoke.isEmpty && plan.alreadyRevoked.isEmpty ? "" : " (or pass --ignore-unknown to skip unknown ids)")
        case .ambiguousDevice: "\(refusal.reason); give the whole id"
        case .partOfNames: "\(refusal.reason); give a device's whole name or its id"
        case .dateInTheFuture(let date, let now): "--not-seen-since \(date) is after now (\(now)); every device was last seen before it"
        case .promotedDeviceDoesNotStay(let id): "--promote \(id) is not an active device that stays"
        case .primaryNeedsSuccessor(let primary): "'\(primary)' is the primary device; name the new primary with --promote ID"
        case .promotionWithoutPrimary(let id): "--promote \(id) given, but the primary device is not being revoked"
        case .wouldRevokeEveryActiveDevice: "\(refusal.reason) (pass --allow-empty to go ahead)"
        }
    }

    private func radiusText(_ plan: VaultRevocation.Plan) -> String {
        var text = plan.refusals.isEmpty ? "" : "refused: this revocation would not be made (nothing was written)\n"
        text += "would revoke \(counted(plan.revoke.count, "device")):\n"
        text += Self.deviceTable(plan.revoke)
        let groups = plan.groups.map(\.name)
        text += "group removals: \(plan.removals.count) in \(counted(groups.count, "group"))\(groups.isEmpty ? "" : ": " + groups.joined(separator: ", "))".displaySafe + "\n"
        if let primary = plan.newPrimary { text += "new primary: \(primary)".displaySafe + "\n" }
        if !plan.alreadyRevoked.isEmpty { text += "already revoked: \(plan.alreadyRevoked.joined(separator: ", "))".displaySafe + "\n" }
        if !plan.unknown.isEmpty { text += "unknown ids: \(plan.unknown.map { $0.shown ?? $0.description }.joined(separator: ", "))".displaySafe + "\n" }
        text += plan.refusals.isEmpty ? "no guard rail would trip\n" : plan.refusals.map { "would be refused: \(Self.describe($0, plan))".displaySafe + "\n" }.joined()
        return text
    }

    /// The devices of a revocation, one a line: id, name, primary, last seen.
    private static func deviceTable(_ devices: [DeviceRecord]) -> String {
        var table = TextTable()
        for device in devices { table.add(device.deviceId, device.deviceName, device.isPrimary ? "primary" : "", "last seen \(device.lastSeenAt)") }
        return table.render(indent: "  ")
    }

    /// The blast radius as JSON; after a real run, with the revision of the vault `written`.
    private func radiusJSON(_ plan: VaultRevocation.Plan, written: VaultDocument? = nil) -> JSONValue {
        var fields: [(key: String, value: JSONValue)] = [
            ("revoke", .array(plan.revoke.map { .object([("deviceId", .string($0.deviceId)), ("deviceName", .string($0.deviceName)), ("isPrimary", .bool($0.isPrimary))]) })),
            ("groupRemovals", .array(VaultRevocation.operations(plan))),
            ("groups", .array(plan.groups.map { .object([("mlsGroupId", .string($0.id)), ("groupName", .string($0.name))]) })),
            ("newPrimary", plan.newPrimary.map(JSONValue.string) ?? .null),
            ("alreadyRevoked", .array(plan.alreadyRevoked.map(JSONValue.string))),
            ("unknown", .array(plan.unknown.map { .string($0.reported) })),
            ("refusals", .array(plan.refusals.map { .object([("kind", .string($0.kind)), ("message", .string(Self.describe($0, plan)))]) })),
        ]
        if let written { fields.append(("revision", written.revision.map(JSONValue.int) ?? .null)) }
        return .object(fields)
    }
}
