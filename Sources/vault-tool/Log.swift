import ArgumentParser
import CLISupport
import VaultCore
import VaultFiles

/// `log`: the signed household log beside a schema 3 vault (docs/vault-format.md §10).
struct Log: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show, verify, start and grant in a schema 3 vault's signed household log.",
        discussion: """
        Every change the suite makes to a schema 3 vault is a Nostr event in the log beside it \
        (household.vault → household.log), signed by whoever made it: the parent key, or a \
        support key that a grant from the parent allows. Verifying needs no secret at all.
          show      who did what, when (verified first)
          verify    the whole chain, offline, with public keys only (exit 3 naming the first bad event)
          start     begin the log of a schema 3 vault that has none (the parent key)
          grant     allow a support key some actions until a date (the parent key)
          withdraw  take a grant back (the parent key)

        Examples:
          vault-tool log verify household.vault
          vault-tool log show household.vault
          vault-tool log grant --key-file parent.nsec --to npub1… --allow revoke \\
            --until 2026-12-31 household.vault
        """,
        subcommands: [LogShow.self, LogVerify.self, LogStart.self, LogGrant.self, LogWithdraw.self]
    )
}

/// The vault a log command reads, and its log.
struct LogInputOptions: ParsableArguments {
    @Option(name: .customLong("log"), help: ArgumentHelp("The household log, when it is not beside the vault (household.vault → household.log).", valueName: "FILE"))
    var log: String?

    @Argument(help: ArgumentHelp("The vault file (or s3://BUCKET/KEY).", valueName: "VAULT"))
    var vault: String

    func validate() throws {
        if vault == "-", log == nil { throw ValidationError("a vault on standard input needs its log named with --log FILE") }
        if vault == "-", log == "-" { throw ValidationError("only one input may read standard input ('-')") }
    }

    var logPath: String { log ?? LoggedVault.logPath(besideVault: vault) }

    var declaredInputs: [FileSet.Input] { [FileSet.Input("vault", vault), FileSet.Input("--log", logPath)] }

    /// The vault's bytes, its household and its log, verified.
    /// `changing`: a grant or withdrawal, which the log beside the vault holds to as well when
    /// `--log` names another (``VaultLogFiles/checkLogBeside(vault:named:namedLog:input:household:)``).
    func readVerified(changing: Bool = false) throws -> (vault: [UInt8], household: HouseholdID, log: HouseholdLog, verified: HouseholdLog.Verified) {
        let bytes = try VaultLogFiles.readVault(vault, logPath: logPath, reading: .verifyingLog)
        let header = try VaultHeader(parsing: bytes.prefix(VaultEnvelope.headerByteCount))
        guard header.schemaVersion >= 3 else { throw VaultError.noLogBeforeSchema3(Int(header.schemaVersion)) }
        let read = try VaultLogFiles.read(logPath, ofVault: vault, logOption: "--log")
        if changing {
            try VaultLogFiles.checkLogBeside(vault: vault, named: log, namedLog: read, input: bytes, household: header.householdID)
        } else {
            VaultLogFiles.warnOfLogBeside(vault: vault, named: log, input: bytes)
        }
        return (bytes, header.householdID, read, try read.verified(household: header.householdID, vault: bytes))
    }
}

struct LogVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a vault's household log, offline, with public keys only.",
        discussion: """
        Checks every event's id and signature, that each follows the one before it, that each is \
        signed by the parent key or by a support key a grant allowed at that time, and that the \
        vault is the one the last event names. Exit 0 when all of it holds; 3 naming the first \
        bad event when not (an edited, forged, reordered, cut or forked log, or a vault changed \
        without its event). With --expect-event, an event whose id was kept elsewhere must \
        still be in the log: a vault and log put back together to an earlier state verify \
        otherwise (docs/vault-format.md §10.3).

        Examples:
          vault-tool log verify household.vault
          vault-tool log verify --json --log copies/household.log household.vault
        """
    )

    @OptionGroup var input: LogInputOptions

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Option(help: ArgumentHelp("An event id kept elsewhere (12 characters or more, as the notes print it: a grant's or a withdrawal's, say), which the log must still hold: a log and vault put back together to before it fail (repeatable).", valueName: "ID"))
    var expectEvent: [String] = []

    func run() throws {
        _ = try CommandFiles(reads: input.declaredInputs, writes: [])
        // Checked before anything is read: a malformed id is a usage error, not a tampering.
        let expected = try expectEvent.map { try hexIDOption("--expect-event", $0) }
        let household: HouseholdID, verified: HouseholdLog.Verified
        do {
            (_, household, _, verified) = try input.readVerified()
            // An id as the tools print it (12 characters or more) or whole.
            for id in expected {
                if !verified.entries.contains(where: { $0.event.idHex.hasPrefix(id) }) { throw VaultError.expectedEventMissing(id) }
            }
        } catch let error as VaultError where json {
            // A failed verification is a result too, as `check --json` gives one: a script reads
            // `ok` on standard output whatever happened, and the error on standard error.
            try? StandardStreams.writeOutput(JSONValue.object([("ok", .bool(false)), ("error", .string(error.code.name)),
                                                               ("message", .string(SecretRedaction.redacting(error.reason)))]).reported())
            throw error
        }
        let head = verified.head
        if json {
            try StandardStreams.writeOutput(JSONValue.object([
                ("ok", .bool(true)), ("household", .string(household.hex)), ("events", .int(verified.entries.count)),
                ("head", .string(head.event.idHex)), ("revision", .int(head.revision)),
            ]).reported())
        } else {
            try StandardStreams.writeOutput(Array("ok: \(counted(verified.entries.count, "event")) signed and linked; the vault is the last one's (revision \(head.revision), event \(head.event.idHex.prefix(12))…)\n".utf8))
        }
    }
}

struct LogShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show who changed a vault, what and when, from its verified household log.",
        discussion: """
        One line an event, oldest first: when (UTC), who signed it (the parent, or a support \
        key and the label its grant gave it), what was done and why. The log is verified first \
        (as 'log verify'); a broken one is shown not at all.

        Examples:
          vault-tool log show household.vault
          vault-tool log show --json household.vault | jq -r '.[] | .action'
        """
    )

    @OptionGroup var input: LogInputOptions

    @Flag(help: "Print the events as JSON.")
    var json = false

    func run() throws {
        _ = try CommandFiles(reads: input.declaredInputs, writes: [])
        let (_, _, _, verified) = try input.readVerified()
        let grants = Dictionary(verified.grants.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func who(_ entry: HouseholdLog.Entry) -> String {
            switch entry.signer {
            case .parent: "parent"
            case .support(let grant): "support \(entry.event.pubkey.npub.prefix(16))…" + (grants[grant]?.label.map { " (\(RecordedText.named($0)))" } ?? "")
            }
        }
        // What the event's tags name beside its sentence, which is the signer's own words (a
        // trial's support-signed sentence said "revoked Kitchen iPad" over tags naming nothing
        // but an event given up): the devices it changed, and the event it gave up.
        func devices(_ entry: HouseholdLog.Entry) -> [String] { entry.event.tags(named: "device").compactMap(\.first).map { RecordedText.named($0) } }
        if json {
            try StandardStreams.writeOutput(JSONValue.array(verified.entries.map { entry in
                .object([("event", .string(entry.event.idHex)), ("time", .string(Timestamp(seconds: entry.event.createdAt).rfc3339)),
                         ("signer", .string(entry.event.pubkey.npub)), ("role", .string(entry.signer == .parent ? "parent" : "support")),
                         ("action", .string(entry.action.rawValue)), ("summary", .string(RecordedText.named(entry.event.content))),
                         ("reason", entry.event.tag("reason").map { .string(RecordedText.named($0)) } ?? .null), ("revision", .int(entry.revision)),
                         ("devices", .array(devices(entry).map(JSONValue.string))), ("dropped", entry.event.tag("dropped").map(JSONValue.string) ?? .null)])
            }).reported())
            return
        }
        // The writers keep no secret in a record; a log written by other means may, and what it
        // records is shown withheld then (a hostile trial: a forged grant's label showed an nsec).
        var table = TextTable()
        for entry in verified.entries {
            let reason = entry.event.tag("reason").map { " (why: \(RecordedText.named($0)))" } ?? ""
            let named = devices(entry)
            let facts = (named.isEmpty ? "" : " [\(named.count == 1 ? "device" : "devices") \(named.joined(separator: ", "))]")
                + (entry.event.tag("dropped").map { " [gave up event \($0.prefix(12))…]" } ?? "")
            table.add(Timestamp(seconds: entry.event.createdAt).rfc3339, who(entry), RecordedText.named(entry.event.content) + reason + facts,
                      "revision \(entry.revision)")
        }
        try StandardStreams.writeOutput(Array(table.render().utf8))
    }
}

/// The parent key, the vault and its log: what start, grant and withdraw share.
struct LogParentOptions: ParsableArguments {
    @OptionGroup var key: ParentKeyOption
    @OptionGroup var input: LogInputOptions
    @OptionGroup var now: RecordedNowOption

    func validate() throws {
        if key.keyFile == "-", input.vault == "-" || input.log == "-" { throw ValidationError("only one input may read standard input ('-')") }
    }

    /// Declares the log as this command's one output, written where it was read.
    func files() throws -> (files: CommandFiles, log: DeclaredOutput) {
        let log = DeclaredOutput.householdLog(input.logPath)
        return (try CommandFiles(reads: (key.declaredInput.map { [$0] } ?? []) + [FileSet.Input("vault", input.vault)], writes: [log]), log)
    }

    /// The parent key, refused unless it is this vault's household's; with it the vault's
    /// secrets are held, so that no option checked or quoted after it shows a piece of one.
    func parentKey(household: HouseholdID, vault: [UInt8]) throws -> SecretKey {
        let key = try key.load(diagnostics)
        guard Household(parentPublicKey: key.publicKey).id == household else { throw VaultError.notThisHouseholdsParent() }
        HouseholdLog.holdSecrets(of: vault, household: household, signer: key)
        return key
    }
}

struct LogStart: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Begin the household log of a schema 3 vault that has none (the parent key).",
        discussion: """
        The first event names the vault as it is now, signed by the parent key. A log already \
        there is never replaced (exit 4). A vault migrated to schema 3 or sealed by this suite \
        has its log from the start; this is for one made before the log existed.

        Example:
          vault-tool log start --key-file parent.nsec household.vault
        """
    )

    @OptionGroup var options: LogParentOptions

    @Option(help: ArgumentHelp("Why, recorded in the event.", valueName: "TEXT"))
    var reason: String?

    func run() throws {
        let input = options.input
        let logOutput = DeclaredOutput.householdLog(input.logPath, exclusive: true)
        let files = try CommandFiles(reads: (options.key.declaredInput.map { [$0] } ?? []) + [FileSet.Input("vault", input.vault)], writes: [logOutput])
        let bytes = try InputFiles.read(input.vault, what: "vault")
        let key = try options.key.load(diagnostics)
        let opened = try Vault.open(bytes, with: .parentKey(key))
        guard opened.document.version >= 3 else { throw VaultError.noLogBeforeSchema3(opened.document.version) }
        let log = try HouseholdLog(events: []).appending(
            .init(.start, summary: "started the household log", reason: reason),
            household: opened.header.householdID, vault: bytes, revision: opened.document.revision ?? 0, signer: key, at: options.now.time)
        try files.writer().write(logOutput, log.bytes)
        diagnostics.note("started the household log '\(input.logPath)' at revision \(opened.document.revision ?? 0)")
    }
}

struct LogGrant: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Allow a support key some actions in this household until a date (the parent key).",
        discussion: """
        Appends a grant, signed by the parent key, naming the support key (its npub, which \
        'vault-tool keygen' printed for the agent), the actions it may sign (\(LogAction.grantableNames)) \
        and when the grant ends. The support agent then changes the vault with the vault key and \
        --signer-key-file of their own key, and never holds the parent's. The vault itself is \
        not changed; its log is (written where it was read).

        Example:
          vault-tool log grant --key-file parent.nsec --to npub1… --allow revoke \\
            --until 2026-12-31 --label "Sam at support" household.vault
        """
    )

    @OptionGroup var options: LogParentOptions

    @Option(help: ArgumentHelp("The support key's public key (npub1… or 64 hex).", valueName: "NPUB"))
    var to: String

    @Option(help: ArgumentHelp("The actions allowed, comma-separated: \(LogAction.grantableNames).", valueName: "ACTIONS"))
    var allow: String

    @Option(help: ArgumentHelp("When the grant ends: a day (its first instant, UTC) or an RFC 3339 time, after now.", valueName: "DATE"))
    var until: String

    @Option(help: ArgumentHelp("Who the key is, as log show names it.", valueName: "TEXT"))
    var label: String?

    /// A grant longer than this is warned of: support is given what a case needs, and a grant
    /// that outlives everyone's memory of it is a key nobody watches.
    static let longestGrantDays = 366

    func run() throws {
        let (files, logOutput) = try options.files()
        let (vault, household, log, verified) = try options.input.readVerified(changing: true)
        // The keys first, so every option is checked and quoted by a run that holds them (a
        // review: a piece of a child's key typed as --allow was quoted back) and the public key
        // given is compared with them (publicKeyOption).
        let key = try options.parentKey(household: household, vault: vault)
        var actions: [LogAction] = []
        for name in allow.split(separator: ",", omittingEmptySubsequences: false) {
            let name = String(name.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
            guard let action = LogAction(rawValue: name), !action.parentOnly else {
                throw VaultError.grantOptionInvalid("--allow \(QuotedInput(name).description.displaySafe) is not an action a grant may allow (\(LogAction.grantableNames))")
            }
            guard !actions.contains(action) else { throw VaultError.grantOptionInvalid("--allow names \(action.rawValue) twice") }
            actions.append(action)
        }
        guard let end = Timestamp(dayOrTime: until), end.seconds > options.now.time.seconds else {
            throw VaultError.grantOptionInvalid("--until \(QuotedInput(until).description.displaySafe) is not a day or time after now")
        }
        if end.seconds - options.now.time.seconds > Int64(Self.longestGrantDays) * 86_400 {
            diagnostics.warning("this grant lasts \(TimeSpan.words(seconds: end.seconds - options.now.time.seconds)); a support key is best granted for as long as its case needs (withdraw it with 'vault-tool log withdraw')")
        }
        if let label { try RecordedText.checkName(label, field: "--label") }
        // The grant bears the later of now and its predecessor's time, and must end after it.
        let made = max(options.now.time.seconds, verified.head.event.createdAt)
        guard end.seconds > made else {
            throw VaultError.grantOptionInvalid("--until \(QuotedInput(until).description.displaySafe) is not after the log's last event (\(Timestamp(seconds: made).rfc3339))")
        }
        let vaultKey = try Derivation.vaultKey(for: key)
        let supportKey = try publicKeyOption("--to", to)
        guard Household(parentPublicKey: supportKey).id != household else { throw VaultError.grantOptionInvalid("--to is the parent's own key, which needs no grant") }
        guard supportKey != vaultKey.publicKeyAsSigner else {
            throw VaultError.grantOptionInvalid("--to is the public key of this household's vault key, which everyone it was handed to holds; grant each person's own key (vault-tool keygen)")
        }
        // Run again, the same grant still in force is not granted twice.
        if let same = verified.grants.first(where: { $0.withdrawnBy == nil && $0.key == supportKey && Set($0.actions) == Set(actions) && $0.until == end.seconds && $0.label == label }) {
            diagnostics.note("\(supportKey.npub) already holds this grant (\(same.id.prefix(12))…); nothing was written")
            return
        }
        var tags: [[String]] = [["p", supportKey.hex], ["allow"] + actions.map { $0.rawValue }, ["until", String(end.seconds)]]
        if let label { tags.append(["label", label]) }
        let grown = try log.appending(
            .init(.grant, summary: "granted \(supportKey.npub.prefix(16))…\(label.map { " (\($0))" } ?? "") \(actions.map { $0.rawValue }.joined(separator: ", ")) until \(end.rfc3339)", details: tags),
            household: household, vault: vault, revision: verified.head.revision, signer: key, at: options.now.time)
        try files.writer().write(logOutput, grown.bytes)
        diagnostics.note("granted \(supportKey.npub) \(actions.map { $0.rawValue }.joined(separator: ", ")) until \(end.rfc3339) (grant \(grown.head!.idHex.prefix(12))…)")
    }
}

struct LogWithdraw: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "withdraw",
        abstract: "Take back a grant (the parent key).",
        discussion: """
        Names the grant by its event id (12 characters or more, as 'log show --json' and the \
        grant's note print it) or by the support key's npub, which withdraws every grant of \
        that key still in force. From then on the key signs nothing in this household.

        Example:
          vault-tool log withdraw --key-file parent.nsec --grant npub1… \\
            household.vault
        """
    )

    @OptionGroup var options: LogParentOptions

    @Option(help: ArgumentHelp("The grant: its event id (12 hex characters or more), or the support key's npub1….", valueName: "ID"))
    var grant: String

    @Option(help: ArgumentHelp("Why, recorded in the event.", valueName: "TEXT"))
    var reason: String?

    func run() throws {
        let (files, logOutput) = try options.files()
        let (vault, household, log, verified) = try options.input.readVerified(changing: true)
        let key = try options.parentKey(household: household, vault: vault)
        let inForce = verified.grants.filter { $0.withdrawnBy == nil }
        let chosen: [HouseholdLog.Grant]
        if grant.hasPrefix("npub1") {
            let supportKey = try publicKeyOption("--grant", grant)
            chosen = inForce.filter { $0.key == supportKey }
        } else {
            let id = try hexIDOption("--grant", grant)
            chosen = inForce.filter { $0.id.hasPrefix(id) }
        }
        guard !chosen.isEmpty else { throw VaultError.noSuchGrant(QuotedInput(grant)) }
        var grown = log
        for withdrawn in chosen {
            grown = try grown.appending(.init(.withdraw, summary: "withdrew the grant of \(withdrawn.key.npub.prefix(16))…\(withdrawn.label.map { " (\($0))" } ?? "")", reason: reason, details: [["e", withdrawn.id]]),
                                        household: household, vault: vault, revision: verified.head.revision, signer: key, at: options.now.time)
        }
        try files.writer().write(logOutput, grown.bytes)
        diagnostics.note("withdrew \(counted(chosen.count, "grant"))")
    }
}

extension VaultError.Code {
    static let grantOptionInvalid = VaultError.Code(name: "grantOptionInvalid", category: .usage)
    static let noSuchGrant = VaultError.Code(name: "noSuchGrant", category: .refused)
    static let noLogBeforeSchema3 = VaultError.Code(name: "noLogBeforeSchema3", category: .refused)
    static let notThisHouseholdsParent = VaultError.Code(name: "notThisHouseholdsParent", category: .authentication)
    static let expectedEventMissing = VaultError.Code(name: "expectedEventMissing", category: .authentication)
}

extension VaultError {
    static func grantOptionInvalid(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.grantOptionInvalid, what, file: file, line: line)
    }

    static func noSuchGrant(_ given: QuotedInput, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noSuchGrant, "no grant in force matches \(given)", hint: "list them with: vault-tool log show --json VAULT", file: file, line: line)
    }

    static func noLogBeforeSchema3(_ version: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noLogBeforeSchema3, "a schema version \(version) vault has no household log; logs begin with schema 3",
                   hint: "migrate it first: vault-tool migrate --key-file PARENT.nsec --to 3 --in-place VAULT", file: file, line: line)
    }

    static func expectedEventMissing(_ id: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.expectedEventMissing, "the household log does not hold the event \(QuotedInput(id)): the log and its vault were put back to before it, or it is another household's",
                   hint: "restore the vault and log from a copy that holds it (the object store's versions, a backup)", file: file, line: line)
    }

    static func notThisHouseholdsParent(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notThisHouseholdsParent, "the key is not this household's parent key: only it may start a log or grant in it", file: file, line: line)
    }
}
