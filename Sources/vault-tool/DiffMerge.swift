import ArgumentParser
import CLISupport
import VaultCore

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "What changed between two vaults of one household, record by record.",
        discussion: """
        Devices, children, groups and key history are matched by id and compared field by \
        field. Secrets are compared but never shown. Exit 0 either way.

        Examples:
          vault-tool diff --key-file parent.nsec old.vault new.vault
          vault-tool diff --vault-key-file vk --json household.vault \\
            household.v2.vault
        """
    )

    @OptionGroup var access: VaultAccessOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Argument(help: ArgumentHelp("The earlier vault.", valueName: "EARLIER"))
    var first: String

    @Argument(help: ArgumentHelp("The later vault.", valueName: "LATER"))
    var second: String

    func validate() throws {
        try access.requireOne()
        try requireOneStandardInput(access.paths + [first, second])
    }

    func run() throws {
        let access = try self.access.load(diagnostics)!
        let documents = try [("vault A", first), ("vault B", second)].map { label, path in
            try about(label, path) { try Vault.open(VaultLogFiles.readVault(path, reading: .showing), with: access).document.comparable(with: access) }
        }
        let changes = try VaultDiff.between(documents[0], documents[1])
        let text: String
        if json {
            text = String(decoding: JSONValue.array(changes.map { change in
                var entries: [(key: String, value: JSONValue)] = [("record", .string(change.record)), ("kind", .string(change.kind.rawValue))]
                if let field = change.field { entries.append(("field", .string(field))) }
                if let old = change.old { entries.append(("old", .string(old))) }
                if let new = change.new { entries.append(("new", .string(new))) }
                return .object(entries)
            }).reported(), as: UTF8.self)
        } else {
            text = changes.isEmpty ? "no differences\n" : changes.map { $0.description.displaySafe + "\n" }.joined()
        }
        try StandardStreams.writeOutput(Array(text.utf8))
    }
}

struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Three-way merge of two copies of a vault that diverged from a common base.",
        discussion: """
        Changes made on one side are taken; true conflicts follow the rules of \
        docs/vault-format.md §8.5 (a revocation beats "active"; otherwise the later lastSeenAt or \
        updatedAt wins) and are listed on standard error (or as JSON with --json on standard \
        output). A revoked device never comes back into a group: its subkey, added to a group \
        by either copy, is left out and listed as a conflict. The result's revision is the larger of the two plus one. A result that would \
        not pass 'check' is refused (exit 4) and nothing is written.

        Example:
          vault-tool merge --key-file parent.nsec --base base.vault --ours a.vault \\
            --theirs b.vault -o merged.vault
        """
    )

    @OptionGroup var access: VaultAccessOptions

    @Option(help: ArgumentHelp("The common ancestor.", valueName: "VAULT"))
    var base: String

    @Option(help: ArgumentHelp("Our copy.", valueName: "VAULT"))
    var ours: String

    @Option(help: ArgumentHelp("Their copy.", valueName: "VAULT"))
    var theirs: String

    @Flag(help: "Print the merge report as JSON on standard output.")
    var json = false

    @OptionGroup var output: OutputOptions

    @OptionGroup var signer: SignerOptions

    @OptionGroup var now: RecordedNowOption

    func validate() throws {
        try access.requireOne()
        try requireOneStandardInput(access.paths + [base, ours, theirs])
        guard output.output != nil else { throw ValidationError("merge needs -o OUT") }
    }

    func run() throws {
        // The merged copy continues our copy's household log (schema 3), its merge signed by
        // whoever made it.
        let logs = VaultLogFiles(signer, vault: ours, output: output.output)
        let jsonOutput = json ? DeclaredOutput("--json", "-", kind: .text) : nil, mergedOutput = output.declared(.binary)
        let files = try CommandFiles(reads: self.access.declaredInputs + signer.declaredInputs + logs.declaredInputs + [.init("--base", base), .init("--ours", ours), .init("--theirs", theirs)],
                                     writes: (jsonOutput.map { [$0] } ?? []) + [mergedOutput] + logs.declaredOutputs, force: output.force)
        let access = try self.access.load(diagnostics)!
        let opened = try [("--base", base), ("--ours", ours), ("--theirs", theirs)].map { label, path in
            try about(label, path) {
                // Ours is held to its log by the merge, which continues it; the others are shown.
                let bytes = try VaultLogFiles.readVault(path, reading: label == "--ours" ? .verifyingLog : .showing)
                return (bytes: bytes, vault: try Vault.open(bytes, with: access))
            }
        }
        let documents = try opened.map { try $0.vault.document.comparable(with: access) }
        let result = try VaultMerge.checkedMerge(base: documents[0], ours: documents[1], theirs: documents[2], access: access)
        // A schema 3 result continues our copy's household log: ours must have one.
        if result.document.version >= 3, opened[1].vault.document.version < 3 { throw VaultError.mergeIntoSchema3NeedsOursAt3(ShellWord.path(ours)) }
        let change = try about("--ours", ours) {
            try LoggedChange(logs, vault: ours, opened: opened[1].vault, input: opened[1].bytes, access: access, action: .merge, at: now.time, diagnostics)
        }
        // The report first, as an output of the merge: one that cannot be written (a closed
        // pipe) publishes no merged vault either.
        let writer = files.writer()
        if let jsonOutput {
            try writer.stage(jsonOutput, JSONValue.object([
                ("revision", .int(result.document.revision ?? 1)),
                ("conflicts", .array(result.conflicts.map { conflict in
                    .object([("record", .string(conflict.record)), ("field", conflict.field.map(JSONValue.string) ?? .null),
                             ("ours", .string(conflict.ours)), ("theirs", .string(conflict.theirs)),
                             ("taken", .string(conflict.taken)), ("rule", .string(conflict.rule))])
                })),
            ]).reported())
        }
        let merged = try Vault.sealVerified(result.document, access: access)
        // The base is named in the sentence (the other copy has its tag): a merge over another
        // base is another merge, which a run again must not take for this one (a trial).
        let base = HouseholdLog.vaultDigest(opened[0].bytes).prefix(16)
        let madeEarlier = try writer.stageVault(mergedOutput, change.record(.init(.merge, summary: "merged another copy in (\(counted(result.conflicts.count, "conflict")); common base \(base)…)",
                                                                details: [["theirs", HouseholdLog.vaultDigest(opened[2].bytes)]]),
                                                          vault: merged, revision: result.document.revision), log: logs.declaredOutput)
        try writer.publish()
        warnOfTheirEvents(theirs: opened[2].bytes, oursLog: change.log)
        if !json {
            for conflict in result.conflicts { diagnostics.note("conflict: \(conflict)") }
            diagnostics.note("\(madeEarlier ? "an earlier run made this merge; nothing changed: it " : "")merged into revision \(result.document.revision ?? 1) with \(result.conflicts.count) conflict\(result.conflicts.count == 1 ? "" : "s") → \(output.displayName)")
        }
    }
}

extension Merge {
    /// The merged log continues ours, and its event names their copy's vault by its digest:
    /// their copy's own events (a support key's revocation made there) are not carried over, so
    /// whoever keeps the record is told to keep their log too (a trial: the merged vault held a
    /// revocation whose signer no log beside it named).
    /// `oursLog`: the log the change read and verified (read once: it may be standard input).
    func warnOfTheirEvents(theirs bytes: [UInt8], oursLog: HouseholdLog?) {
        guard theirs != "-", LoggedVault.schemaVersion(Array(bytes.prefix(VaultEnvelope.headerByteCount))).map({ $0 >= 3 }) == true,
              let oursLog else { return }
        let theirLogPath = VaultLogFiles.keptLog(ofVault: theirs)
        // Only a log that holds for their vault is the record of their changes (one that does
        // not was said when their copy was read).
        guard let theirLog = try? InputFiles.readIfPresent(theirLogPath, what: "household log").map(HouseholdLog.init(parsing:)),
              let household = VaultHeader.household(inAnyHeader: bytes), (try? theirLog.verified(household: household, vault: bytes)) != nil else { return }
        let missing = theirLog.events(notIn: oursLog)
        guard !missing.isEmpty else { return }
        var actions: [String] = []
        for action in missing.compactMap({ $0.tag("action").flatMap(LogAction.init(rawValue:)) }) where !actions.contains(action.rawValue) {
            actions.append(action.rawValue)
        }
        diagnostics.warning("their copy's household log \(FileNames.quoted(theirLogPath)) holds \(counted(missing.count, "event")) ours does not (\(actions.joined(separator: ", "))): the merged log continues ours, and its merge event names their vault (its SHA-256), so keep their log with it as the record of who made those changes")
    }
}

extension VaultError.Code {
    /// A merge whose result is schema 3, from an older copy of ours.
    static let mergeIntoSchema3NeedsOursAt3 = VaultError.Code(name: "mergeIntoSchema3NeedsOursAt3", category: .refused)
}

extension VaultError {
    static func mergeIntoSchema3NeedsOursAt3(_ ours: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.mergeIntoSchema3NeedsOursAt3, "the merged copy would be schema version 3, whose household log continues our copy's, and our copy is older",
                   hint: "migrate our copy first: vault-tool migrate --key-file PARENT.nsec --to 3 --in-place \(ours)", file: file, line: line)
    }
}
