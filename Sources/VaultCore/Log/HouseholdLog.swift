// The signed household log beside every schema 3 vault (docs/vault-format.md §10): who changed
// what, as a chain of Nostr events that verifies offline with public keys only.

/// What an event of the log records.
public enum LogAction: String, CaseIterable, Sendable {
    /// The log begins, over a vault that had none (the parent only).
    case start
    /// A vault made from a revealed document (`vault-tool seal`).
    case seal
    /// The vault's schema changed; to 3, the log begins with it.
    case migrate
    /// Devices revoked.
    case revoke
    /// Another copy's changes merged in.
    case merge
    /// A device added, promoted or renamed, or the device limit set (`vault-tool device`; the
    /// `change` tag says which).
    case device
    /// The household moved to a new parent key (the old log's last event).
    case rotate
    /// A support key allowed some actions until a time (the parent only).
    case grant
    /// A grant taken back (the parent only).
    case withdraw

    /// What only the household's parent key may sign.
    public var parentOnly: Bool { [.start, .seal, .migrate, .rotate, .grant, .withdraw].contains(self) }

    /// What a grant may allow a support key.
    public static let grantable: [LogAction] = allCases.filter { !$0.parentOnly }

    /// The grantable actions' names, "device, …": help texts name them, and the command tree
    /// (every subcommand's help) is built at each start, where `joined` would cost a
    /// conformance scan of the binary (docs/performance.md).
    public static let grantableNames: String = {
        var names = ""
        for action in grantable { names += (names.isEmpty ? "" : ", ") + action.rawValue }
        return names
    }()

    /// What a key may or may not do, in words ("a key that may not change the devices"); a
    /// grant's `--allow` takes the raw value.
    var infinitive: String {
        switch self {
        case .start: "start the log"
        case .seal: "seal the vault"
        case .migrate: "migrate the vault"
        case .revoke: "revoke devices"
        case .merge: "merge another copy"
        case .device: "change the devices"
        case .rotate: "move the household to a new key"
        case .grant: "grant a support key"
        case .withdraw: "withdraw a grant"
        }
    }

    /// How `log show` says it, in the past tense.
    var pastTense: String {
        switch self {
        case .start: "started the log"
        case .seal: "sealed the vault"
        case .migrate: "migrated the vault"
        case .revoke: "revoked"
        case .merge: "merged"
        case .device: "changed the devices"
        case .rotate: "moved the household to a new key"
        case .grant: "granted"
        case .withdraw: "withdrew"
        }
    }
}

/// The chain of events beside a schema 3 vault, one JSON object a line (JSON Lines), oldest
/// first. Each event (kind ``kind``) names the household (`h`), its predecessor's id (`prev`,
/// absent from the first), its action, and the vault's SHA-256 and revision after the change
/// (`vault`); it is signed by the parent key or by a support key an earlier grant allows.
public struct HouseholdLog: Sendable, Equatable {
    /// The Nostr kind of a household log event (a regular event: every one is kept).
    public static let kind = 4801
    /// A log longer than this is refused (a household changes a few times a week).
    public static let maximumEvents = 100_000

    public private(set) var events: [NostrEvent]

    public init(events: [NostrEvent]) { self.events = events }

    /// Reads the lines of a log. A line that is not an event is a broken log (exit 3), named by
    /// its line number.
    public init(parsing bytes: [UInt8]) throws {
        var events: [NostrEvent] = []
        guard bytes.count <= Self.maximumByteCount else { throw VaultError.logTooLarge(Self.maximumByteCount) }
        var lines = bytes.split(separator: 0x0a, omittingEmptySubsequences: false)
        // The newline that ends the last event ends no line of its own; a last line without
        // one is not as a log is written (a copy cut off in the middle of a write).
        if lines.last?.isEmpty == true {
            lines.removeLast()
        } else if !bytes.isEmpty {
            throw VaultError.logBroken(line: lines.count, id: nil, "the last line does not end in a newline, as every event of a household log does")
        }
        for (index, line) in lines.enumerated() {
            let number = index + 1
            guard events.count < Self.maximumEvents else { throw VaultError.logTooLong(Self.maximumEvents) }
            guard !line.isEmpty else { throw VaultError.logBroken(line: number, id: nil, "the line is empty") }
            let event: NostrEvent
            do {
                event = try NostrEvent(jsonValue: JSONValue(parsing: Array(line), what: "the line"), path: "")
            } catch let error as VaultError {
                throw VaultError.logBroken(line: number, id: nil, error.reason)
            }
            // One way to write each event (compact, NIP-01's field order, minimal escapes), so
            // the file is what its events say and nothing else.
            guard event.jsonValue.serialized(pretty: false).elementsEqual(line) else {
                throw VaultError.logBroken(line: number, id: event.idHex, "the line is not the event as a household log writes it (compact JSON, NIP-01's field order)")
            }
            events.append(event)
        }
        self.events = events
    }

    /// The log as it is written: one compact event a line, each ending in a newline.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        for event in events {
            out += event.jsonValue.serialized(pretty: false)
            out.append(0x0a)
        }
        return out
    }

    public var head: NostrEvent? { events.last }

    /// The events of this log that `other` does not hold, in order: what a merge into the copy
    /// whose log is `other` does not carry over (its event names this copy's vault instead).
    public func events(notIn other: HouseholdLog) -> [NostrEvent] {
        let held = Set(other.events.map(\.id))
        return events.filter { !held.contains($0.id) }
    }

    /// SHA-256 of a vault's bytes, as an event names it.
    public static func vaultDigest(_ vault: [UInt8]) -> String { Hex.encode(SHA256.hash(vault)) }
}

// MARK: - Verifying

extension HouseholdLog {
    /// Who signed an event.
    public enum Signer: Sendable, Equatable {
        case parent
        /// A support key, allowed by the grant with this event id.
        case support(grant: String)
    }

    /// A grant as the log holds it.
    public struct Grant: Sendable, Equatable {
        public let id: String
        public let key: PublicKey
        public let actions: [LogAction]
        public let until: Int64
        public let label: String?
        public var withdrawnBy: String?
    }

    /// One verified event and what it means.
    public struct Entry: Sendable {
        public let line: Int
        public let event: NostrEvent
        public let action: LogAction
        public let signer: Signer
        public let vaultDigest: String
        public let revision: Int
    }

    /// A log that verified: every entry, and every grant with its state at the head.
    public struct Verified: Sendable {
        public let household: HouseholdID
        public let entries: [Entry]
        public let grants: [Grant]

        /// Whether `key` may make `action` at `time`: the parent always; a support key through a
        /// grant that allows it, is not withdrawn and has not run out. Throws the refusal.
        public func authorize(_ key: PublicKey, _ action: LogAction, at time: Int64) throws -> Signer {
            // After the move to a new key the old one signs nothing more here: whoever holds it
            // (an attacker, after a compromise) cannot redirect or change the old household.
            if entries.last?.action == .rotate { throw VaultError.householdMoved() }
            if Household(parentPublicKey: key).id == household { return .parent }
            if action.parentOnly { throw VaultError.signerNotAllowed(key.npub, action: action, why: "only the household's parent key may \(action.infinitive)") }
            let granted = grants.filter { $0.key == key }
            guard !granted.isEmpty else { throw VaultError.signerNotAllowed(key.npub, action: action, why: "no grant in this household's log names this key") }
            if let grant = granted.last(where: { $0.withdrawnBy == nil && $0.actions.contains(action) && time < $0.until }) {
                return .support(grant: grant.id)
            }
            let why = granted.contains { $0.withdrawnBy == nil && $0.actions.contains(action) }
                ? "its grant ran out" : granted.contains { $0.actions.contains(action) } ? "its grant was withdrawn" : "its grant does not allow '\(action.rawValue)'"
            throw VaultError.signerNotAllowed(key.npub, action: action, why: why)
        }

        public var head: Entry { entries[entries.count - 1] }
    }

    /// Checks the whole chain offline, with public keys only: each event's id and signature,
    /// each link, each signer allowed at that time, and that `vault` is the vault the last event
    /// names. Throws ``VaultError/logBroken(line:id:_:)`` (exit 3) naming the first bad event.
    public func verified(household: HouseholdID, vault: [UInt8]) throws -> Verified {
        let verified = try verifiedChain(household: household)
        let head = verified.head
        let digest = Self.vaultDigest(vault)
        guard head.vaultDigest == digest else {
            if verified.entries.count > 1, verified.entries[verified.entries.count - 2].vaultDigest == digest {
                throw VaultError.logAheadOfVault(line: head.line, id: head.event.idHex)
            }
            // An earlier copy put back, further than one change: the advice to start a new log
            // would drop the record of what it undid (a trial).
            if let earlier = verified.entries.last(where: { $0.vaultDigest == digest }) {
                throw VaultError.vaultPutBack(line: head.line, id: head.event.idHex, earlierLine: earlier.line, revision: earlier.revision)
            }
            throw VaultError.logBroken(line: head.line, id: head.event.idHex, "the vault is not the one this last event names: it was changed without a signed event, or this log is another vault's")
        }
        return verified
    }

    /// The chain's own rules, without the vault.
    public func verifiedChain(household: HouseholdID) throws -> Verified {
        guard !events.isEmpty else { throw VaultError.logEmpty() }
        var entries: [Entry] = []
        var grants: [Grant] = []
        for (index, event) in events.enumerated() {
            let line = index + 1
            func broken(_ reason: String) -> VaultError { VaultError.logBroken(line: line, id: event.idHex, reason) }
            if let problem = event.problem { throw broken(problem) }
            guard event.kind == Self.kind else { throw broken("it is a Nostr event of kind \(event.kind), not a household log event (\(Self.kind))") }
            // Each of these tags once: two readers must not take different ones for the event's.
            for name in ["h", "prev", "action", "vault", "reason", "p", "allow", "until", "label", "e", "successor", "predecessor", "dropped", "change"]
            where event.tags(named: name).count > 1 {
                throw broken("it has more than one \(name) tag")
            }
            guard event.tag("h") == household.hex else { throw broken("it names another household") }
            let previous = entries.last
            if let previous {
                guard event.tag("prev") == previous.event.idHex else {
                    throw broken("it does not follow the event before it: the log was reordered, cut or forked here")
                }
                guard event.createdAt >= previous.event.createdAt else { throw broken("it is dated before the event it follows") }
                if previous.action == .rotate { throw broken("it follows the household's move to a new key, after which this log takes no event") }
            } else if event.tag("prev") != nil {
                throw broken("the log does not start here: it names an event before it, which is missing")
            }
            guard let name = event.tag("action"), let action = LogAction(rawValue: name) else { throw broken("it names no action this suite knows") }
            // The digest as the tools write it, lower case: a log is compared as text, and an
            // upper-case one read as "a run cut off" rather than a malformed tag.
            guard let vault = event.tags(named: "vault").first, vault.count == 2, vault[0].utf8.count == 64, Hex.decode(vault[0]) != nil,
                  vault[0] == vault[0].lowercased(), let revision = Int(vault[1]), revision >= 0, String(revision) == vault[1] else {
                throw broken("its vault tag is not [\"vault\", SHA-256 hex, revision]")
            }
            if let previous, action == .grant || action == .withdraw, (vault[0], revision) != (previous.vaultDigest, previous.revision) {
                throw broken("a \(action.rawValue) changes no vault, but this one names another")
            }
            if previous == nil, ![.start, .seal, .migrate].contains(action) { throw broken("a log starts with start, seal or migrate, not \(action.rawValue)") }
            let signer: Signer
            do {
                signer = try Verified(household: household, entries: entries, grants: grants).authorize(event.pubkey, action, at: event.createdAt)
            } catch let error as VaultError {
                throw broken("it is signed by a key that may not \(action.infinitive) then (\(error.reason))")
            }
            // A change names the vault it made: one naming the vault the event before it names
            // changed nothing (a trial: a support key's own `revoke` repeating the vault, its
            // device still active, verified and was shown as "revoked 1 device").
            let changedNothing = action != .grant && action != .withdraw && previous?.vaultDigest == vault[0]
            try Self.checkWhatItChanged(event, action, signer: signer, changedNothing: changedNothing, broken: broken)
            switch action {
            case .grant: grants.append(try Self.grant(of: event, broken: broken))
            case .withdraw:
                guard let target = event.tag("e"), let position = grants.firstIndex(where: { $0.id == target && $0.withdrawnBy == nil }) else {
                    throw broken("it withdraws no grant in force before it")
                }
                grants[position].withdrawnBy = event.idHex
            default: break
            }
            entries.append(Entry(line: line, event: event, action: action, signer: signer, vaultDigest: vault[0], revision: revision))
        }
        return Verified(household: household, entries: entries, grants: grants)
    }

    /// What an event says it changed, held to what its action can change and its signer may: a
    /// device event is one of the device commands, and adds a device only by the parent key
    /// (its subkey derives from it); a revocation names the devices it revoked (or says which
    /// event it gave up). A hostile trial appended support-signed events that broke each. An
    /// event that `changedNothing` (its vault the one before it) only gives an event up: a run
    /// cut off and made again with nothing left to do (CLISupport's `LoggedChange`), naming no device.
    private static func checkWhatItChanged(_ event: NostrEvent, _ action: LogAction, signer: Signer, changedNothing: Bool,
                                           broken: (String) -> VaultError) throws {
        // Each device it names, once, by a value (`["device", id]`); a dropped event by its id.
        let devices = event.tags(named: "device")
        guard devices.allSatisfy({ $0.count == 1 && !$0[0].isEmpty }), Set(devices.map { $0.first ?? "" }).count == devices.count else {
            throw broken("its device tags are not each one device named once")
        }
        if let dropped = event.tags(named: "dropped").first, dropped.count != 1 || dropped[0].utf8.count != 64 || Hex.decode(dropped[0]) == nil || dropped[0] != dropped[0].lowercased() {
            throw broken("its dropped tag names no event id")
        }
        if action == .device {
            guard let change = event.tags(named: "change").first, change.count == 1, ["add", "promote", "rename", "limit"].contains(change[0]) else {
                throw broken("its device change (change) is none of add, promote, rename, limit")
            }
        }
        if changedNothing {
            guard event.tag("dropped") != nil else { throw broken("it names the vault the event before it names: it changed nothing") }
            guard devices.isEmpty else { throw broken("it names the vault the event before it names, so it changed nothing, yet it names a device") }
            return
        }
        switch action {
        case .device:
            let change = event.tags(named: "change")[0]
            if change[0] == "add", signer != .parent { throw broken("a support key added a device, which only the parent key may: the device's subkey derives from it") }
            guard change[0] == "limit" ? devices.isEmpty : devices.count == 1 else { throw broken("its \(change[0]) names \(change[0] == "limit" ? "a device" : "not one device") (device)") }
        case .revoke:
            guard !devices.isEmpty || event.tag("dropped") != nil else { throw broken("it revokes no device (device)") }
        default: break
        }
    }

    private static func grant(of event: NostrEvent, broken: (String) -> VaultError) throws -> Grant {
        guard let keyHex = event.tag("p"), let key = try? PublicKey(hex: keyHex), keyHex == key.hex else { throw broken("its grant names no valid key (p)") }
        guard let allowed = event.tags(named: "allow").first, !allowed.isEmpty else { throw broken("its grant allows nothing (allow)") }
        let actions = try allowed.map { name in
            guard let action = LogAction(rawValue: name), !action.parentOnly else { throw broken("its grant allows '\(name)', which no grant may") }
            return action
        }
        guard let untilText = event.tag("until"), let until = Int64(untilText), until > event.createdAt else {
            throw broken("its grant has no end after it was made (until)")
        }
        return Grant(id: event.idHex, key: key, actions: actions, until: until, label: event.tag("label"), withdrawnBy: nil)
    }
}

extension HouseholdLog.Verified {
    /// What only a reader that opens the vault can hold the log to (`check --log`), as §10.2
    /// says an event names its vault: the last event names the vault's revision, and each
    /// device a `revoke` names is one the vault holds as revoked, by the id the event recorded
    /// (its exact spelling, as the tools write it), unless the parent key merged, sealed,
    /// migrated or rotated the vault after it (only the parent may bring a revoked device
    /// back, by a merge or a seal). Two
    /// trials: a support-signed `revoke` naming a device still active verified, and so did one
    /// naming it in another case, by its name, or at a revision the vault is not at.
    public func check(against document: VaultDocument) throws {
        if let head = entries.last, head.revision != (document.revision ?? 0) {
            throw VaultError.logRevisionNotVaults(line: head.line, id: head.event.idHex, named: head.revision, vault: document.revision ?? 0)
        }
        let revoked = Set(document.devices.filter { $0.status == .revoked }.map { RecordedText.recordedID($0.deviceId) })
        let active = Set(document.devices.filter { $0.status == .active }.map { RecordedText.recordedID($0.deviceId) })
        var parentChangedSince = false
        for entry in entries.reversed() {
            if entry.action == .revoke, !parentChangedSince,
               let device = entry.event.tags(named: "device").compactMap(\.first).first(where: { !revoked.contains($0) }) {
                throw VaultError.revocationNotInVault(line: entry.line, id: entry.event.idHex, device: device, active: active.contains(device))
            }
            // A routine change by the parent after it (a rename, another revocation) hides nothing.
            if entry.signer == .parent, [.merge, .seal, .migrate, .rotate].contains(entry.action) { parentChangedSince = true }
        }
    }
}

// MARK: - Appending

extension HouseholdLog {
    /// What a change records beyond its action: why, what it touched (extra tags, such as one
    /// `["device", id]` a device), and a sentence for people.
    public struct Change: Sendable {
        public let action: LogAction
        public let summary: String
        public let reason: String?
        public let details: [[String]]

        public init(_ action: LogAction, summary: String, reason: String? = nil, details: [[String]] = []) {
            self.action = action
            self.summary = summary
            self.reason = reason
            self.details = details
        }

        /// Tags whose values people write (the rest are keys, ids and digests).
        static let freeTextTags: Set<String> = ["label"]

        /// A log keeps its events for good and shows them to whoever reads it: no secret goes
        /// in (``RecordedText``), and people's text is bounded.
        func checkRecordable() throws {
            try RecordedText.check(summary, field: "the event's sentence")
            if let reason { try RecordedText.checkFreeText(reason, field: "the reason") }
            var texts: [(text: String?, field: String)] = [(summary, "the event's sentence"), (reason, "the reason")]
            for tag in details {
                guard let name = tag.first else { continue }
                for value in tag.dropFirst() {
                    if Self.freeTextTags.contains(name) {
                        try RecordedText.checkFreeText(value, field: "the \(name)")
                        texts.append((value, "the \(name)"))
                    } else {
                        try RecordedText.check(value, field: "the event's '\(name)' tag", mayBeKey: true)
                    }
                }
            }
            try RecordedText.checkTogether(texts)
        }
    }

    /// Holds the secrets of the vault a parent key signs a change of (each child's key and
    /// the wrap key, ``HeldSecrets``), once a household: its writer calls this as soon as it
    /// holds the key, before it checks or quotes any option (a review: `log grant --allow`
    /// quoted a piece of a child's key typed there), and ``appending(_:household:vault:revision:signer:at:auxiliaryRandom:)``
    /// calls it again for a writer that did not.
    public static func holdSecrets(of vault: [UInt8], household: HouseholdID, signer: SecretKey) {
        if HeldSecrets.mayHoldVaultSecrets, !HeldSecrets.holdsSecretFields(of: household), Household(parentPublicKey: signer.publicKey).id == household {
            _ = try? Vault.open(vault, with: .parentKey(signer))
        }
    }

    /// This log with one event more: `change`, signed by `signer`, naming `vault` (the bytes
    /// written) at `revision`. A new log (no events) begins with it.
    public func appending(_ change: Change, household: HouseholdID, vault: [UInt8], revision: Int, signer: SecretKey, at time: Timestamp,
                          auxiliaryRandom: [UInt8]? = nil) throws -> HouseholdLog {
        // Signed by the parent key, the change's run holds the vault's secrets whether or not it
        // opened the vault (a trial: `log grant --label` and `log withdraw --reason` signed a
        // piece of a child's key into the log, where a piece of the parent key was refused).
        Self.holdSecrets(of: vault, household: household, signer: signer)
        try change.checkRecordable()
        let grown = try appendingUnverified(change, household: household, vault: vault, revision: revision, signer: signer, at: time,
                                            auxiliaryRandom: auxiliaryRandom)
        // No writer leaves a log that does not verify: the new event is held to every rule
        // `log verify` holds it to (a grant that ends before the time it bears, a signer not
        // allowed, an event after a rotation, a log grown past its limit) before anything is
        // written.
        do {
            _ = try grown.verifiedChain(household: household)
        } catch let error as VaultError where error.code == .logBroken {
            throw VaultError.eventWouldBreakLog(error.reason)
        }
        guard grown.byteCount <= Self.maximumByteCount else { throw VaultError.logTooLarge(Self.maximumByteCount) }
        return grown
    }

    /// The event signed and added, unchecked: for ``appending(_:household:vault:revision:signer:at:auxiliaryRandom:)``,
    /// and for the tests that make broken logs on purpose.
    func appendingUnverified(_ change: Change, household: HouseholdID, vault: [UInt8], revision: Int, signer: SecretKey, at time: Timestamp,
                             auxiliaryRandom: [UInt8]? = nil) throws -> HouseholdLog {
        var tags: [[String]] = [["h", household.hex]]
        if let head { tags.append(["prev", head.idHex]) }
        tags.append(["action", change.action.rawValue])
        tags.append(["vault", Self.vaultDigest(vault), String(revision)])
        if let reason = change.reason { tags.append(["reason", reason]) }
        tags += change.details
        // Never dated before the event it follows (a clock behind, or a recorded --now).
        let createdAt = max(time.seconds, head?.createdAt ?? 0)
        let event = try NostrEvent.signed(by: signer, createdAt: createdAt, kind: Self.kind, tags: tags, content: change.summary, auxiliaryRandom: auxiliaryRandom)
        guard events.count < Self.maximumEvents else { throw VaultError.logTooLong(Self.maximumEvents) }
        return HouseholdLog(events: events + [event])
    }

    /// The log as ready for a change.
    public struct Ready: Sendable {
        public let log: HouseholdLog
        public let signer: Signer
        /// The last event given up: a change by this same signer whose vault was never written.
        public let dropped: NostrEvent?
    }

    /// The log for a change to the vault `vault`: verified against it, its signer allowed to
    /// make `action` at the time the event will bear and, for a support key, on `clock` too (a
    /// `--now` in the past does not revive a grant that ran out).
    ///
    /// A log whose last event names a vault that is not there while the vault is the one the
    /// event before names is either a run cut off between publishing the two, or an earlier
    /// vault put back. Only the signer of that last event may give it up (and make the change
    /// anew): nobody else can undo someone else's change by putting an old vault back.
    public func readyForChange(household: HouseholdID, vault: [UInt8], signer: PublicKey, action: LogAction, at time: Timestamp,
                               clock: Timestamp? = nil) throws -> Ready {
        var log = self
        var dropped: NostrEvent?
        let verified: Verified
        do {
            verified = try log.verified(household: household, vault: vault)
        } catch let error as VaultError where error.code == .logAheadOfVault {
            guard let head = log.head, head.pubkey == signer else { throw VaultError.logAheadOfVaultNotYours(error.reason) }
            // A household that moved stays moved: its old key cannot undo the rotation by
            // putting the vault from before it back (a rotation cut off is finished by running
            // it again, which writes the vault its event names).
            guard head.tag("action") != LogAction.rotate.rawValue else { throw VaultError.householdMoved() }
            dropped = log.events.removeLast()
            verified = try log.verified(household: household, vault: vault)
        }
        // Allowed at the time the event will bear, never before the event it follows.
        let at = max(time.seconds, log.head?.createdAt ?? 0)
        let role = try verified.authorize(signer, action, at: at)
        if role != .parent, let clock, clock.seconds > at { _ = try verified.authorize(signer, action, at: clock.seconds) }
        return Ready(log: log, signer: role, dropped: dropped)
    }

    /// Whether this is a log an earlier run of a change began and was cut off before its vault
    /// was written: one event, signed by `signer` for `household`, naming a vault that is not
    /// `vault` (what is at the output now, nil for nothing). The same change run again may
    /// begin the log anew over it; nobody else may, and nothing else is replaced.
    public func isUnwrittenStart(by signer: PublicKey, household: HouseholdID, vault: [UInt8]?) -> Bool {
        guard events.count == 1, let only = head, only.pubkey == signer, only.tag("h") == household.hex else { return false }
        return vault.map { only.tag("vault") != Self.vaultDigest($0) } ?? true
    }

    /// Whether this is the log a migration to schema 3 in place began beside the older vault
    /// `vault` of `household` and was cut off before it replaced the vault (a kill between the
    /// two renames): one migration event, signed by the household's parent, valid, naming a
    /// vault that is not there. Every reader refuses the older vault beside it as put back; the
    /// same migration run again by the parent begins the log anew (its staging holds it to the
    /// same change, ``mayReplace(_:vaultThere:)``). `revision`, when known: the revision the
    /// event must name, the one this vault migrated has (an older copy of another revision
    /// put back is not that run's vault).
    public func isCutOffMigration(over vault: [UInt8], household: HouseholdID, revision: Int? = nil) -> Bool {
        guard let only = head, events.count == 1, only.tag("action") == LogAction.migrate.rawValue,
              Household(parentPublicKey: only.pubkey).id == household,
              revision.map({ only.tags(named: "vault").first?.last == String($0) }) ?? true,
              isUnwrittenStart(by: only.pubkey, household: household, vault: vault) else { return false }
        return (try? verifiedChain(household: household)) != nil
    }

    /// Whether this log may replace the log `existing` at its output, the vault there now being
    /// `vaultThere`: only when nothing of it is lost. That is, `existing`'s events are this
    /// log's first; or the two differ only in their last event, `existing`'s naming a vault that
    /// is not there, signed by this log's signer, and either the same change made again (a run
    /// cut off between the log and the vault, run again: same action, same sentence) or given up
    /// by this log's last event, which names it (`dropped`). Another household's log, another
    /// life of this one, another change of this signer's, or a file that is not a log is never
    /// replaced, whatever the command and however its output is named.
    public func mayReplace(_ existing: [UInt8], vaultThere: [UInt8]?) -> Bool {
        guard let there = try? HouseholdLog(parsing: existing) else { return false }
        if events.starts(with: there.events) { return true }
        guard let last = there.events.last, let head, last.pubkey == head.pubkey,
              last.tag("vault") != vaultThere.map(Self.vaultDigest),
              Array(there.events.dropLast()) == Array(events.dropLast()) else { return false }
        // The same change made again (a new seal's digest aside): every tag alike, the vault's
        // revision too, not only the action and the sentence (a trial: another vault's one-event
        // log, a migration like this one's, was replaced by a change that changed nothing).
        return head.tag("dropped") == last.idHex || Self.saysTheSame(last, head)
    }

    /// Whether the log `existing` already records this log's last change, done: the two differ
    /// only in their last event (two events), both signed by one key, saying the same (every tag
    /// but the vault's digest: the action, the event before, the revision, the reason, the
    /// devices; and the sentence), and `existing`'s names the vault that is there
    /// (`vaultThere`). What a change run again after it finished finds at its outputs. Its input
    /// is the vault the event before names, so a change that starts a log (a migration to
    /// schema 3, a seal) is never taken for one done: it has no earlier event that says what it
    /// changed (a trial: a migration of another vault to the same output was said to be done,
    /// and its revocation lost). `existing` must verify, its last event's id and signature
    /// included, with the vault there: a log whose last event was edited to name another file
    /// (a hostile review: an old vault, or no vault at all) is not a change done.
    public func recordsSameChangeDone(_ existing: [UInt8], vaultThere: [UInt8]?) -> Bool {
        guard let vaultThere, let there = try? HouseholdLog(parsing: existing), there.events.count >= 2, let last = there.events.last, let head,
              last.idHex != head.idHex, last.pubkey == head.pubkey, last.kind == head.kind, last.tag("vault") == Self.vaultDigest(vaultThere),
              Array(there.events.dropLast()) == Array(events.dropLast()),
              Self.saysTheSame(last, head),
              let household = head.tag("h").flatMap(Hex.decode), household.count == 32 else { return false }
        return (try? there.verified(household: HouseholdID(bytes: household), vault: vaultThere)) != nil
    }

    /// Two events that say the same change: the same sentence and tags, the vault's digest
    /// aside (sealing draws a new nonce each time, so a change made again is other bytes).
    private static func saysTheSame(_ one: NostrEvent, _ other: NostrEvent) -> Bool {
        func withoutDigest(_ event: NostrEvent) -> [[String]] { event.tags.map { $0.first == "vault" ? [$0[0]] + $0.dropFirst(2) : $0 } }
        return one.content == other.content && withoutDigest(one) == withoutDigest(other)
    }

    /// Whether its last event moved the household to a new key: nothing more is written there.
    public var endsWithRotation: Bool { head?.tag("action") == LogAction.rotate.rawValue }

    /// The most a log may hold, as it is read (``InputLimits/document``).
    public static let maximumByteCount = InputLimits.document

    /// The length of the log as written.
    public var byteCount: Int { events.reduce(0) { $0 + $1.jsonValue.serialized(pretty: false).count + 1 } }
}

/// A vault file and, from schema 3, its log: what a writer publishes together. The write path
/// refuses a schema 3 vault staged without the log whose last event names its bytes.
public struct LoggedVault: Sendable {
    public let vault: [UInt8]
    public let log: HouseholdLog?

    public init(vault: [UInt8], log: HouseholdLog?) throws {
        if let version = Self.schemaVersion(vault), version >= 3 {
            guard let log, log.head?.tag("vault") == HouseholdLog.vaultDigest(vault) else {
                throw VaultError.vaultWithoutItsLog()
            }
        }
        self.vault = vault
        self.log = log
    }

    /// The schema version a vault's header states, or nil for bytes that are not a vault.
    /// Asked of every output a command writes: most are not vaults, and are told apart by the
    /// magic before a header's error is made (each error's text is checked for secrets).
    public static func schemaVersion(_ bytes: [UInt8]) -> Int? {
        guard bytes.starts(with: VaultEnvelope.magic) else { return nil }
        return (try? VaultHeader(parsing: bytes.prefix(VaultEnvelope.headerByteCount))).map { Int($0.schemaVersion) }
    }

    /// Where a vault's log lives: beside it, `.vault` replaced by `.log` (`vaults/<id>.log`
    /// beside `vaults/<id>.vault`), or `.log` added to any other name.
    public static func logPath(besideVault path: String) -> String {
        path.hasSuffix(".vault") ? String(path.dropLast(".vault".count)) + ".log" : path + ".log"
    }
}

extension VaultError.Code {
    /// A household log that does not verify: an event edited, forged, reordered, cut or
    /// signed by a key not allowed, or a vault that is not its last event's.
    public static let logBroken = VaultError.Code(name: "logBroken", category: .authentication)
    /// A `revoke` event naming a device the vault does not hold as revoked (active, or no
    /// device by that id), no parent change after it.
    public static let revocationNotInVault = VaultError.Code(name: "revocationNotInVault", category: .authentication)
    /// A log whose last event names a revision the vault is not at.
    public static let logRevisionNotVaults = VaultError.Code(name: "logRevisionNotVaults", category: .authentication)
    /// A log whose last event names a vault that was never written (a run cut off).
    public static let logAheadOfVault = VaultError.Code(name: "logAheadOfVault", category: .authentication)
    /// A change signed by a key that may not make it.
    public static let signerNotAllowed = VaultError.Code(name: "signerNotAllowed", category: .refused)
    /// A schema 3 vault about to be written without its event.
    public static let vaultWithoutItsLog = VaultError.Code(name: "vaultWithoutItsLog", category: .refused)
}

extension VaultError {
    static func revocationNotInVault(line: Int, id: String, device: String, active: Bool, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.revocationNotInVault, "the household log is broken at event \(line) (\(id.prefix(12))…): it revokes device \(QuotedInput(device)), \(active ? "which the vault holds as active" : "and no device of the vault has that id") with no merge or seal by the parent key after it: the event did not make the change it names, or the vault was changed back without one",
                   hint: "the device may not be revoked: check the vault's devices (vault-tool inspect), revoke it again if so (device-revoker vault), and have the parent see who signed that event (vault-tool log show)",
                   file: file, line: sourceLine)
    }

    static func logRevisionNotVaults(line: Int, id: String, named: Int, vault: Int, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.logRevisionNotVaults, "the household log is broken at event \(line) (\(id.prefix(12))…): it names revision \(named), and the vault is at revision \(vault)",
                   hint: "nothing from that event on can be trusted; have the parent check the vault and its log", file: file, line: sourceLine)
    }

    static func logBroken(line: Int, id: String?, _ reason: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.logBroken, "the household log is broken at event \(line)\(id.map { " (\($0.prefix(12))…)" } ?? ""): \(reason)",
                   hint: "nothing from that event on can be trusted; compare with another copy of the log, or have the parent check the vault, move this log aside and start a new one (vault-tool log start)",
                   file: file, line: sourceLine)
    }

    static func vaultPutBack(line: Int, id: String, earlierLine: Int, revision: Int, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.logBroken, "the household log is broken at event \(line) (\(id.prefix(12))…): the vault is not the one this last event names: it is the one event \(earlierLine) names (revision \(revision)), an earlier copy put back, which undoes what the events after it record",
                   hint: "restore the vault the last event names (a backup, the object store's versions) and keep this log, the record of those changes; do not start a new one",
                   file: file, line: sourceLine)
    }

    static func logAheadOfVault(line: Int, id: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.logAheadOfVault, "the household log's last event (\(line), \(id.prefix(12))…) names a change whose vault was never written (a run cut off); the vault is the one the event before it names",
                   hint: "run the change again: the suite's writers drop that event and make the change anew", file: file, line: sourceLine)
    }

    static func logEmpty(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.logBroken, "the household log holds no event", file: file, line: line)
    }

    static func logTooLong(_ maximum: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "the household log holds more than \(maximum) events", file: file, line: line)
    }

    static func logTooLarge(_ maximum: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "the household log would be larger than \(maximum / (1 << 20)) MiB, the most a log may hold", file: file, line: line)
    }

    static func signerNotAllowed(_ npub: String, action: LogAction, why: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.signerNotAllowed, "the signer \(npub.prefix(16))… may not \(action.infinitive) in this household: \(why)",
                   hint: "the parent grants a support key with: vault-tool log grant --key-file PARENT.nsec --to NPUB --allow \(action.rawValue) --until DATE VAULT",
                   file: file, line: line)
    }

    static func eventWouldBreakLog(_ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.signerNotAllowed, "the event this change needs would not verify, so nothing was written (\(reason))", file: file, line: line)
    }

    static func logAheadOfVaultNotYours(_ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.logAheadOfVault, reason + "; only whoever signed that event may make a change now",
                   hint: "if that change was cut off, its signer runs it again; if an earlier vault was put back, restore the vault the last event names", file: file, line: line)
    }

    package static func householdMoved(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.signerNotAllowed, "this household moved to a new key (its log ends with the rotation): nothing more is signed here",
                   hint: "make the change in the new household's vault, whose path the tombstone names", file: file, line: line)
    }

    package static func vaultWithoutItsLog(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.vaultWithoutItsLog, "a schema 3 vault is written only with its household log, whose last event names it; nothing was written",
                   hint: "write the vault to a file with -o FILE: its log is written beside it", file: file, line: line)
    }
}

// MARK: - A rotation's hand-over

extension RotationVerifier {
    /// The hand-over of a schema 3 household to its new key (docs/vault-format.md §10.5), from
    /// both ends: each log verifies against its vault; the old one ends with the move, signed by
    /// the old key, naming the new household and vault; the new one begins signed by the new key
    /// and names the old log's last event before the move. Only then is the successor believed.
    public static func verifyHandOver(oldLog: HouseholdLog?, tombstone: [UInt8], newLog: HouseholdLog?, newVault: [UInt8],
                                      oldHousehold: HouseholdID, newHousehold: HouseholdID) -> [Check] {
        var checks: [Check] = []
        func verified(_ log: HouseholdLog?, _ vault: [UInt8], _ household: HouseholdID, _ name: String, _ which: String) -> HouseholdLog.Verified? {
            guard let log else {
                checks.append(Check(name: name, passed: false, detail: "the \(which) household's log is missing"))
                return nil
            }
            do {
                let result = try log.verified(household: household, vault: vault)
                checks.append(Check(name: name, passed: true, detail: "\(result.entries.count) events signed and linked; the vault is the last one's"))
                return result
            } catch let error as VaultError {
                checks.append(Check(name: name, passed: false, detail: error.reason))
            } catch {
                checks.append(Check(name: name, passed: false, detail: "\(error)"))
            }
            return nil
        }
        let old = verified(oldLog, tombstone, oldHousehold, "old-log-verifies", "old")
        let new = verified(newLog, newVault, newHousehold, "new-log-verifies", "new")
        guard let old, let new else { return checks }
        let move = old.head
        let moved = move.action == .rotate && move.signer == .parent
            && move.event.tags(named: "successor").first == [newHousehold.hex, HouseholdLog.vaultDigest(newVault)]
        checks.append(Check(name: "old-log-ends-with-the-move", passed: moved,
                            detail: moved ? "the old key signed the move to \(newHousehold.shortHex)… and its vault" : "the old log's last event is not the move to this new household and vault"))
        let first = new.entries[0]
        let before = old.entries.count >= 2 ? old.entries[old.entries.count - 2].event.idHex : nil
        let confirmed = first.action == .start && first.signer == .parent
            && first.event.tags(named: "predecessor").first == [oldHousehold.hex] + (before.map { [$0] } ?? [])
        checks.append(Check(name: "successor-confirmed-by-new-key", passed: confirmed,
                            detail: confirmed ? "the new key's first event names the old household's log before the move"
                                : "the new household's log does not begin with the new key naming the old log: the successor is not confirmed"))
        return checks
    }
}
