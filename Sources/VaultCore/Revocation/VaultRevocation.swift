/// Revoking devices in a household's vault (`device-revoker vault`; seed 000: "Lost/stolen
/// secondary device: revoke in vault + MLS removal"), with guard rails that refuse the changes
/// people regret: revoking the primary without naming a new one, revoking every active device,
/// or naming a device the vault does not have.
public enum VaultRevocation {
    /// Which devices to revoke.
    public enum Selector: Sendable, Equatable {
        /// Devices as support staff hear them: an id, a unique id prefix of at least four
        /// characters, or a device name, any case.
        case devices([String])
        case notSeenSince(Timestamp)
        case allExcept(String)
    }

    public struct Options: Sendable {
        public var selector: Selector
        public var promote: String?
        public var reason: String?
        public var allowEmpty = false
        public var ignoreUnknown = false
        public var now: Timestamp

        public init(selector: Selector, promote: String? = nil, reason: String? = nil, allowEmpty: Bool = false, ignoreUnknown: Bool = false, now: Timestamp) {
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

    /// A device a typed name could mean, as support reads it out: name, id and status.
    public struct Candidate: Hashable, Sendable {
        public let id: String
        public let name: String
        public let isActive: Bool

        /// The devices of `matches`, the active ones first, each group in the vault's order.
        static func listing(_ matches: [DeviceRecord]) -> [Candidate] {
            let candidates = matches.map { Candidate(id: $0.deviceId, name: $0.deviceName, isActive: $0.status == .active) }
            return candidates.filter(\.isActive) + candidates.filter { !$0.isActive }
        }
    }

    /// A guard rail the revocation trips, with what tripped it. The tools word it and name the
    /// option that overrides it; ``reason`` names none.
    public enum Refusal: Hashable, Sendable {
        /// Listed devices the vault does not have.
        case unknownDevices([String])
        /// A name or prefix that matches several devices: active ones first.
        case ambiguousDevice(String, candidates: [Candidate])
        /// The device named as the new primary is not an active device that stays.
        case promotedDeviceDoesNotStay(String)
        /// The primary device is revoked while other devices stay, and no new primary is named.
        case primaryNeedsSuccessor(primary: String)
        /// A new primary is named, but the primary device is not being revoked.
        case promotionWithoutPrimary(String)
        /// Every active device would be revoked: the household would have to restore from paper.
        case wouldRevokeEveryActiveDevice

        /// The case's name, for JSON: scripts match on it, not on the wording.
        public var kind: String {
            switch self {
            case .unknownDevices: "unknownDevices"
            case .ambiguousDevice: "ambiguousDevice"
            case .promotedDeviceDoesNotStay: "promotedDeviceDoesNotStay"
            case .primaryNeedsSuccessor: "primaryNeedsSuccessor"
            case .promotionWithoutPrimary: "promotionWithoutPrimary"
            case .wouldRevokeEveryActiveDevice: "wouldRevokeEveryActiveDevice"
            }
        }

        public var reason: String {
            switch self {
            case .unknownDevices(let ids): "the vault has no device \(ids.map { "'\($0)'" }.joined(separator: ", "))"
            case .ambiguousDevice(let typed, let candidates):
                "'\(typed)' matches \(candidates.count) devices: "
                    + candidates.map { "\($0.name) (\($0.id), \($0.isActive ? "active" : "revoked"))" }.joined(separator: "; ")
            case .promotedDeviceDoesNotStay(let id): "'\(id)', named as the new primary, is not an active device that stays"
            case .primaryNeedsSuccessor(let primary): "'\(primary)' is the primary device, and no new primary is named"
            case .promotionWithoutPrimary(let id): "'\(id)' is named as the new primary, but the primary device is not being revoked"
            case .wouldRevokeEveryActiveDevice: "this revokes every active device; the household would then have to recover from its recovery sheet"
            }
        }
    }

    /// The blast radius: everything the revocation would do, and every guard rail it trips.
    public struct Plan: Sendable {
        public let revoke: [DeviceRecord]
        public let alreadyRevoked: [String]
        public let unknown: [String]
        /// For each unknown device, the devices closest to what was typed, as "name (id)".
        public let closest: [String: [String]]
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
        let byID = Dictionary(document.devices.map { ($0.deviceId, $0) }, uniquingKeysWith: { first, _ in first })
        var unknown: [String] = []
        var chosen: [DeviceRecord] = []
        var ambiguous: [Refusal] = []
        switch options.selector {
        case .devices(let typed):
            for text in typed {
                let matches = matching(text, in: document.devices)
                if matches.count > 1 {
                    ambiguous.append(.ambiguousDevice(text, candidates: Candidate.listing(matches)))
                } else if let device = matches.first {
                    if !chosen.contains(device) { chosen.append(device) }
                } else if !unknown.contains(text) {
                    unknown.append(text)
                }
            }
        case .notSeenSince(let time):
            chosen = document.devices.filter { $0.lastSeenAt < time }
        case .allExcept(let keep):
            if byID[keep] == nil { unknown.append(keep) }
            chosen = document.devices.filter { $0.deviceId != keep }
        }
        let alreadyRevoked = chosen.filter { $0.status == .revoked }.map(\.deviceId)
        let revoke = chosen.filter { $0.status == .active }
        let revokedIDs = Set(revoke.map(\.deviceId))
        let remaining = document.devices.filter { $0.status == .active && !revokedIDs.contains($0.deviceId) }

        // The new primary is named the way support names devices, too.
        var promoted = options.promote
        if let typed = options.promote {
            let matches = matching(typed, in: document.devices)
            if matches.count == 1 { promoted = matches[0].deviceId }
            if matches.count > 1 { ambiguous.append(.ambiguousDevice(typed, candidates: Candidate.listing(matches))) }
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
                    refusals.append(.promotedDeviceDoesNotStay(promote))
                }
            } else if !remaining.isEmpty {
                refusals.append(.primaryNeedsSuccessor(primary: primary.deviceId))
            }
        } else if let promote = promoted {
            refusals.append(.promotionWithoutPrimary(promote))
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
        let closest = Dictionary(unknown.map { ($0, closestDevices(to: $0, in: document.devices)) }, uniquingKeysWith: { first, _ in first })
        return Plan(revoke: revoke, alreadyRevoked: alreadyRevoked, unknown: unknown, closest: closest, removals: removals,
                    newPrimary: newPrimary, refusals: refusals)
    }

    /// Every device `typed` names: by its exact id, by its name, or by an id that starts with it
    /// (four characters at least), ignoring case; when none does, by a part of its name (three
    /// characters at least: "bedroom" for "Bedroom iPad"). More than one is ambiguous, even when
    /// one of them is an exact id: "ipad" must not pick a device while another is named "iPad".
    static func matching(_ typed: String, in devices: [DeviceRecord]) -> [DeviceRecord] {
        let folded = typed.lowercased()
        let whole = devices.filter { device in
            device.deviceId == typed || device.deviceName.lowercased() == folded
                || (folded.count >= 4 && device.deviceId.lowercased().hasPrefix(folded))
        }
        guard whole.isEmpty, folded.count >= 3 else { return whole }
        return devices.filter { $0.deviceName.lowercased().contains(folded) }
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
