import ArgumentParser
import CLISupport
import VaultCore

/// `vault-tool device add|promote|rename|limit`: a device's life in the vault besides its
/// revocation (device-revoker vault), with the same guard rails.
struct Device: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Add, promote or rename a device in a household's vault, or set its device limit.",
        discussion: """
        The device-link flow's last steps (seed 000, Flow 2): the new device's record, with its \
        subkey derived from the parent key, and its MLS additions to every group the household's \
        devices are in, as JSON Lines operations for the app (--ops FILE, or standard output). \
        Any active device may be promoted to primary (the old one stays active); a device is \
        renamed; the household's device limit is set or cleared. Devices are named as a \
        revocation names them: an id, 4 characters of it or more, or a whole name. Each \
        takes -o FILE or --in-place, --dry-run and --expect-revision N; in a schema 3 vault \
        each appends its signed event to the household log. Run again, a change already made \
        changes nothing (exit 0), whatever --expect-revision says; a rename typed again by the \
        old name is refused (exit 4), naming the device that has the new name.
          add       a linked device: --id and --name (the parent key)
          promote   a device to primary
          rename    a device
          limit     the most active devices the household may have: N, or none
        """,
        subcommands: [DeviceAdd.self, DevicePromote.self, DeviceRename.self, DeviceLimit.self]
    )
}

/// What every device change takes: the vault and its key, where the result goes, its guard
/// rails, and who signs it.
struct DeviceChangeOptions: ParsableArguments {
    @OptionGroup var vault: VaultInputOptions

    @OptionGroup var output: OutputOptions

    @Flag(help: "Replace the vault file itself (its household log with it).")
    var inPlace = false

    @Option(help: ArgumentHelp("Write the app's MLS operations (JSON Lines) to FILE; without it they go to standard output.", valueName: "FILE"))
    var ops: String?

    @Flag(help: "Say what would change; write nothing.")
    var dryRun = false

    @Flag(help: "Print the outcome as JSON on standard output (then give --ops FILE for any operations).")
    var json = false

    @Option(help: ArgumentHelp("Refuse (exit 4) unless the vault is at this revision.", valueName: "N"), transform: expectedRevision)
    var expectRevision: Int?

    @OptionGroup var signer: SignerOptions

    @OptionGroup var now: RecordedNowOption

    @OptionGroup var log: LogFormatOption

    func validate() throws {
        try vault.access.requireOne()
        if inPlace {
            guard vault.input != "-" else { throw ValidationError("--in-place needs a vault file, not standard input") }
            guard output.output == nil else { throw ValidationError("give -o or --in-place, not both") }
        } else if !dryRun, output.output == nil {
            throw ValidationError("give -o FILE or --in-place for the changed vault, or --dry-run")
        }
    }

    /// Refuses a vault given after the device, name or limit (exit 64, saying the order).
    func requireVaultFirst(before later: [String], usage: String) throws {
        try ArgumentOrder.requireFirst(vault.input, what: "vault", before: later, usage: usage, magic: VaultEnvelope.magic)
    }

    /// Where the vault goes: its own file in place, else -o.
    var target: String? { inPlace ? vault.input : output.output }

    func run(_ change: DeviceChange) throws {
        log.apply()
        // Only an add makes operations; they go to --ops, else standard output, never nowhere.
        var makesOperations = false
        if case .add = change { makesOperations = true }
        if makesOperations { try vault.access.requireParentKey(for: "adding a device (its subkey derives from the parent key)") }
        // A dry run given -o or --in-place rehearses that run: it declares every output the run
        // would write, and is refused as it is. Without them it shows the change, and declares
        // only what it names.
        let rehearsed = !dryRun || target != nil
        if makesOperations, rehearsed, ops == nil, json || output.output == "-" {
            throw VaultError(.operationsWithoutAPlace, "the MLS operations would share standard output with \(json ? "--json" : "the vault")",
                             hint: "give --ops FILE")
        }
        let opsOutput = makesOperations ? ops ?? "-" : ops
        let logs = VaultLogFiles(signer, vault: vault.input, output: target)
        // The vault is named as it was given: --in-place, or -o.
        let vaultOutput = inPlace ? DeclaredOutput("--in-place", vault.input, kind: .binary) : output.declared(.binary)
        let opsFile = opsOutput.map { DeclaredOutput("--ops", $0, kind: .text) }
        let jsonOutput = json ? DeclaredOutput("--json", "-", kind: .text) : nil
        // What the real run would refuse among its outputs (a FIFO, a link or a folder at the
        // log's name, `--ops -` beside --json or `-o -`) refuses its dry run alike, in the same
        // words (declared in one order), and the look for an earlier run reads them as the real
        // run would (trials: a FIFO at the log's name, and `--ops -` beside --json, passed the
        // dry run). The --json report is declared either way: the dry run prints it.
        let writes = [rehearsed || ops != nil ? opsFile : nil, jsonOutput, rehearsed ? vaultOutput : nil].compactMap { $0 } + logs.declaredOutputs
        let files = try CommandFiles(reads: (inPlace ? vault.access.declaredInputs : vault.declaredInputs) + signer.declaredInputs + logs.declaredInputs,
                                     writes: writes, force: output.force)
        let (access, opened, input) = try vault.open(diagnostics, reading: .verifyingLog)
        let logged = try LoggedChange(logs, vault: vault.input, opened: opened, input: input, access: access, action: .device, at: now.time, diagnostics)
        let outcome = try VaultDevices.apply(change, to: opened.document, parent: access.parentKey, now: now.time)
        try Vault.checkRevision(opened.document, expected: expectRevision, changing: !outcome.unchanged)
        // `unchanged`: nothing changed by this run (a change already made by an earlier one too).
        func report(unchanged: Bool) -> JSONValue {
            JSONValue.object([
                ("change", .string(change.name)), ("summary", .string(outcome.summary)), ("deviceId", outcome.deviceID.map(JSONValue.string) ?? .null),
                ("unchanged", .bool(unchanged)), ("operations", .array(outcome.operations)),
                ("revision", outcome.document.revision.map(JSONValue.int) ?? .null),
            ])
        }
        func recorded() throws -> LoggedVault {
            try logged.record(.init(.device, summary: outcome.summary, details: [["change", change.name]] + (outcome.deviceID.map { [["device", RecordedText.recordedID($0)]] } ?? [])),
                              vault: outcome.unchanged ? input : try Vault.sealVerified(outcome.document, access: access), revision: outcome.document.revision)
        }
        guard let writer = files.writer(unlessDryRun: dryRun) else {
            // Asked of a change that changes nothing too: its real run still writes the vault
            // and its log to -o, and refuses there alike.
            let earlier = rehearsed ? try files.rehearseStagingVault(vaultOutput, recorded(), logs: logs, change: logged) : false
            let madeEarlier = earlier && !outcome.unchanged
            if json { try StandardStreams.writeOutput(report(unchanged: outcome.unchanged || madeEarlier).reported()) }
            diagnostics.note(madeEarlier ? "dry run: an earlier run made this change (\(outcome.summary)); nothing would change, nothing written"
                : outcome.unchanged ? "dry run: \(outcome.summary); nothing would change, nothing written"
                : "dry run: would have \(outcome.summary)\(outcome.operations.isEmpty ? "" : ", with \(counted(outcome.operations.count, "MLS addition"))"); nothing written")
            return
        }
        // The vault (and its log) first, the additions after: an addition handed to the app
        // before the vault records the device would put a member in its groups that no vault
        // names (the reverse of a revocation, whose removals go first). Were the vault published
        // and the operations not, the same add run again finds the device and writes them again.
        let madeEarlier = try writer.stageVault(vaultOutput, recorded(), log: logs.declaredOutput)
        if let opsFile { try writer.stage(opsFile, JSONValue.operationLines(outcome.operations)) }
        if let jsonOutput { try writer.stage(jsonOutput, report(unchanged: outcome.unchanged || madeEarlier).reported()) }
        try writer.publish()
        if madeEarlier {
            diagnostics.note("an earlier run made this change (\(outcome.summary)); nothing changed")
        } else {
            diagnostics.note(outcome.unchanged ? "\(outcome.summary); nothing changed" : "\(outcome.summary)\(composed: outcome.document.revision.map { ", revision \($0)" } ?? "")")
        }
        if !outcome.operations.isEmpty {
            diagnostics.note("the app adds the device to \(counted(outcome.operations.count, "group")) (mls.add) from \(opsOutput == "-" ? "standard output" : ShellWord.path(opsOutput ?? "-"))")
        }
    }
}

struct DeviceAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a linked device: its record and subkey, and its MLS additions to the household's groups (the parent key).",
        discussion: """
        Refused (exit 4) past the household's device limit, for an id the vault already has, or \
        for a name another device has, active or revoked (a name typed later would select two).

        Example:
          vault-tool device add --key-file parent.nsec \\
            --id 9C1D2E3F-0000-4000-8000-000000000001 --name "Sam's iPad" \\
            --ops adds.jsonl -o new.vault household.vault
        """
    )

    @OptionGroup var options: DeviceChangeOptions

    @Option(help: ArgumentHelp("The new device's id, as the device chose it.", valueName: "ID"))
    var id: String

    @Option(help: ArgumentHelp("The new device's name.", valueName: "NAME"))
    var name: String

    func run() throws { try options.run(.add(id: id, name: name)) }
}

struct DevicePromote: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "promote",
        abstract: "Make an active device the primary (the old primary stays active).",
        discussion: """
        Example:
          vault-tool device promote --key-file parent.nsec --in-place \\
            household.vault "bedroom ipad"
        """
    )

    @OptionGroup var options: DeviceChangeOptions

    @Argument(help: ArgumentHelp("The device: its id, 4 characters of it or more, or its whole name.", valueName: "DEVICE"))
    var device: String

    func run() throws {
        try options.requireVaultFirst(before: [device], usage: "vault-tool device promote [options] VAULT DEVICE")
        try options.run(.promote(device))
    }
}

struct DeviceRename: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Rename a device.",
        discussion: """
        Example:
          vault-tool device rename --key-file parent.nsec --in-place household.vault \\
            "old ipad" "Grandma's iPad"
        """
    )

    @OptionGroup var options: DeviceChangeOptions

    @Argument(help: ArgumentHelp("The device: its id, 4 characters of it or more, or its whole name.", valueName: "DEVICE"))
    var device: String

    @Argument(help: ArgumentHelp("Its new name.", valueName: "NAME"))
    var name: String

    func run() throws {
        try options.requireVaultFirst(before: [device, name], usage: "vault-tool device rename [options] VAULT DEVICE NAME")
        try options.run(.rename(device, to: name))
    }
}

struct DeviceLimit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "limit",
        abstract: "Set the most active devices the household may have, or clear it (none).",
        discussion: """
        A limit below today's active devices is refused: revoke first.

        Example:
          vault-tool device limit --key-file parent.nsec --in-place household.vault 4
        """
    )

    @OptionGroup var options: DeviceChangeOptions

    @Argument(help: ArgumentHelp("The limit (1 or more), or none.", valueName: "LIMIT"))
    var limit: String

    func run() throws {
        try options.requireVaultFirst(before: [limit], usage: "vault-tool device limit [options] VAULT LIMIT")
        try options.run(.limit(VaultDevices.limit(typed: limit)))
    }
}

extension VaultError.Code {
    /// A change that makes MLS operations, with nowhere to write them.
    static let operationsWithoutAPlace = VaultError.Code(name: "operationsWithoutAPlace", category: .usage)
}
