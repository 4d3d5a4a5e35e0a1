import ArgumentParser
import CLISupport
import VaultCore
import VaultFiles
import VaultFleet

/// `migrate vault` (or `migrate` with one vault's options): one vault, a file or an object, to
/// `-o` or in place.
struct MigrateVault: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Migrate one vault (a file, standard input or s3://BUCKET/KEY).",
        discussion: """
        Up (1 → 2) keeps every value. Down (2 → 1) is refused when the vault holds anything v1 \
        cannot carry, unless --allow-lossy, which then lists exactly what was dropped. What is \
        written is opened again and compared with what was meant before anything is replaced; \
        --in-place keeps a backup unless --no-backup. A vault may be an object, \
        s3://BUCKET/KEY (docs/object-storage.md). The word vault may be left out: \
        'vault-tool migrate --key-file …' is this command.

        Examples:
          vault-tool migrate vault --key-file parent.nsec --to 2 \\
            -o household.v2.vault household.vault
          vault-tool migrate vault --key-file parent.nsec --to 2 --dry-run \\
            household.vault
          vault-tool migrate vault --vault-key-file vk --to 2 --in-place \\
            --expect-revision 0 household.vault
          vault-tool migrate --key-file parent.nsec --to 2 --dry-run household.vault
        """
    )

    @OptionGroup var target: MigrationTargetOptions

    @Flag(help: "With --dry-run: print the report as JSON.")
    var json = false

    @Flag(help: "Downgrade even when values would be lost; each dropped value is listed.")
    var allowLossy = false

    @Option(help: ArgumentHelp("Refuse (exit 4) unless the vault is at this revision (a v1 vault counts as 0).", valueName: "N"), transform: expectedRevision)
    var expectRevision: Int?

    @Flag(help: "Replace the input file itself (a backup is kept unless --no-backup).")
    var inPlace = false

    @Option(help: ArgumentHelp("With --in-place: the backup's suffix.", valueName: "SUFFIX"))
    var backup = ".bak"

    @Flag(help: "With --in-place: keep no backup.")
    var noBackup = false

    @OptionGroup var output: OutputOptions

    @OptionGroup var vault: VaultInputOptions

    @OptionGroup var log: LogFormatOption

    @OptionGroup var signer: SignerOptions

    @OptionGroup var now: RecordedNowOption

    func validate() throws {
        try vault.access.requireOne()
        if inPlace {
            guard vault.input != "-" else { throw ValidationError("--in-place needs a vault file, not standard input") }
            guard !noBackup || backup == ".bak" else { throw ValidationError("give --backup or --no-backup, not both") }
            guard noBackup || (!backup.isEmpty && !backup.contains("/")) else {
                throw ValidationError("--backup is a suffix for the vault's own name, not empty and without a '/'")
            }
            guard output.output == nil else { throw ValidationError("give -o or --in-place, not both") }
        }
        if json, !target.dryRun { throw ValidationError("--json goes with --dry-run") }
    }

    func run() throws {
        log.apply()
        // Before anything is read (a refusal from validate() would lose its code and hint).
        if Migration.needsParentKey(target.to) { try vault.access.requireParentKey(for: "a migration to schema version \(target.to)") }
        let to = target.to
        // In place, the vault is the output by request; its backup and it are published in that
        // order, so the old bytes are safe before they are replaced.
        var backupOutput = DeclaredOutput("backup", vault.input + backup, kind: .binary, exclusive: true, namedByTool: true)
        backupOutput.copiesModeOf = vault.input
        // A backup already there refuses a migration, but not a run that changes nothing: run
        // again after a migration that finished (its note unwritten: 2>/dev/full), the vault is
        // at its version and the command says so, exit 0, where it refused on its own backup.
        var backupInTheWay: VaultError?
        if inPlace, !noBackup, backupOutput.fileExistsNow { backupInTheWay = backupOutput.existsError }
        // From schema 3 the vault's household log goes with it: begun by the migration to 3,
        // carried by one that changes nothing.
        let logs = VaultLogFiles(signer, vault: vault.input, output: inPlace ? vault.input : output.output)
        let vaultOutput = inPlace ? DeclaredOutput("vault", vault.input, kind: .binary) : output.declared(.binary)
        let files = inPlace
            ? try CommandFiles(reads: vault.access.declaredInputs + signer.declaredInputs + logs.declaredInputs,
                               writes: (noBackup || backupInTheWay != nil ? [] : [backupOutput]) + [vaultOutput] + logs.declaredOutputs)
            : try CommandFiles(reads: vault.declaredInputs + signer.declaredInputs + logs.declaredInputs, writes: [vaultOutput] + logs.declaredOutputs, force: output.force)
        // Run again after a kill between its log and its vault, a migration to schema 3 in
        // place finds the older vault beside its own log's start, which it begins anew.
        let restartsMigration = inPlace && to >= 3
        let (access, opened, input) = try vault.open(diagnostics, restartsMigration: restartsMigration, reading: .verifyingLog)
        let outcome = try VaultMigration.migrate(input, access: access, to: to, allowLossy: allowLossy, expectRevision: expectRevision,
                                                  logVerified: true)  // LoggedChange, below, verifies it
        let change = try LoggedChange(logs, vault: vault.input, opened: opened, input: input, access: access, action: .migrate, at: now.time,
                                      readsLog: to >= 3 && opened.document.version >= 3, restartsMigration: restartsMigration, diagnostics)
        let logged = try change.record(.init(.migrate, summary: "migrated the vault from schema version \(outcome.report.from) to \(outcome.report.to)"),
                                       vault: outcome.bytes, revision: try Vault.open(outcome.bytes, with: access).document.revision)
        // A backup that holds the vault as it is now is this migration's own, made by a run cut
        // off before it replaced the vault (a kill at its rename): kept, and the run finishes.
        // Its own file, not the vault under another name (a link): a regular file of one link.
        var backupIsOurs = false
        if backupInTheWay != nil, let path = backupOutput.path, AtomicFile.isLoneRegularFile(path), (try? InputFiles.read(path, what: "backup")) == input {
            (backupInTheWay, backupIsOurs) = (nil, true)
        }
        if let backupInTheWay, !outcome.unchanged { throw backupInTheWay }
        let report = outcome.report
        for loss in report.losses { diagnostics.warning("dropped: \(loss)") }

        guard let writer = files.writer(unlessDryRun: target.dryRun) else {
            // Given its output, a dry run is refused where its real run's staging would be (a
            // schema 3 vault on standard output, a log there of another change, another
            // household's vault). In place, a vault already at its version is not staged. (A
            // migration is never found made by an earlier run: one to schema 3 begins a log,
            // which HouseholdLog.recordsSameChangeDone never takes for a change done.)
            if inPlace ? !outcome.unchanged : output.output != nil {
                _ = try files.rehearseStagingVault(vaultOutput, logged, logs: logs, change: change)
            }
            let text = json ? String(decoding: reportJSON(report).reported(), as: UTF8.self) : reportText(report)
            try StandardStreams.writeOutput(Array(text.utf8))
            return
        }
        if inPlace {
            guard !outcome.unchanged else {
                diagnostics.note("\(vault.input) is already at version \(to); nothing changed")
                return
            }
            if !noBackup, !backupIsOurs { try writer.stage(backupOutput, input) }
        }
        let madeEarlier = try writer.stageVault(vaultOutput, logged, log: logs.declaredOutput)
        try writer.publish()
        diagnostics.note(outcome.unchanged
            ? "household \(outcome.household.shortHex)… is already at version \(to); written unchanged"
            : madeEarlier ? "household \(outcome.household.shortHex)… was migrated from version \(report.from) to \(report.to) by an earlier run; nothing changed"
            : "household \(outcome.household.shortHex)… migrated from version \(report.from) to \(report.to)")
        // Schema 3 keeps the children's keys from the vault key; the backup of an older vault
        // does not (a hostile trial: the vault key alone opened them from the .bak beside it).
        if inPlace, !noBackup, !outcome.unchanged, report.from < 3, report.to >= 3 {
            diagnostics.warning("the backup \(ShellWord.path(backupOutput.displayName)) is the schema \(report.from) vault: the vault key support holds opens every child's key in it; once the migrated vault is checked, remove it: rm \(ShellWord.path(backupOutput.displayName))")
        }
    }

    private func reportText(_ report: Migration.Report) -> String {
        if report.from == report.to { return "already at version \(report.to): nothing would change\n" }
        var text = "would migrate from version \(report.from) to \(report.to):\n"
        for change in report.changes { text += "  change: \(change)".displaySafe + "\n" }
        for loss in report.losses { text += "  lose:   \(loss)".displaySafe + "\n" }
        return text
    }
}
