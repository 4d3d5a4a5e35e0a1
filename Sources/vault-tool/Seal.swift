import ArgumentParser
import CLISupport
import VaultCore

struct Seal: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal",
        abstract: "Seal a vault document (JSON, sealed or revealed) into a vault file.",
        discussion: """
        Revealed secrets (nsec, parentWrapKey) are encrypted under the household's vault key; \
        sealed ones are checked to open under it. The document's parentPubkey must be the key \
        file's public key. A schema v2 document's revision is raised by one, as on every write. \
        No text in it but the secret fields may hold a key this run holds (the parent key, a \
        child's key, the wrap key), whole or a piece (exit 64).

        Examples:
          vault-tool seal --key-file parent.nsec -o household.vault household.json
          vault-tool open --key-file parent.nsec --reveal-secrets -o edit.json \\
            household.vault
          vault-tool seal --key-file parent.nsec -o household.vault edit.json
        """
    )

    @OptionGroup var key: ParentKeyOption

    @OptionGroup var output: OutputOptions

    @Argument(help: ArgumentHelp("The JSON document; - or nothing for standard input.", valueName: "FILE"))
    var input = "-"

    @Option(name: .customLong("log"), help: ArgumentHelp("A schema 3 vault's household log, when it is not beside -o (household.vault → household.log).", valueName: "FILE"))
    var log: String?

    @OptionGroup var now: RecordedNowOption

    func validate() throws {
        try requireOneStandardInput([key.keyFile, input])
    }

    func run() throws {
        // A schema 3 vault is written with its household log: the seal is appended to the log
        // beside -o when there is one (an edit of that vault), or begins a new one.
        let logPath = log ?? output.output.flatMap { $0 == "-" ? nil : LoggedVault.logPath(besideVault: $0) }
        let vaultOutput = output.declared(.binary), logOutput = logPath.map { DeclaredOutput.householdLog($0) }
        let files = try CommandFiles(reads: [.init("input", input), key.declaredInput].compactMap { $0 },
                                     writes: [vaultOutput] + (logOutput.map { [$0] } ?? []), force: output.force)
        let key = try self.key.load(diagnostics)
        let document = try VaultDocument(json: InputFiles.read(input, what: "document"))
        let (sealed, revision) = try Vault.sealEdited(document, with: key)
        let household = Household(parentPublicKey: key.publicKey).id
        // Only a schema 3 vault has a log: an older one reads none (its name may be too long to
        // have one beside it).
        let existing = try logOutput.flatMap { document.version >= 3 ? try files.currentContents($0) : nil }.map { try HouseholdLog(parsing: $0) }
        if document.version >= 3, let path = output.output, let current = try files.currentContents(vaultOutput) {
            try VaultLogFiles.checkLogBeside(vault: path, named: log, namedLog: existing, input: current, household: household)
        }
        let change = try LoggedChange(household: household, log: existing, replacing: try files.currentContents(vaultOutput), signer: key, action: .seal, at: now.time, diagnostics)
        let writer = files.writer()
        let madeEarlier = try writer.stageVault(vaultOutput, change.record(.init(.seal, summary: "sealed the vault from a document"), vault: sealed, revision: revision), log: logOutput)
        try writer.publish()
        if madeEarlier {
            diagnostics.note("an earlier run sealed this document\(revision.map { " (revision \($0))" } ?? ""); nothing changed")
        } else if let revision {
            diagnostics.note("sealed revision \(revision)")
        }
    }
}

struct Open: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open a vault file and write its document as JSON.",
        discussion: """
        The document comes out as stored (secret fields sealed) or, with --reveal-secrets, with \
        each child's nsec and the wrap key in the clear; that output is a secret (mode 0600, no \
        terminal unless --force). Revealing needs the parent key (--key-file or --key-command): \
        the vault key support holds opens the household's structure, never a child's key or \
        the wrap key (from schema version 3 it cannot; before, the tool does not).

        Examples:
          vault-tool open --key-file parent.nsec household.vault
          vault-tool open --vault-key-file household.vaultkey -o household.json \\
            household.vault
          vault-tool open --key-file parent.nsec --reveal-secrets -o edit.json \\
            household.vault
        """
    )

    @Flag(help: "Write the secrets in the clear (child nsec, parentWrapKey).")
    var revealSecrets = false

    @OptionGroup var output: OutputOptions

    @OptionGroup var vault: VaultInputOptions

    func validate() throws {
        try vault.access.requireOne()
    }

    func run() throws {
        // Before anything is read (a refusal from validate() would lose its code and hint).
        if revealSecrets { try vault.access.requireParentKey(for: "--reveal-secrets (each child's key, the wrap key)") }
        let documentOutput = output.declared(revealSecrets ? .secret : .text)
        let files = try CommandFiles(reads: vault.declaredInputs, writes: [documentOutput], force: output.force)
        let (access, opened, _) = try vault.open(diagnostics, reading: .showing)
        let document = revealSecrets ? try opened.document.revealed(with: access) : opened.document
        // Shown as every JSON output is (its invisible characters as \u escapes): the same
        // document to `seal`, which reads it back.
        try files.writer().write(documentOutput, JSONValue.escapingInvisibles(document.json()))
    }
}
