import ArgumentParser
import Glibc
import VaultCore
import VaultFiles

/// `--signer-key-file` or `--signer-key-command`: a key of the person making a change, which
/// signs it (a household log's event, a registry batch's record).
public struct SignerKeyOptions: ParsableArguments {
    @Option(name: .customLong("signer-key-file"), help: ArgumentHelp("Your own key (nsec1… or 64 hex; 'vault-tool keygen'), which signs the change: a schema 3 vault's household log event (the parent's key signs when it is the key given; a support key signs only what a grant in the log allows), or a registry batch's record.", valueName: "FILE"))
    public var signerKeyFile: String?

    @Option(name: .customLong("signer-key-command"), help: ArgumentHelp("Instead of --signer-key-file: a command (run without a shell) that prints your key.", valueName: "CMD"))
    public var signerKeyCommand: String?

    public init() {}

    public func validate() throws {
        if signerKeyFile != nil, signerKeyCommand != nil { throw ValidationError("give --signer-key-file or --signer-key-command, not both") }
        _ = try signerKeyCommand.map { try KeyCommand(parsing: $0, option: "--signer-key-command") }
    }

    public var declaredInputs: [FileSet.Input] { signerKeyFile.map { [FileSet.Input("--signer-key-file", $0)] } ?? [] }

    /// The key given, or nil.
    public func load(_ diagnostics: Diagnostics) throws -> SecretKey? {
        if let signerKeyCommand {
            return try SecretKey(parsing: try KeyCommand(parsing: signerKeyCommand, option: "--signer-key-command").read(), what: "the output of --signer-key-command")
        }
        if let signerKeyFile {
            let contents = try InputFiles.readSecret(signerKeyFile, what: "signer key file", diagnostics: diagnostics)
            return try SecretKey(parsing: contents, what: "signer key file \(InputFiles.quotedName(signerKeyFile))")
        }
        return nil
    }
}

/// The signer and `--log`: who signs a change to a schema 3 vault, and where its household log
/// is (docs/vault-format.md §10). Every command that changes a vault takes them, so every change
/// it makes to a schema 3 vault is signed by whoever made it.
public struct SignerOptions: ParsableArguments {
    @OptionGroup public var key: SignerKeyOptions

    @Option(name: .customLong("log"), help: ArgumentHelp("The vault's household log, when it is not beside the vault (household.vault → household.log).", valueName: "FILE"))
    public var log: String?

    public init() {}

    public var declaredInputs: [FileSet.Input] { key.declaredInputs }

    /// The signer's key: the one given, else the parent key when that is how the vault is
    /// opened; nil when neither (a vault-key holder who brought no key of their own).
    public func signer(_ access: VaultAccess, _ diagnostics: Diagnostics) throws -> SecretKey? {
        try key.load(diagnostics) ?? access.parentKey
    }

    /// The options given, as typed: said when a vault has no log to use them on.
    public var given: [String] {
        [key.signerKeyFile.map { _ in "--signer-key-file" }, key.signerKeyCommand.map { _ in "--signer-key-command" }, log.map { _ in "--log" }].compactMap { $0 }
    }

    /// Where the log of the vault at `vault` is: `--log`, else beside it; nil for standard input.
    public func logPath(ofVault vault: String) -> String? {
        log ?? (vault == "-" ? nil : LoggedVault.logPath(besideVault: vault))
    }
}

/// Why a command reads a vault, which says what it does with the household log kept beside a
/// schema 3 vault (``VaultLogFiles/readVault(_:logPath:restartsMigration:reading:)``).
public enum VaultReading: Sendable {
    /// To show or check it: a log that does not hold is said, as a warning.
    case showing
    /// To change it, or to verify its log itself (`log`, `check --log`): the log is held to
    /// its rules there, and a broken one refused with its reason.
    case verifyingLog
}

/// A writer's household logs: the one read beside its input vault and the one written beside its
/// output, declared with its other files before anything is read. Only a schema 3 vault has a
/// log; for older ones nothing is read or written.
public struct VaultLogFiles {
    /// How the log output is labelled in the write path.
    public static let outputLabel = "log"

    public let input: String?
    public let output: String?
    public let options: SignerOptions
    /// The vault is rewritten where it was read, and its log with it.
    let inPlace: Bool

    /// `vault` is the input vault's path, `output` the output vault's (nil for standard output;
    /// the same path in place).
    public init(_ options: SignerOptions, vault: String, output: String?) {
        self.options = options
        inPlace = output == vault
        input = options.logPath(ofVault: vault)
        // In place the log is replaced where it was read; a new vault gets its log beside it.
        if let output, output != "-" {
            self.output = output == vault ? input : LoggedVault.logPath(besideVault: output)
        } else {
            self.output = nil
        }
        declaredOutput = self.output.map { DeclaredOutput.householdLog($0) }
    }

    /// The log output, declared beside the vault's (nil for a vault on standard output).
    public let declaredOutput: DeclaredOutput?

    /// The log output as a command declares its outputs.
    public var declaredOutputs: [DeclaredOutput] { declaredOutput.map { [$0] } ?? [] }

    /// The log read, declared as an input (unless the vault is rewritten in place, and its log
    /// with it), so no output of the command may be it: `-o h` beside `h.vault` names the
    /// input's log `h.log` as its own, however the names are spelt.
    public var declaredInputs: [FileSet.Input] { input.flatMap { inPlace && $0 == output ? nil : [FileSet.Input("--log", $0)] } ?? [] }

    /// The log read beside a schema 3 vault (nil for older vaults): refused when missing.
    public func read(forVaultOf version: Int, vault: String) throws -> HouseholdLog? {
        guard version >= 3 else { return nil }
        guard let input else { throw VaultError.logPathNeeded() }
        return try Self.read(input, ofVault: vault, logOption: "--log")
    }

    /// A vault older than schema 3 has no log: one beside it (a household log, whoever's) says
    /// the vault was put back over its schema 3 successor, a downgrade that would make the
    /// next change unsigned (a hostile trial: support swapped a schema 2 copy in and revoked
    /// with no event). Refused as a broken log is (exit 3), by every reader and writer.
    /// A log is known by its first line, a household log event (kind 4801): a log damaged
    /// after it (a line added, its last newline cut) is still one.
    ///
    /// One such log is also what a migration to schema 3 in place leaves when it is cut off
    /// between publishing the log and the vault (``HouseholdLog/isCutOffMigration(over:household:)``):
    /// the refusal then says to run it again, and that migration run again (`restartsMigration`,
    /// the parent's own, in place) reads the vault, and begins the log anew: true. `vault`: the
    /// older vault's path and bytes, when read, and the revision it has migrated, once opened.
    @discardableResult
    public static func refuseLog(_ path: String, besideVaultOf version: Int, vault: (path: String, bytes: [UInt8], revision: Int?)? = nil,
                                 restartsMigration: Bool = false) throws -> Bool {
        guard version < 3, let bytes = try? InputFiles.readIfPresent(path, what: "household log"), isHouseholdLog(bytes) else { return false }
        let cutOff = vault.flatMap { vault in
            VaultHeader.household(inAnyHeader: vault.bytes).flatMap { household in
                (try? HouseholdLog(parsing: bytes))?.isCutOffMigration(over: vault.bytes, household: household, revision: vault.revision) == true
                    ? vault.path : nil
            }
        }
        if cutOff != nil, restartsMigration { return true }
        throw VaultError.olderVaultBesideLog(version, log: path, cutOffMigrationOf: cutOff)
    }

    /// A vault file's bytes, for every command that shows, checks or changes one (a restore
    /// that only confirms a key against a vault's header reads it itself): an older vault
    /// beside a household log is refused before anything else (``refuseLog(_:besideVaultOf:vault:restartsMigration:)``).
    /// `logPath`: the log named for it (`--log`); the one beside it is asked too (a hostile
    /// trial: `--log elsewhere` let a vault put back beside its log be revoked from, unsigned).
    /// `restartsMigration`: a migration to schema 3 in place by the parent, which may find its
    /// own cut-off run's log beside the vault, and begin it anew there.
    ///
    /// `reading`: a command that only shows or checks the vault (``VaultReading/showing``) says
    /// when the log beside a schema 3 vault does not hold; one that verifies the log itself (every
    /// change, `log`, `check --log`) refuses then, with the reason, and is not told twice.
    public static func readVault(_ path: String, logPath: String? = nil, restartsMigration: Bool = false, reading: VaultReading) throws -> [UInt8] {
        let bytes = try InputFiles.read(path, what: "vault")
        guard let version = LoggedVault.schemaVersion(Array(bytes.prefix(VaultEnvelope.headerByteCount))) else { return bytes }
        if version < 3 {
            try refuseLogs(besideVault: path, bytes, of: version, named: logPath, revision: nil, restartsMigration: restartsMigration)
        } else if reading == .showing {
            warnOfLog(logPath ?? (path == "-" ? nil : LoggedVault.logPath(besideVault: path)), ofVault: bytes, path: path)
        }
        return bytes
    }

    /// A log named with `--log` elsewhere does not silence the one beside the vault at `path`
    /// (bytes `input`), which every reader asks: when one is there, and is another file, a
    /// change refuses unless it holds for this vault too (a trial: an earlier vault put back
    /// beside its log was changed, exit 0, with the earlier log named by `--log`). A log there
    /// one event ahead (a run cut off) is left to the run that made it. Every writer given a
    /// `--log` calls this: ``LoggedChange``, `log grant` and `withdraw`, `seal`.
    ///
    /// Only a household log there counts (its first line an event of kind 4801: a script's own
    /// `backup.log` beside `backup.vault` is none, a review found it refused), and one the
    /// named log continues is its past (a change made in place through `--log` leaves it so).
    /// `namedLog`: the named log as the command read it (standard input is not read twice).
    public static func checkLogBeside(vault path: String, named: String?, namedLog: HouseholdLog?, input: [UInt8], household: HouseholdID) throws {
        guard let beside = logBeside(vault: path, otherThan: named),
              let bytes = try? InputFiles.readIfPresent(beside, what: "household log"), isHouseholdLog(bytes) else { return }
        do {
            let log = try HouseholdLog(parsing: bytes)
            if let namedLog, namedLog.events.starts(with: log.events) { return }
            _ = try log.verified(household: household, vault: input)
        } catch let error as VaultError where error.code == .logAheadOfVault {
            // A run cut off there: its signer finishes it, through that log.
        } catch let error as VaultError {
            throw error.withContext(prefix: "the household log beside the vault, \(FileNames.quoted(beside)), which --log does not name, does not hold for it: ")
        }
    }

    /// What `log verify` and `log show` with `--log` elsewhere say of the log beside the vault:
    /// the warning every command showing the vault gives (a trial: a vault put back, its
    /// earlier log named, verified "ok" without a word of the log beside it).
    public static func warnOfLogBeside(vault path: String, named: String?, input: [UInt8]) {
        guard let beside = logBeside(vault: path, otherThan: named) else { return }
        warnOfLog(beside, ofVault: input, path: path)
    }

    /// The log beside the vault at `path` when `--log` names another file (`named`), in any
    /// spelling, a link or a hard link to it included; nil when none is named or it is that one.
    public static func logBeside(vault path: String, otherThan named: String?) -> String? {
        guard let named, path != "-" else { return nil }
        let beside = keptLog(ofVault: path)
        guard beside != named, ResolvedPath(beside).map({ $0.path != ResolvedPath(named)?.path }) ?? true else { return nil }
        if let one = FileIdentity.of(existing: beside), one == FileIdentity.of(existing: named) { return nil }
        return beside
    }

    /// Where the log of the vault at `path` is kept: beside the name given, or, when none is
    /// there and the name is a symbolic link, beside the file it leads to (as `log verify`
    /// finds it; a trial: a writer given `--log` through a link to a vault put back went on).
    public static func keptLog(ofVault path: String) -> String {
        let beside = LoggedVault.logPath(besideVault: path)
        return linkedVaultWithLog(path, missing: beside).map { LoggedVault.logPath(besideVault: $0) } ?? beside
    }

    /// Whether `bytes` are a household log's, whole or damaged after its first line: that line
    /// is an event of kind 4801.
    static func isHouseholdLog(_ bytes: [UInt8]) -> Bool {
        let firstLine = bytes.prefix { $0 != 0x0a }
        return (try? JSONValue(parsing: Array(firstLine)))?["kind"] == .number(String(HouseholdLog.kind))
    }

    /// The warning a command showing a schema 3 vault gives when the household log kept for it
    /// is there and does not hold (a trial: `inspect`, `diff` and `rotation-planner plan` showed
    /// a vault changed without a signed event, its log beside it, without a word; `log verify`
    /// and every writer found it). A missing log is not said here: a copy handed over alone is
    /// still read, and every change refuses it.
    ///
    /// A log that cannot be read (a directory, a FIFO, one past the size a log may have) is
    /// said as one that does not hold (a trial: padded past 16 MiB, it silenced the warning),
    /// and a vault named through a symbolic link is held to the log beside the file it leads
    /// to when none is beside the name, as `log verify` finds it.
    static func warnOfLog(_ logPath: String?, ofVault bytes: [UInt8], path vault: String) {
        guard var path = logPath, let household = VaultHeader.household(inAnyHeader: bytes) else { return }
        do {
            if path == LoggedVault.logPath(besideVault: vault) { path = keptLog(ofVault: vault) }
            guard let logBytes = try InputFiles.readIfPresent(path, what: "household log") else { return }
            _ = try HouseholdLog(parsing: logBytes).verified(household: household, vault: bytes)
        } catch let error as VaultError {
            Diagnostics.ofThisTool.warning("the household log \(FileNames.quoted(path)) does not hold for this vault: \(error.reason)"
                                           + (error.hint.map { "; \($0)" } ?? "") + "; 'vault-tool log verify' says more")
        } catch {
            Diagnostics.ofThisTool.warning("the household log \(FileNames.quoted(path)) could not be verified for this vault")
        }
    }

    /// ``refuseLog(_:besideVaultOf:vault:restartsMigration:)`` of the log beside the older vault
    /// at `path` and of the one named for it, if another: true when the one beside is a cut-off
    /// migration's that this run begins anew (only where it is the log the run writes).
    @discardableResult
    static func refuseLogs(besideVault path: String, _ bytes: [UInt8], of version: Int, named: String?, revision: Int?,
                           restartsMigration: Bool) throws -> Bool {
        let beside = path == "-" ? nil : LoggedVault.logPath(besideVault: path)
        var restarted = false
        if let beside {
            restarted = try refuseLog(beside, besideVaultOf: version, vault: (path, bytes, revision),
                                      restartsMigration: restartsMigration && (named == nil || named == beside))
        }
        if let named, named != beside { try refuseLog(named, besideVaultOf: version, vault: (path, bytes, revision)) }
        return restarted
    }

    /// The household log at `path`, of the vault at `vault`: refused when there is none (a
    /// schema 3 vault without its log cannot say who changed it). Every reader of a log that
    /// must be there comes here.
    /// `logOption` is how the command names another place for it (`--log`), nil when it
    /// has none: the refusal's hint says only what the command takes.
    public static func read(_ path: String, ofVault vault: String, logOption: String?) throws -> HouseholdLog {
        guard let bytes = try InputFiles.readIfPresent(path, what: "household log") else {
            throw VaultError.logMissing(path, vault: vault, logOption: logOption, linkedTo: linkedVaultWithLog(vault, missing: path))
        }
        return try HouseholdLog(parsing: bytes)
    }

    /// The file a vault's name leads to through a symbolic link, when a household log is beside
    /// that file and not beside the name (a trial: `log verify h.vault`, a link into `data/`,
    /// said only that `h.log` was missing). Logs are looked for beside the name given, as the
    /// writers keep them (``refuseLogLinkedAway(_:vault:)``), so the refusal names the way out.
    private static func linkedVaultWithLog(_ vault: String, missing log: String) -> String? {
        guard log == LoggedVault.logPath(besideVault: vault), !VaultLocation.isObject(vault),
              let target = ResolvedPath(vault)?.path, let missing = ResolvedPath(log)?.path else { return nil }
        let there = LoggedVault.logPath(besideVault: target)
        guard there != missing, access(there, F_OK) == 0 else { return nil }
        return target
    }
}

/// One change to a vault, as its log records it: the log read and verified before the change,
/// the signer allowed; after it, the event that names the new bytes (a new log, begun by the
/// parent key, when a vault becomes schema 3).
public struct LoggedChange {
    public let household: HouseholdID
    /// The input vault's log, verified (nil before schema 3, or when none is needed).
    public let log: HouseholdLog?
    public let signer: SecretKey?
    public let time: Timestamp
    /// The log's last event, given up because its vault was never written (a run cut off): the
    /// new event names it (`dropped`), so the record keeps that it was.
    public private(set) var dropped: NostrEvent?
    /// `--signer-key-file`, `--log`, as given: a vault written below schema 3 uses none.
    private var givenForLog: [String] = []
    /// `--log` named for a vault older than schema 3, which has no log to read, where the log
    /// this change begins goes elsewhere (beside `-o`): said when it begins one.
    private var logOptionUnused: (input: Int, begun: String)?
    private var diagnostics: Diagnostics?

    /// Reads and verifies the log of the vault `opened` (bytes `input`), for a change `action`
    /// by the signer the options give. `readsLog: false` for a change that writes no schema 3
    /// vault from it (a migration down). `restartsMigration`: a migration to schema 3, which
    /// in place begins anew the log its own cut-off run left beside the older vault.
    public init(_ files: VaultLogFiles, vault path: String, opened: OpenedVault, input: [UInt8], access: VaultAccess,
                action: LogAction, at time: Timestamp, readsLog: Bool = true, restartsMigration: Bool = false, _ diagnostics: Diagnostics) throws {
        household = opened.header.householdID
        self.time = time
        signer = try files.options.signer(access, diagnostics)
        givenForLog = files.options.given
        self.diagnostics = diagnostics
        // A change that writes no log from it (a migration down) is still none of a household
        // that moved: its vault is a tombstone, or an old copy put back beside the log.
        // Migrated to schema 3, a vault keeps its revision; one of schema 1 has none, and gets 1.
        let migratedRevision = opened.document.revision ?? 1
        if opened.document.version < 3,
           try VaultLogFiles.refuseLogs(besideVault: path, input, of: opened.document.version, named: files.options.log, revision: migratedRevision,
                                        restartsMigration: restartsMigration && files.inPlace), let logInput = files.input {
            diagnostics.warning("the household log \(FileNames.quoted(logInput)) was begun by an earlier run of this migration, cut off before it replaced the vault (its one event names a vault that is not there); it is begun anew")
        }
        if opened.document.version < 3, let named = files.options.log, let begun = files.output, begun != named {
            logOptionUnused = (opened.document.version, begun)
        }
        if !readsLog, opened.document.version >= 3 {
            try VaultLogFiles.checkLogBeside(vault: path, named: files.options.log, namedLog: files.options.log.flatMap { $0 == "-" ? nil : try? InputFiles.readIfPresent($0, what: "household log") }.flatMap { try? HouseholdLog(parsing: $0) },
                                             input: input, household: household)
            try Self.checkLogLeftBehind(files, vault: path, input: input, household: household, diagnostics)
            givenForLog.removeAll { $0 == "--log" }  // used: the log left behind was read there
        }
        guard readsLog, let log = try files.read(forVaultOf: opened.document.version, vault: path) else {
            self.log = nil
            return
        }
        try VaultLogFiles.checkLogBeside(vault: path, named: files.options.log, namedLog: log, input: input, household: household)
        guard let signer else { throw VaultError.signerNeeded() }
        (self.log, dropped) = try Self.ready(log, household: household, vault: input, signer: signer, action: action, at: time, diagnostics)
    }


    /// A migration down writes no log, and leaves the record behind: what it writes must be
    /// the vault the record names. A log that does not verify with the vault refuses it (exit
    /// 3, as every change refuses it), so a vault changed with no signed event is not made a
    /// vault with no record of it (a hostile trial: `--log parent.nsec`, or another vault's
    /// log, passed with a warning about the output). With no log beside it, it goes on, saying
    /// so (a `--log` named and not there is refused, exit 3, as a mistyped name);
    /// a log one event ahead (a change cut off before its vault was written) names this vault
    /// in the event before, and is taken.
    private static func checkLogLeftBehind(_ files: VaultLogFiles, vault path: String, input: [UInt8], household: HouseholdID, _ diagnostics: Diagnostics) throws {
        guard let logPath = files.input, let bytes = try InputFiles.readIfPresent(logPath, what: "household log") else {
            // A log named with --log and not there is a mistyped name, not a vault without one.
            if let named = files.options.log { throw VaultError.logMissing(named, vault: path, logOption: "--log") }
            diagnostics.warning("the schema 3 vault has no household log\(files.input.map { " at \(FileNames.quoted($0))" } ?? ""): who changed it cannot be told; the vault written has no log either")
            return
        }
        let log = try HouseholdLog(parsing: bytes)
        if log.endsWithRotation { throw VaultError.householdMoved() }
        do {
            _ = try log.verified(household: household, vault: input)
        } catch let error as VaultError where error.code == .logAheadOfVault {}
    }

    /// The log verified for the change, and the event given up if any (said on standard error).
    private static func ready(_ log: HouseholdLog, household: HouseholdID, vault: [UInt8], signer: SecretKey, action: LogAction, at time: Timestamp,
                              _ diagnostics: Diagnostics) throws -> (HouseholdLog, NostrEvent?) {
        // The vault key is handed to support staff and opens the vault for all of them: a
        // change it signed would be nobody's.
        // (The parent key is the household's own, never its vault key: no second decryption.)
        guard Household(parentPublicKey: signer.publicKey).id == household || !Vault.isVaultKey(signer, of: vault) else { throw VaultError.vaultKeyAsSigner() }
        let ready = try log.readyForChange(household: household, vault: vault, signer: signer.publicKey, action: action, at: time, clock: currentTime())
        if let dropped = ready.dropped {
            diagnostics.warning("the log's last event (\(dropped.idHex.prefix(12))…, yours: \(RecordedText.named(dropped.content, what: "a sentence"))) names a vault that was never written; it is given up, and this change's event names it")
        }
        return (ready.log, ready.dropped)
    }

    /// A change with no vault read before it (`seal`): the log is `log` (verified against the
    /// vault it replaces), or a new one (also over a log an earlier run of the same seal began
    /// and was cut off before its vault was written).
    public init(household: HouseholdID, log: HouseholdLog?, replacing current: [UInt8]?, signer: SecretKey, action: LogAction, at time: Timestamp,
                _ diagnostics: Diagnostics) throws {
        self.household = household
        self.time = time
        self.signer = signer
        guard let log, !log.isUnwrittenStart(by: signer.publicKey, household: household, vault: current) else {
            self.log = nil
            return
        }
        guard let current else { throw VaultError.logWithoutItsVault() }
        (self.log, dropped) = try Self.ready(log, household: household, vault: current, signer: signer, action: action, at: time, diagnostics)
    }

    /// The vault and its log after the change (`vault`, at `revision`): an event appended, the
    /// log unchanged when the bytes are the input's, a new log when the vault just became
    /// schema 3, no log below it.
    public func record(_ change: HouseholdLog.Change, vault: [UInt8], revision: Int?) throws -> LoggedVault {
        guard let version = LoggedVault.schemaVersion(vault), version >= 3 else {
            if !givenForLog.isEmpty {
                diagnostics?.warning("\(givenForLog.joined(separator: " and ")) not used: a schema \(LoggedVault.schemaVersion(vault).map(String.init) ?? "") vault has no household log (schema 3 has)")
            }
            return try LoggedVault(vault: vault, log: nil)
        }
        guard let signer else { throw VaultError.signerNeeded() }
        // Unchanged bytes keep the log as it is, unless an event was given up: then the new event
        // is written all the same, so the record says it was, and names no device (a change
        // naming the vault before it changed nothing: `log verify` holds it to that).
        let changedNothing = log?.head?.tag("vault") == HouseholdLog.vaultDigest(vault)
        if let log, dropped == nil, changedNothing { return try LoggedVault(vault: vault, log: log) }
        if log == nil, Household(parentPublicKey: signer.publicKey).id != household { throw VaultError.logStartsWithParent() }
        if log == nil, let unused = logOptionUnused {
            diagnostics?.warning("--log not used: a schema \(unused.input) vault has no household log to read; the log this change begins is written beside its vault, at \(FileNames.quoted(unused.begun))")
        }
        let recorded = HouseholdLog.Change(change.action, summary: change.summary, reason: change.reason,
                                           details: change.details.filter { !changedNothing || $0.first != "device" } + (dropped.map { [["dropped", $0.idHex]] } ?? []))
        return try LoggedVault(vault: vault, log: (log ?? HouseholdLog(events: [])).appending(
            recorded, household: household, vault: vault, revision: revision ?? 0, signer: signer, at: time))
    }
}

extension OutputWriter {
    /// Stages a vault and, from schema 3, its log (first: a log whose last event's vault was
    /// never written is mended by the next run; a vault without its event is not). True when
    /// nothing was staged because an earlier run made the same change there: the command then
    /// reports it as that run's, not its own (a trial: "added …" and `"unchanged": false`).
    @discardableResult
    public func stageVault(_ output: DeclaredOutput, _ vault: LoggedVault, log logOutput: DeclaredOutput?) throws -> Bool {
        if let log = vault.log {
            guard let logOutput, isDeclared(logOutput) else { throw VaultError.vaultWithoutItsLog() }
            try VaultLogFiles.refuseLogLinkedAway(logOutput.path, vault: output.path)
            // A log is replaced only by one that keeps all of it (HouseholdLog.mayReplace): the
            // log there may be another household's, or an earlier life of this one, beside an
            // output named by hand.
            if let existing = try currentContents(logOutput) {
                let vaultThere = try currentContents(output)
                // The same change run again after it finished, or after a cut-off run published
                // its log and vault (a trial: exit 4, and its --ops never written again): done.
                // Both are kept as they are, and whatever else the run writes is written.
                if try log.findsEarlierRun(over: existing, vaultThere: vaultThere, at: displayName(logOutput)) {
                    Diagnostics.ofThisTool.note("the household log at '\(displayName(logOutput))' already records this change, made by the same key, "
                                                + "and the vault at '\(displayName(output))' is the one it names: the change was made by an earlier run; both are kept as they are")
                    return true
                }
            }
            try stage(logOutput, log.bytes)
        }
        try stage(output, vault: vault.vault)
        return false
    }
}

extension VaultLogFiles {
    /// Whether an earlier run already made the change `vault` records, to this output: what a
    /// dry run says instead of what it would do, as the real run would find it
    /// (``OutputWriter/stageVault(_:_:log:)``; a trial: a dry run of an add already made said
    /// "would have added" where the real run changes nothing). A log there that the real run
    /// would not keep refuses the dry run as it refuses the real one (exit 4), in place too (a
    /// trial: `migrate --to 3 --in-place --dry-run` beside a junk log passed).
    /// The command declares both outputs for its dry run, so what the real run would refuse
    /// there (a folder, a FIFO) is refused before; what cannot be read (a log past the size a
    /// file may be) refuses it as the real run's read does.
    /// A schema 3 vault bound for standard output is refused as its real run's staging refuses
    /// it (``OutputWriter/stageVault(_:_:log:)``: no log can go with it).
    public func madeEarlier(_ change: LoggedChange, output vaultOutput: String?, _ vault: LoggedVault) throws -> Bool {
        if change.log != nil, vaultOutput == "-" { throw VaultError.vaultWithoutItsLog() }
        guard change.signer != nil, let vaultOutput, vaultOutput != "-", let output,
              let existing = try InputFiles.readIfPresent(output, what: "household log"),
              let log = vault.log else { return false }
        let vaultThere = try InputFiles.readIfPresent(vaultOutput, what: "vault")
        return try log.findsEarlierRun(over: existing, vaultThere: vaultThere, at: output)
    }
}

extension CommandFiles {
    /// What the real run's staging of `vault` at `output` (``OutputWriter/stageVault(_:_:log:)``)
    /// would find there, asked by a dry run given that output, in the same order: a schema 3
    /// vault with no place for its log (standard output) refused, a log there of another change
    /// refused, or of this one made by an earlier run (true: the real run changes nothing);
    /// then what staging the vault would refuse (``refuseStaging(_:_:)``). Every command's dry
    /// run asks this one question (a trial: `migrate --dry-run` asked only the last part, and
    /// passed what its real run refused with exit 4).
    public func rehearseStagingVault(_ output: DeclaredOutput, _ vault: LoggedVault, logs: VaultLogFiles, change: LoggedChange) throws -> Bool {
        if vault.log != nil, output.path == nil || logs.declaredOutput == nil { throw VaultError.vaultWithoutItsLog() }
        if vault.log != nil { try VaultLogFiles.refuseLogLinkedAway(logs.output, vault: output.path) }
        if try logs.madeEarlier(change, output: output.path ?? "-", vault) { return true }
        try refuseStaging(output, vault.vault)
        return false
    }
}

extension VaultLogFiles {
    /// A log named beside its vault is written beside the file the vault is written to, however
    /// links lead: a symbolic link at either name that parts them is refused, before anything
    /// there is read. Hostile trials: `out.log` linked to another vault's log was taken for this
    /// change's earlier run and replaced through the link; `out.vault` linked to another vault
    /// replaced it and left its log naming nothing (`-o` naming that vault itself is refused for
    /// the log beside it). A pair linked alike (`h.vault` and `h.log` into one folder) is one
    /// vault; a log named with `--log` is the user's to place.
    static func refuseLogLinkedAway(_ log: String?, vault: String?) throws {
        // An object has no links: its log is beside it by name.
        guard let log, let vault, log == LoggedVault.logPath(besideVault: vault), !VaultLocation.isObject(vault) else { return }
        var info = stat()
        let logIsLink = lstat(log, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
        let logTarget = ResolvedPath(log)?.path
        guard let vaultTarget = ResolvedPath(vault)?.path else {
            if logIsLink { throw VaultError.logLinkedAway(log, logTarget, vault: vault, nil) }
            return
        }
        if logTarget != LoggedVault.logPath(besideVault: vaultTarget) { throw VaultError.logLinkedAway(log, logTarget, vault: vault, vaultTarget) }
    }
}

extension HouseholdLog {
    /// What the log `existing`, already where this one goes (`path`), means for a run: this
    /// change made by an earlier run (true), a log this one keeps and replaces (false), or one
    /// it would not keep (refused). The real run (``OutputWriter/stageVault(_:_:log:)``) and
    /// its dry run (``VaultLogFiles/madeEarlier(_:output:_:)``) ask it alike.
    func findsEarlierRun(over existing: [UInt8], vaultThere: [UInt8]?, at path: String) throws -> Bool {
        if recordsSameChangeDone(existing, vaultThere: vaultThere) { return true }
        guard mayReplace(existing, vaultThere: vaultThere) else { throw VaultError.newLogOverAnother(path) }
        return false
    }
}

extension InputFiles {
    /// Reads an input that may be absent: nil when nothing is at its name.
    public static func readIfPresent(_ path: String, what: String, limit: Int = InputLimits.document) throws -> [UInt8]? {
        if let name = try object(path, what: what) {
            guard try ObjectStores.shared(for: name).currentVersion(name) != nil else { return nil }
        } else if path != "-" {
            var info = stat()
            if lstat(path, &info) != 0, errno == ENOENT { return nil }
        }
        return try read(path, what: what, limit: limit)
    }
}

extension VaultError.Code {
    /// A schema 3 vault on standard input, its log not named.
    public static let logPathNeeded = VaultError.Code(name: "logPathNeeded", category: .usage)
    /// A change to a schema 3 vault with no key to sign it.
    public static let signerNeeded = VaultError.Code(name: "signerNeeded", category: .usage)
    /// A vault and the log named beside it lead, through a link, to files not side by side.
    public static let logLinkedAway = VaultError.Code(name: "logLinkedAway", category: .refused)
}

extension VaultError {
    static func logPathNeeded(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.logPathNeeded, "a schema 3 vault read from standard input needs its household log named", hint: "give --log FILE", file: file, line: line)
    }

    /// `linkedTo`: the file the vault's name leads to through a symbolic link, when its log is
    /// beside that file.
    package static func logMissing(_ path: String, vault: String, logOption: String?, linkedTo target: String? = nil,
                                   file: String = #fileID, line: UInt = #line) -> VaultError {
        let elsewhere = logOption.map { "if the log is elsewhere, give \($0) FILE; " } ?? "if the log is elsewhere, put it there; "
        if let target {
            return VaultError(.logBroken, "the schema 3 vault has no household log at '\(path)': who changed it cannot be told; "
                              + "its name leads through a symbolic link to \(FileNames.quoted(target)), whose log is beside it",
                              hint: "name the vault by the path of its own file: \(ShellWord.path(target))", file: file, line: line)
        }
        // `--log S3://…`: a log is a file on this machine, and a URL was meant (a review).
        if VaultLocation.isSpelledAsURL(path) {
            return VaultError(.logBroken, "the schema 3 vault has no household log at '\(path)': who changed it cannot be told",
                              hint: VaultError.urlAsLocalPath(path, what: "the log").hint, file: file, line: line)
        }
        return VaultError(.logBroken, "the schema 3 vault has no household log at '\(path)': who changed it cannot be told",
                   hint: "\(elsewhere)if this vault never had one, the parent starts it: vault-tool log start --key-file PARENT.nsec \(ShellWord.path(vault))",
                   file: file, line: line)
    }

    /// `cutOffMigrationOf`: the vault's path, when the log is one a migration to schema 3 in
    /// place left beside it, cut off (``HouseholdLog/isCutOffMigration(over:household:)``).
    static func olderVaultBesideLog(_ version: Int, log path: String, cutOffMigrationOf vault: String? = nil, file: String = #fileID, line: UInt = #line) -> VaultError {
        let putBack = "a schema \(version) vault beside the household log \(FileNames.quoted(path)): logs begin with schema 3, so this vault was put back over the one the log records"
        let restore = "restore the vault the log's last event names (vault-tool log show), or, if it was moved back to schema \(version) on purpose, move the log away first"
        guard let vault else { return VaultError(.logBroken, putBack + "; nothing was changed", hint: restore, file: file, line: line) }
        return VaultError(.logBroken, putBack + ", or a migration to schema 3 in place was cut off before it replaced the vault (the log's one event is that migration); nothing was changed",
                          hint: "if it was cut off, run it again: vault-tool migrate vault --key-file PARENT.nsec --to 3 --in-place \(ShellWord.path(vault)); otherwise \(restore)",
                          file: file, line: line)
    }

    static func newLogOverAnother(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outputExists, "a household log is already at '\(path)', and the log this change writes would not keep it; nothing was written",
                   hint: "that log is another household's, or the record of an earlier life of this vault: move it aside, keeping it, or write the vault elsewhere", file: file, line: line)
    }

    static func logLinkedAway(_ log: String, _ logTarget: String?, vault: String, _ vaultTarget: String?, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.logLinkedAway, "the vault \(FileNames.quoted(vault)) and its household log \(FileNames.quoted(log)) lead, through a symbolic link, to files not side by side "
                   + "(the vault to \(vaultTarget.map(FileNames.quoted) ?? "nothing"), the log to \(logTarget.map(FileNames.quoted) ?? "nothing")): a log there may be another vault's; nothing was written",
                   hint: "name the vault by the path of its own file, or link its log beside it alike; the files the links lead to are kept", file: file, line: line)
    }

    static func logStartsWithParent(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.signerNotAllowed, "a household log begins with an event the parent key signs, and the signer is not the parent", file: file, line: line)
    }

    static func logWithoutItsVault(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.logBroken, "a household log is there but not the vault it names: the vault is not where its log is", file: file, line: line)
    }

    static func vaultKeyAsSigner(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.signerNotAllowed, "the signer key given is this vault's vault key, which everyone it was handed to holds: a change it signed would say nobody made it; nothing was written",
                   hint: "sign with your own key (vault-tool keygen), which the parent grants with 'vault-tool log grant'", file: file, line: line)
    }

    static func signerNeeded(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.signerNeeded, "a change to a schema 3 vault is signed by whoever makes it, and no key to sign with was given",
                   hint: "give --signer-key-file YOUR.nsec (your own key, which the parent grants with 'vault-tool log grant'), or the parent's --key-file", file: file, line: line)
    }
}

extension VaultError {
    /// A log to be started where one is: a signed record is never moved aside to start
    /// another (a trial: after a `log start` that finished as it was killed, the run again said
    /// "move the old file away first").
    static func householdLogExists(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outputExists, "\(FileNames.quoted(path)) is there already: a household log is started once, and never replaced",
                   hint: "check it with 'vault-tool log verify'; a log that verifies is the household's, and there is nothing to start", file: file, line: line)
    }
}

extension DeclaredOutput {
    /// A household log's output: text, which may replace a log (``isHouseholdLog``).
    public static func householdLog(_ path: String?, label: String = VaultLogFiles.outputLabel, exclusive: Bool = false, createFolders: Bool = false,
                                    namedByTool: Bool = false) -> DeclaredOutput {
        var log = DeclaredOutput(label, path, kind: .text, exclusive: exclusive, createFolders: createFolders, namedByTool: namedByTool)
        log.isHouseholdLog = true
        return log
    }
}
