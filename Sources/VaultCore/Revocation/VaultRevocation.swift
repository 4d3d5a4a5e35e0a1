/// Revoking devices in a household's vault (`device-revoker vault`; seed 000: "Lost/stolen
/// secondary device: revoke in vault + MLS removal"), with guard rails that refuse the changes
/// people regret: revoking the primary without naming a new one, revoking every active device,
/// or naming a device the vault does not have.
public enum VaultRevocation {
    /// Which devices to revoke.
    public enum Selector: Sendable, Equatable {
        /// Devices as support staff hear them: an id, a unique id prefix of at least
        /// ``minimumIdPrefix`` characters, or a device's whole name, any case and spacing.
        case devices([String])
        case notSeenSince(Timestamp)
        case allExcept(String)
    }

    public struct Options: Sendable {
        public var selector: Selector
        public var promote: String?
        /// Checked when the options are made: a dry run's plan and the real run's change take
        /// the same reason, so the dry run cannot approve one the change refuses (a trial's dry
        /// run passed a reason holding a key).
        public let reason: String?
        public var allowEmpty = false
        public var ignoreUnknown = false
        public var now: Timestamp

        public init(selector: Selector, promote: String? = nil, reason: String? = nil, allowEmpty: Bool = false, ignoreUnknown: Bool = false,
                    now: Timestamp) throws {
            if let reason { try RecordedText.checkFreeText(reason, field: "the reason") }
            switch selector {
            case .devices(let typed): try typed.forEach(refuseBlank)
            case .allExcept(let typed): try refuseBlank(typed)
            case .notSeenSince: break
            }
            try promote.map(refuseBlank)
            self.selector = selector
            self.promote = promote
            self.reason = reason
            self.allowEmpty = allowEmpty
            self.ignoreUnknown = ignoreUnknown
            self.now = now
        }
    }

    /// One subkey to take out of one group.
    public struct Removal: Sendable, Equatable {
        public let group: String
        /// The group's name, as the family sees it.
        public let groupName: String
        public let member: String
        public let deviceId: String
    }

    /// The fewest characters an id prefix selects a device by: 65,536 values of a UUID's
    /// first four hex digits, against the dozen devices of a household.
    public static let minimumIdPrefix = 4

    /// A device a typed name could mean, as support reads it out: name, id, status and when it
    /// was last seen, which is what tells two "iPad"s apart on the phone (seed 002: "iPhone,
    /// last seen 2 min ago").
    public struct Candidate: Hashable, Sendable {
        public let id: String
        public let name: String
        public let isActive: Bool
        public let lastSeenAt: Timestamp

        /// "name (id, active, last seen TIME)", as a refusal lists it.
        var listed: String { "\(name) (\(id), \(isActive ? "active" : "revoked"), last seen \(lastSeenAt))" }

        /// The devices of `matches`, the active ones first, each group in the vault's order.
        static func listing(_ matches: [DeviceRecord]) -> [Candidate] {
            let candidates = matches.map { Candidate(id: $0.deviceId, name: $0.deviceName, isActive: $0.status == .active, lastSeenAt: $0.lastSeenAt) }
            return candidates.filter(\.isActive) + candidates.filter { !$0.isActive }
        }
    }

    /// A guard rail the revocation trips, with what tripped it. The tools word it and name the
    /// option that overrides it; ``reason`` names none. What support typed is kept as a
    /// ``QuotedInput``: a key given as a device (a devices file that is the parent's key) is
    /// withheld in every report that quotes it, text, JSON or error alike (a hostile trial: the
    /// report on standard output printed it whole while the error was redacted).
    public enum Refusal: Hashable, Sendable {
        /// Listed devices the vault does not have.
        case unknownDevices([QuotedInput])
        /// A name or prefix that matches several devices: active ones first.
        case ambiguousDevice(QuotedInput, candidates: [Candidate])
        /// Text that is no device's whole name or id, only part of these devices' names ("room"
        /// for "Bedroom iPad"): a device is revoked only when named whole (issue 37).
        case partOfNames(QuotedInput, candidates: [Candidate])
        /// A "not seen since" date after now: every device was last seen before it.
        case dateInTheFuture(Timestamp, now: Timestamp)
        /// The device named as the new primary is not an active device that stays.
        case promotedDeviceDoesNotStay(QuotedInput)
        /// The primary device is revoked while other devices stay, and no new primary is named.
        case primaryNeedsSuccessor(primary: String)
        /// A new primary is named, but the primary device is not being revoked.
        case promotionWithoutPrimary(QuotedInput)
        /// Every active device would be revoked: the household would have to restore from paper.
        case wouldRevokeEveryActiveDevice

        /// The case's name, for JSON: scripts match on it, not on the wording.
        public var kind: String {
            switch self {
            case .unknownDevices: "unknownDevices"
            case .ambiguousDevice: "ambiguousDevice"
            case .partOfNames: "partOfNames"
            case .dateInTheFuture: "dateInTheFuture"
            case .promotedDeviceDoesNotStay: "promotedDeviceDoesNotStay"
            case .primaryNeedsSuccessor: "primaryNeedsSuccessor"
            case .promotionWithoutPrimary: "promotionWithoutPrimary"
            case .wouldRevokeEveryActiveDevice: "wouldRevokeEveryActiveDevice"
            }
        }

        public var reason: String {
            switch self {
            case .unknownDevices(let ids): "the vault has no device \(ids.map(\.description).joined(separator: ", "))"
            case .ambiguousDevice(let typed, let candidates):
                "\(typed) matches \(candidates.count) devices: " + candidates.map(\.listed).joined(separator: "; ")
            case .partOfNames(let typed, let candidates):
                "\(typed) is not the whole name of any device, only part of \(candidates.count == 1 ? "the name of" : "the names of \(candidates.count) devices"): "
                    + candidates.map(\.listed).joined(separator: "; ")
            case .dateInTheFuture(let date, let now): "\(date) is after now (\(now)): every device was last seen before it"
            case .promotedDeviceDoesNotStay(let id): "\(id), named as the new primary, is not an active device that stays"
            case .primaryNeedsSuccessor(let primary): "'\(primary)' is the primary device, and no new primary is named"
            case .promotionWithoutPrimary(let id): "\(id) is named as the new primary, but the primary device is not being revoked"
            case .wouldRevokeEveryActiveDevice: "this revokes every active device; the household would then have to recover from its recovery sheet"
            }
        }
    }

    /// The blast radius: everything the revocation would do, and every guard rail it trips.
    public struct Plan: Sendable {
        public let revoke: [DeviceRecord]
        public let alreadyRevoked: [String]
        public let unknown: [QuotedInput]
        /// For each unknown device, the devices closest to what was typed, as "name (id)".
        public let closest: [QuotedInput: [String]]
        public let removals: [Removal]
        public let newPrimary: String?
        /// The guard rails it trips; empty when it may go ahead.
        public let refusals: [Refusal]
        /// The groups that lose a member, by id, each with its name.
        public var groups: [(id: String, name: String)] {
            Dictionary(removals.map { ($0.group, $0.groupName) }, uniquingKeysWith: { first, _ in first }).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    public static func plan(_ document: VaultDocument, options: Options) -> Plan {
        var unknown: [QuotedInput] = []
        var unknownTexts: Set<String> = []  // each once, by what was typed (two withheld lines may quote alike)
        var chosen: [DeviceRecord] = []
        var chosenIDs: Set<String> = []
        var ambiguous: [Refusal] = []
        // Names folded and ids indexed once: a list of thousands against a vault of thousands
        // took minutes, each entry folding every device's name again (a hostile trial).
        let lookup = DeviceLookup(document.devices)
        switch options.selector {
        case .devices(let typed):
            for text in typed {
                switch selection(text, in: lookup) {
                case .device(let device): if chosenIDs.insert(device.deviceId).inserted { chosen.append(device) }
                case .refused(let refusal): if !ambiguous.contains(refusal) { ambiguous.append(refusal) }
                case .none: if unknownTexts.insert(text).inserted { unknown.append(QuotedInput(text)) }
                }
            }
        case .notSeenSince(let time):
            // A date to come selects every device: a typo for a past year, never a wish.
            if time > options.now {
                ambiguous.append(.dateInTheFuture(time, now: options.now))
            } else {
                chosen = document.devices.filter { $0.lastSeenAt < time }
            }
        case .allExcept(let typed):
            // The one device kept is named like any other; naming none keeps none, so an
            // unknown or unclear name selects nothing (refused below), even with unknowns skipped.
            switch selection(typed, in: lookup) {
            case .device(let keep): chosen = document.devices.filter { $0.deviceId != keep.deviceId }
            case .refused(let refusal): ambiguous.append(refusal)
            case .none: unknown.append(QuotedInput(typed))
            }
        }
        let alreadyRevoked = chosen.filter { $0.status == .revoked }.map(\.deviceId)
        let revoke = chosen.filter { $0.status == .active }
        let revokedIDs = Set(revoke.map(\.deviceId))
        let remaining = document.devices.filter { $0.status == .active && !revokedIDs.contains($0.deviceId) }

        // The new primary is named the way support names devices, too.
        var promoted = options.promote
        if let typed = options.promote {
            switch selection(typed, in: lookup) {
            case .device(let device): promoted = device.deviceId
            case .refused(let refusal): if !ambiguous.contains(refusal) { ambiguous.append(refusal) }
            case .none: break
            }
        }
        var refusals = ambiguous
        // Skipping unknown devices is for lists with a few stale ids, not for a batch where
        // nothing matched: that is a mistyped name, and going ahead would change nothing.
        if !unknown.isEmpty, !options.ignoreUnknown || chosen.isEmpty {
            refusals.append(.unknownDevices(unknown))
        }
        var newPrimary: String?
        if let primary = revoke.first(where: \.isPrimary) {
            if let promote = promoted {
                if remaining.contains(where: { $0.deviceId == promote }) {
                    newPrimary = promote
                } else {
                    refusals.append(.promotedDeviceDoesNotStay(QuotedInput(options.promote ?? promote)))
                }
            } else if !remaining.isEmpty {
                refusals.append(.primaryNeedsSuccessor(primary: primary.deviceId))
            }
        } else if let promote = promoted {
            refusals.append(.promotionWithoutPrimary(QuotedInput(options.promote ?? promote)))
        }
        if !revoke.isEmpty, remaining.isEmpty, !options.allowEmpty {
            refusals.append(.wouldRevokeEveryActiveDevice)
        }

        let revokedKeys = Dictionary(revoke.map { ($0.subkeyPublicKey, $0.deviceId) }, uniquingKeysWith: { first, _ in first })
        var removals: [Removal] = []
        for group in document.groupMemberships {
            for member in group.memberPubkeys {
                if let deviceId = revokedKeys[member] { removals.append(Removal(group: group.mlsGroupId, groupName: group.groupName, member: member, deviceId: deviceId)) }
            }
        }
        // The closest devices for the first few unknown entries: each costs an edit distance to
        // every device, and a message names no more than a few.
        let closest = Dictionary(unknown.enumerated().map { index, entry in
            (entry, index < suggestedUnknown ? entry.shown.map { closestDevices(to: $0, in: document.devices) } ?? [] : [])
        }, uniquingKeysWith: { first, _ in first })
        return Plan(revoke: revoke, alreadyRevoked: alreadyRevoked, unknown: unknown, closest: closest, removals: removals,
                    newPrimary: newPrimary, refusals: refusals)
    }

    /// What one typed device selects: a device, a refusal that lists the candidates, or
    /// nothing (an unknown device).
    enum Selection {
        case device(DeviceRecord)
        case refused(Refusal)
    }

    /// The device `typed` names whole (``matching(_:in:)``). Several are ambiguous; none, when
    /// it is part of some names ("room" of "Bedroom iPad"), lists those and refuses: a name
    /// heard in part must not revoke the one device it happens to be part of (issue 37).
    static func selection(_ typed: String, in devices: [DeviceRecord]) -> Selection? {
        selection(typed, in: DeviceLookup(devices))
    }

    static func selection(_ typed: String, in lookup: DeviceLookup) -> Selection? {
        let matches = lookup.matching(typed)
        if matches.count > 1 { return .refused(.ambiguousDevice(QuotedInput(typed), candidates: Candidate.listing(matches))) }
        if let device = matches.first { return .device(device) }
        let fragment = folded(typed)
        guard fragment.count >= 3 else { return nil }
        let containing = lookup.containing(fragment)
        return containing.isEmpty ? nil : .refused(.partOfNames(QuotedInput(typed), candidates: Candidate.listing(containing)))
    }

    /// How many unknown entries get the closest devices.
    static let suggestedUnknown = 20

    /// Every device `typed` names whole: its id, any case; its whole name, any case and spacing;
    /// or an id that starts with it (``minimumIdPrefix`` characters at least). More than one is
    /// ambiguous, even when one of them is an exact id: "ipad" must not pick a device while
    /// another is named "iPad".
    static func matching(_ typed: String, in devices: [DeviceRecord]) -> [DeviceRecord] {
        DeviceLookup(devices).matching(typed)
    }

    /// A name as a person would say it: case folded in full, in NFKC, spaces (any run of
    /// whitespace) single, none at either end. A full-width "ｋｉｔｃｈｅｎ" is the name "kitchen"
    /// a person reads, "STRASSE" is "Straße" (a trial: lower-casing told them apart, and a
    /// registry name matched one of two such devices silently). String's `==` then compares
    /// canonically equivalent text (a precomposed é and e + U+0301) as equal. Characters that
    /// show as nothing (Unicode's default ignorable code points: a zero-width space or joiner, a
    /// soft hyphen, a byte order mark, and the blank letters beside them, ``Unicode/Scalar/drawsNothing``)
    /// are dropped, as Unicode's own NFKC_Casefold drops the first:
    /// "Kitchen\u{200B}iPad" is the name a person reads as "KitcheniPad", and a zero-width space
    /// alone is no name (a trial: it was "no device named", exit 4, where a blank name is exit 64).
    public static func folded(_ name: String) -> String {
        let caseless = (try? Array(name.utf8).withUnsafeBytes(UnicodeNormalization.caseFoldedNFKC)).map { String(decoding: $0, as: UTF8.self) }
            ?? name.lowercased()
        var shown = String.UnicodeScalarView()
        shown.append(contentsOf: caseless.unicodeScalars.lazy.filter { !$0.drawsNothing })
        return String(shown).split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Refuses a device typed as nothing a person would read as a name: empty, or only spaces
    /// and invisible characters (a trial: a zero-width space was "no device", exit 4, in a
    /// vault, and blank, exit 64, in a registry).
    static func refuseBlank(_ typed: String) throws {
        guard !folded(typed).isEmpty else { throw VaultError.deviceNameBlank(listing: "vault-tool inspect --vault-key-file KEY VAULT") }
    }

    /// An id as typed, as ids are looked up: in NFKC, lower case, spaces single (a full-width
    /// id read out is the id). Ids are compared lower-cased, as they always were, not folded.
    static func typedID(_ id: String) -> String {
        let compatible = (try? Array(id.utf8).withUnsafeBytes(UnicodeNormalization.nfkc)).map { String(decoding: $0, as: UTF8.self) } ?? id
        return compatible.lowercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The three devices nearest to `typed`, as "name (id)" for a message: first those whose
    /// name or id contains it, then by edit distance over id and name.
    static func closestDevices(to typed: String, in devices: [DeviceRecord]) -> [String] {
        let folded = typed.lowercased()
        var edits = EditDistance(from: folded, limit: 64)
        func distance(_ text: String) -> Int { edits.to(text.lowercased(), limit: 64) }
        func score(_ device: DeviceRecord) -> Int {
            if !folded.isEmpty, device.deviceName.lowercased().contains(folded) || device.deviceId.lowercased().contains(folded) { return -1 }
            return min(distance(device.deviceId), distance(device.deviceName))
        }
        return devices.map { ("\($0.deviceName) (\($0.deviceId))", score($0)) }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(3).map(\.0)
    }

    /// Applies a plan with no refusals. The schema version is kept: v1 records the status only;
    /// v2 also records `revokedAt` and `revocationReason` and raises the revision.
    public static func apply(_ plan: Plan, to document: VaultDocument, options: Options) throws -> VaultDocument {
        guard plan.refusals.isEmpty else { throw VaultError.guardRails(plan.refusals.map(\.reason)) }
        var changed = document
        let ids = Set(plan.revoke.map(\.deviceId))
        guard !ids.isEmpty else { return document }
        for index in changed.devices.indices {
            let id = changed.devices[index].deviceId
            if ids.contains(id) {
                changed.devices[index].status = .revoked
                changed.devices[index].isPrimary = false
                if changed.version >= 2 {
                    changed.devices[index].revokedAt = options.now
                    changed.devices[index].revocationReason = options.reason
                }
            }
            if id == plan.newPrimary { changed.devices[index].isPrimary = true }
        }
        let removed = Set(plan.removals.map { "\($0.group)\u{0}\($0.member)" })
        for index in changed.groupMemberships.indices {
            let group = changed.groupMemberships[index].mlsGroupId
            changed.groupMemberships[index].memberPubkeys.removeAll { removed.contains("\(group)\u{0}\($0)") }
        }
        try changed.raiseRevision()
        changed.updatedAt = max(changed.updatedAt, options.now)
        return changed
    }

    /// The app's operations: one `mls.remove` for each group that holds a revoked subkey.
    public static func operations(_ plan: Plan) -> [JSONValue] {
        plan.removals.map { removal in
            .object([("op", .string("mls.remove")), ("group", .string(removal.group)), ("member", .string(removal.member)), ("deviceId", .string(removal.deviceId))])
        }
    }
}

/// A vault's devices ready to be named many times (``VaultRevocation/matching(_:in:)``): ids
/// as given and in lower case, names folded, each looked up by hash, and id prefixes of ASCII
/// by a binary search of the sorted ASCII ids (where `<` is byte order and a prefix is a run of
/// them); ids with other characters, whose order and prefixes by Character do not agree
/// (`abcde\u{20DD}` sorts among the ids starting `abcde` and does not start with it), are
/// tried one by one, as before. Made in one pass, so naming m devices among n costs about
/// m + n foldings, not m × n.
struct DeviceLookup {
    let devices: [DeviceRecord]
    private let foldedNames: [String]
    private let byID: [String: [Int]]
    private let byLowerID: [String: [Int]]
    private let byName: [String: [Int]]
    private let asciiIDs: [(id: String, index: Int)]
    private let otherIDs: [(id: String, index: Int)]

    init(_ devices: [DeviceRecord]) {
        self.devices = devices
        foldedNames = devices.map { VaultRevocation.folded($0.deviceName) }
        var byID: [String: [Int]] = [:], byLowerID: [String: [Int]] = [:], byName: [String: [Int]] = [:]
        for (index, device) in devices.enumerated() {
            byID[device.deviceId, default: []].append(index)
            byLowerID[device.deviceId.lowercased(), default: []].append(index)
            byName[foldedNames[index], default: []].append(index)
        }
        (self.byID, self.byLowerID, self.byName) = (byID, byLowerID, byName)
        let lowered = devices.enumerated().map { (id: $0.element.deviceId.lowercased(), index: $0.offset) }
        asciiIDs = lowered.filter { $0.id.utf8.allSatisfy { $0 < 0x80 } }.sorted { $0.id < $1.id }
        otherIDs = lowered.filter { !$0.id.utf8.allSatisfy { $0 < 0x80 } }
    }

    /// Every device `typed` names whole, in the vault's order (``VaultRevocation/matching(_:in:)``).
    func matching(_ typed: String) -> [DeviceRecord] {
        let name = VaultRevocation.folded(typed)
        let id = VaultRevocation.typedID(typed)  // an id has no spaces: this is the id in lower case
        var found = Set(byID[typed] ?? []).union(byLowerID[id] ?? [])
        if !name.isEmpty { found.formUnion(byName[name] ?? []) }
        if id.count >= VaultRevocation.minimumIdPrefix {
            if id.utf8.allSatisfy({ $0 < 0x80 }) {
                // The first ASCII id not below the prefix, then every one that starts with it.
                var low = 0, high = asciiIDs.count
                while low < high {
                    let middle = (low + high) / 2
                    if asciiIDs[middle].id < id { low = middle + 1 } else { high = middle }
                }
                while low < asciiIDs.count, asciiIDs[low].id.hasPrefix(id) {
                    found.insert(asciiIDs[low].index)
                    low += 1
                }
            } else {
                for entry in asciiIDs where entry.id.hasPrefix(id) { found.insert(entry.index) }
            }
            for entry in otherIDs where entry.id.hasPrefix(id) { found.insert(entry.index) }
        }
        return found.sorted().map { devices[$0] }
    }

    /// The devices whose folded name contains `fragment`.
    func containing(_ fragment: String) -> [DeviceRecord] {
        devices.indices.filter { foldedNames[$0].contains(fragment) }.map { devices[$0] }
    }
}
