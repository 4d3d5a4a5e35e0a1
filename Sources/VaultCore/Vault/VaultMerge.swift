/// Three-way merge of two copies of a vault that diverged from a common base (`vault-tool
/// merge`; seed 000's "Vault versioning/merge" future work). docs/vault-format.md §8.5 states
/// the rules:
///
/// 1. Records are matched by id (device by `deviceId`, child by `profileId`, group by
///    `mlsGroupId`, key history by `parentPubkey`); fields are merged one by one.
/// 2. A change made on one side only is taken. The same change on both sides is taken once.
/// 3. Lists of strings (`memberPubkeys`, `mlsGroupIds`) merge as sets: what either side added is
///    in, what either side removed is out.
/// 4. A true conflict on a device's `status` is won by `revoked` (with its `revokedAt` and
///    `revocationReason`): a revocation always beats "active".
/// 5. Any other true conflict is won by the later copy: for a device, the side whose record
///    has the later `lastSeenAt`; otherwise the side whose vault has the later `updatedAt`;
///    ties go to "ours".
/// 6. A record removed on one side and changed on the other is kept, changed: nothing is lost.
/// 7. The result has revision max(ours, theirs) + 1, the base's `createdAt` and the later
///    `updatedAt`. Every true conflict is listed.
/// 8. A revoked device is in no group: a subkey that any of the three copies knows as a
///    revoked device's, and no device active in the result holds, is left out of every group,
///    whichever side added or kept it, and each one left out is listed as a conflict.
/// 9. A device revoked in the base stays revoked whatever the copies say: a copy that sets it
///    active again (a lost device's own stale copy) is listed as a conflict and not taken; and
///    it keeps its name (a copy's rename of it is listed as a conflict and not taken), as
///    `device rename` refuses one, so a revocation by the name, run again, finds no other device.
public enum VaultMerge {
    public struct Conflict: Sendable, Equatable, CustomStringConvertible {
        public let record: String
        public let field: String?
        public let ours: String
        public let theirs: String
        /// `ours`, `theirs`, `kept` for a record one side removed, or `removed` for a revoked
        /// device's subkey both sides have in a group (rule 8).
        public let taken: String
        public let rule: String

        public var description: String {
            "\(record)\(field.map { ": \($0)" } ?? ""): ours \(ours), theirs \(theirs) → \(taken) (\(rule))"
        }
    }

    public struct Result: Sendable {
        /// Revealed, version 2.
        public let document: VaultDocument
        public let conflicts: [Conflict]
    }

    /// All three must be revealed and of one household; v1 copies are migrated to v2 first.
    /// Merges, then checks the result against every rule of ``VaultCheck``: a merge that would
    /// write a vault that does not pass check is refused (``VaultError/Code/mergeFailsCheck``).
    public static func checkedMerge(base: VaultDocument, ours: VaultDocument, theirs: VaultDocument, access: VaultAccess) throws -> Result {
        let result = try merge(base: base, ours: ours, theirs: theirs)
        if access.parentKey == nil { try refuseParentOnlyChanges(result.document, ours: ours) }
        // Whoever merges: two renames, one on each side, may leave two devices a name picks
        // alike (a trial: "Den iPad" and "DEN IPAD", 0 conflicts), which a rename refuses.
        try VaultDevices.refuseNewAmbiguity(before: ours.devices, after: result.document.devices)
        let check = try VaultCheck.run(result.document, access: access)
        guard check.isClean else { throw VaultError.mergeFailsCheck(check.findings.map(\.description)) }
        return result
    }

    /// What a merge by the vault key alone may change in our schema 3 copy: what support's own
    /// commands change, nothing more, since nothing in the other copies proves who made their
    /// changes. A device may be revoked, renamed (as `device rename` would), made primary, its
    /// limit set; a group may lose members. Nothing is added (a device and its subkey, derived
    /// from the parent key; a group, or a member of one; a child), nothing dropped (a device
    /// record would be revoked with no event and no removal, a child's key lost for good),
    /// and no key, wrap key, key history, successor or group's child changes. Before schema 3
    /// the vault key writes all of it anyway. A hostile trial: support, granted `merge`,
    /// sealed a copy itself holding its own device in every group and its key as a child's,
    /// merged it in, and the log said "merged another copy in (0 conflicts)".
    static func refuseParentOnlyChanges(_ merged: VaultDocument, ours: VaultDocument) throws {
        guard merged.version >= 3 else { return }
        let ourDevices = Dictionary(ours.devices.map { ($0.deviceId, $0) }, uniquingKeysWith: { first, _ in first })
        guard Set(merged.devices.map(\.deviceId)) == Set(ourDevices.keys) else {
            throw VaultError.mergeNeedsParentKey("a device record our copy has not, or dropping one it has,")
        }
        for device in merged.devices where ourDevices[device.deviceId]!.subkeyPublicKey != device.subkeyPublicKey {
            throw VaultError.mergeNeedsParentKey("another subkey for the device \(QuotedInput(device.deviceId))")
        }
        // A revocation is for good: a device revoked in our copy is not brought back.
        for device in merged.devices where ourDevices[device.deviceId]!.status == .revoked && device.status != .revoked {
            throw VaultError.mergeNeedsParentKey("the device \(QuotedInput(device.deviceId)) active again, which our copy revoked,")
        }
        for device in merged.devices where device.deviceName != ourDevices[device.deviceId]!.deviceName {
            try VaultDevices.checkText(device.deviceName, field: "the merged name of device \(QuotedInput(device.deviceId))")
        }
        let ourGroups = Dictionary(ours.groupMemberships.map { ($0.mlsGroupId, $0) }, uniquingKeysWith: { first, _ in first })
        guard Set(merged.groupMemberships.map(\.mlsGroupId)) == Set(ourGroups.keys) else {
            throw VaultError.mergeNeedsParentKey("a group our copy has not, or dropping one it has,")
        }
        for group in merged.groupMemberships {
            let mine = ourGroups[group.mlsGroupId]!
            guard Set(group.memberPubkeys).isSubset(of: mine.memberPubkeys), group.childProfileId == mine.childProfileId else {
                throw VaultError.mergeNeedsParentKey("a member of group \(QuotedInput(group.mlsGroupId)) our copy has not, or the group given to another child,")
            }
        }
        let ourChildren = Dictionary(ours.childProfiles.map { ($0.profileId, $0) }, uniquingKeysWith: { first, _ in first })
        guard Set(merged.childProfiles.map(\.profileId)) == Set(ourChildren.keys) else {
            throw VaultError.mergeNeedsParentKey("a child profile our copy has not, or dropping one it has (and its key),")
        }
        for child in merged.childProfiles {
            let mine = ourChildren[child.profileId]!
            guard mine.npub == child.npub, mine.nsec == child.nsec, mine.mlsGroupIds == child.mlsGroupIds else {
                throw VaultError.mergeNeedsParentKey("another key or groups for the child profile \(QuotedInput(child.profileId))")
            }
        }
        guard merged.parentWrapKey == ours.parentWrapKey, merged.keyHistory == ours.keyHistory, merged.successor == ours.successor else {
            throw VaultError.mergeNeedsParentKey("another copy's wrap key, key history or successor")
        }
    }

    public static func merge(base: VaultDocument, ours: VaultDocument, theirs: VaultDocument) throws -> Result {
        guard base.parentPubkey == ours.parentPubkey, base.parentPubkey == theirs.parentPubkey else {
            throw VaultError.mergeOfSeveralHouseholds()
        }
        // The newest of the three versions, 2 at least: a schema 3 copy is never taken down
        // (its keyless children, its secrets sealed for the parent alone).
        let target = max(2, base.version, ours.version, theirs.version)
        // Every copy in one form: a secret revealed on one side and sealed on another would be
        // merged as two fields, and a child's key taken from one copy beside another's npub.
        // A vault-key holder has older copies revealed and schema 3 ones sealed: only the
        // parent key can bring them to one form.
        let copies = [base, ours, theirs]
        guard copies.allSatisfy(\.isFullyRevealed) || copies.allSatisfy({ $0.isFullySealed && $0.version == target }) else {
            throw VaultError.parentKeyNeeded("merging copies of schema version 3 with older ones, or sealed with revealed ones,")
        }
        let (b, o, t) = try (upgraded(base, to: target), upgraded(ours, to: target), upgraded(theirs, to: target))
        var merger = Merger(oursIsLater: o.updatedAt >= t.updatedAt)
        let baseValue = b.jsonValue(), oursValue = o.jsonValue(), theirsValue = t.jsonValue()

        let fixed: Set<String> = ["version", "revision", "parentPubkey", "createdAt", "updatedAt"]
        let arrays = Set(VaultDiff.recordArrays.map(\.field))
        var merged: [(key: String, value: JSONValue)] = [
            ("version", .int(target)),
            ("revision", .int(try VaultDocument.revision(after: max(o.revision ?? 1, t.revision ?? 1)))),
            ("parentPubkey", .string(o.parentPubkey.hex)),
            ("createdAt", .string(b.createdAt.rfc3339)),
            ("updatedAt", .string(max(o.updatedAt, t.updatedAt).rfc3339)),
        ]
        let scalars = merger.mergeFields(record: "vault", base: VaultDiff.fields(baseValue).filter { !fixed.contains($0.key) && !arrays.contains($0.key) },
                                         ours: VaultDiff.fields(oursValue).filter { !fixed.contains($0.key) && !arrays.contains($0.key) },
                                         theirs: VaultDiff.fields(theirsValue).filter { !fixed.contains($0.key) && !arrays.contains($0.key) },
                                         oursWins: merger.oursIsLater)
        merged += scalars
        for (field, id, name) in VaultDiff.recordArrays {
            merged.append((field, .array(merger.mergeRecords(name: name, id: id, base: baseValue[field], ours: oursValue[field], theirs: theirsValue[field]))))
        }
        var document = try VaultDocument(jsonValue: .object(merged))
        let leftOut = document.isRotationTombstone ? [] : leavingRevokedDevicesOut(&document, copies: (b, o, t))
        return Result(document: document, conflicts: merger.conflicts + leftOut)
    }

    /// Rule 8. Groups merge as sets and devices field by field, so one side's revocation (which
    /// takes the subkey out of its groups) and the other side's addition of that subkey to a
    /// group both survive: the revoked device would be back in the group with "0 conflicts"
    /// (issue 37). The same holds when one side renamed the device, added it to a new group, or
    /// dropped its record while the other kept its subkey in a group: the subkeys are gathered
    /// from every copy, so the revocation counts wherever it was made.
    private static func leavingRevokedDevicesOut(_ document: inout VaultDocument,
                                                 copies: (base: VaultDocument, ours: VaultDocument, theirs: VaultDocument)) -> [Conflict] {
        let active = Set(document.devices.filter { $0.status == .active }.map(\.subkeyPublicKey))
        var revoked: [String: String] = [:]  // subkey → device id
        for device in [document, copies.base, copies.ours, copies.theirs].flatMap(\.devices) where device.status == .revoked {
            if !active.contains(device.subkeyPublicKey), revoked[device.subkeyPublicKey] == nil { revoked[device.subkeyPublicKey] = device.deviceId }
        }
        guard !revoked.isEmpty else { return [] }
        func isMember(_ copy: VaultDocument, _ group: String, _ key: String) -> Bool {
            copy.groupMemberships.first { $0.mlsGroupId == group }?.memberPubkeys.contains(key) == true
        }
        func shown(_ copy: VaultDocument, _ group: String, _ key: String, _ id: String) -> String {
            if isMember(copy, group, key) { return "device '\(id)' in the group" }
            let revokedThere = copy.devices.contains { $0.subkeyPublicKey == key && $0.status == .revoked }
            return "device '\(id)' \(revokedThere ? "revoked, " : "")not in the group"
        }
        var conflicts: [Conflict] = []
        for index in document.groupMemberships.indices {
            let group = document.groupMemberships[index].mlsGroupId
            for key in document.groupMemberships[index].memberPubkeys {
                guard let id = revoked[key] else { continue }
                let oursHas = isMember(copies.ours, group, key), theirsHas = isMember(copies.theirs, group, key)
                conflicts.append(Conflict(record: "group '\(group)'", field: "memberPubkeys",
                                          ours: shown(copies.ours, group, key, id), theirs: shown(copies.theirs, group, key, id),
                                          taken: oursHas == theirsHas ? "removed" : (oursHas ? "theirs" : "ours"),
                                          rule: "a revoked device is in no group: its subkey is left out"))
            }
            document.groupMemberships[index].memberPubkeys.removeAll { revoked[$0] != nil }
        }
        return conflicts
    }

    /// A copy at `target`: as it is when it is there already (sealed ones too, as a vault-key
    /// holder of schema 3 vaults has them), else migrated, which needs its secrets revealed.
    private static func upgraded(_ document: VaultDocument, to target: Int) throws -> VaultDocument {
        document.version == target ? document : try Migration.migrate(document, to: target).0
    }

    private struct Merger {
        let oursIsLater: Bool
        var conflicts: [Conflict] = []

        init(oursIsLater: Bool) { self.oursIsLater = oursIsLater }

        mutating func mergeRecords(name: String, id: String, base: JSONValue?, ours: JSONValue?, theirs: JSONValue?) -> [JSONValue] {
            let b = VaultDiff.records(base, id: id), o = VaultDiff.records(ours, id: id), t = VaultDiff.records(theirs, id: id)
            // Each side's records by key, the first of a key as before: looked up by hash, so a
            // household of 45,000 devices merges in a moment, not minutes (a hostile trial).
            func byKey(_ records: [(key: String, value: JSONValue)]) -> [String: JSONValue] {
                Dictionary(records.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
            }
            let (bKeyed, oKeyed, tKeyed) = (byKey(b), byKey(o), byKey(t))
            var order: [String] = [], seen: Set<String> = []
            for key in o.map(\.key) + t.map(\.key) + b.map(\.key) where seen.insert(key).inserted { order.append(key) }
            var out: [JSONValue] = []
            for key in order {
                let record = "\(name) '\(key)'"
                let bb = bKeyed[key], oo = oKeyed[key], tt = tKeyed[key]
                switch (oo, tt) {
                case (nil, nil):
                    continue  // removed on both sides
                case (let only?, nil), (nil, let only?):
                    let removedBy = oo == nil ? "ours" : "theirs"
                    if bb == nil {
                        out.append(only)  // added on one side
                    } else if only == bb {
                        continue  // removed on one side, untouched on the other
                    } else {
                        conflicts.append(Conflict(record: record, field: nil, ours: oo == nil ? "removed" : "changed", theirs: tt == nil ? "removed" : "changed",
                                                  taken: "kept", rule: "removed by \(removedBy) but changed by the other: kept, nothing is lost"))
                        out.append(only)
                    }
                case (let ours?, let theirs?):
                    let oursWins = name == "device" ? Self.lastSeen(ours) >= Self.lastSeen(theirs) : oursIsLater
                    var fields = mergeFields(record: record, base: VaultDiff.fields(bb ?? .object([])), ours: VaultDiff.fields(ours),
                                             theirs: VaultDiff.fields(theirs), oursWins: oursWins)
                    if name == "device" {
                        fields = Self.revocationFields(fields, base: bb, ours: ours, theirs: theirs, oursWins: oursWins)
                        fields = keepingRevokedName(fields, record: record, base: bb, ours: ours, theirs: theirs)
                    }
                    out.append(.object(fields))
                }
            }
            return out
        }

        mutating func mergeFields(record: String, base: [(key: String, value: JSONValue)], ours: [(key: String, value: JSONValue)],
                                  theirs: [(key: String, value: JSONValue)], oursWins: Bool) -> [(key: String, value: JSONValue)] {
            var keys = ours.map(\.key)
            for key in theirs.map(\.key) + base.map(\.key) where !keys.contains(key) { keys.append(key) }
            var out: [(key: String, value: JSONValue)] = []
            for key in keys {
                let b = base.first { $0.key == key }?.value, o = ours.first { $0.key == key }?.value, t = theirs.first { $0.key == key }?.value
                let value: JSONValue?
                if key == "status", record.hasPrefix("device"), b == .string("revoked"), o != b || t != b {
                    // A revocation is final: a copy that sets a revoked device active again (its
                    // own stale copy, a lost device's) does not bring it back (issue 37).
                    value = b
                    conflicts.append(Conflict(record: record, field: key, ours: Self.show(key, o), theirs: Self.show(key, t), taken: "base",
                                              rule: "a revoked device stays revoked"))
                } else if key == "deviceName", record.hasPrefix("device"), base.first(where: { $0.key == "status" })?.value == .string("revoked"), o != b || t != b {
                    // A revoked device keeps its name, which `add` refuses to a new device, so a
                    // revocation by the name, run again, finds it and no other (a review: a
                    // copy's rename of it was merged, as `device rename` refuses it).
                    value = b
                    conflicts.append(Conflict(record: record, field: key, ours: Self.show(key, o), theirs: Self.show(key, t), taken: "base",
                                              rule: "a revoked device keeps its name"))
                } else if o == t {
                    value = o
                } else if o == b {
                    value = t
                } else if t == b {
                    value = o
                } else if case .array(let oa)? = o, case .array(let ta)? = t {
                    value = .array(Self.mergeSets(base: b.flatMap { if case .array(let ba) = $0 { ba } else { nil } } ?? [], ours: oa, theirs: ta))
                } else if key == "status" {
                    value = .string("revoked")  // a revocation always beats "active"
                    conflicts.append(Conflict(record: record, field: key, ours: Self.show(key, o), theirs: Self.show(key, t), taken: o == .string("revoked") ? "ours" : "theirs",
                                              rule: "a revocation beats active"))
                } else {
                    value = oursWins ? o : t
                    conflicts.append(Conflict(record: record, field: key, ours: Self.show(key, o), theirs: Self.show(key, t), taken: oursWins ? "ours" : "theirs",
                                              rule: record.hasPrefix("device") ? "later lastSeenAt wins, ours on a tie" : "later updatedAt wins, ours on a tie"))
                }
                if let value { out.append((key, value)) }
            }
            return out
        }

        /// revokedAt and revocationReason follow the merged status: dropped when active, taken
        /// from a revoking side when revoked, or from the base when both sides set it active.
        static func revocationFields(_ fields: [(key: String, value: JSONValue)], base: JSONValue?, ours: JSONValue, theirs: JSONValue,
                                     oursWins: Bool) -> [(key: String, value: JSONValue)] {
            var fields = fields.filter { $0.key != "revokedAt" && $0.key != "revocationReason" }
            guard fields.first(where: { $0.key == "status" })?.value == .string("revoked") else { return fields }
            let revoked = [ours, theirs].filter { $0["status"] == .string("revoked") }
            guard let source = revoked.count == 2 ? (oursWins ? ours : theirs) : revoked.first ?? base else { return fields }
            for key in ["revokedAt", "revocationReason"] {
                if let value = source[key] { fields.append((key, value)) }
            }
            return fields
        }

        static func mergeSets(base: [JSONValue], ours: [JSONValue], theirs: [JSONValue]) -> [JSONValue] {
            let removed = base.filter { !ours.contains($0) || !theirs.contains($0) }
            var out = ours.filter { !removed.contains($0) }
            for value in theirs where !out.contains(value) && !removed.contains(value) { out.append(value) }
            return out
        }

        /// A device one copy revoked keeps the name it was revoked under, whatever the other
        /// copy renamed it to (a review: one copy revoked "Bedroom iPad", the other renamed it
        /// "Den iPad", and the merge made a revoked "Den iPad", the name then free for a new
        /// device the same revocation, run again, revoked). Revoked in the base, the base's name
        /// stands already (mergeFields).
        mutating func keepingRevokedName(_ fields: [(key: String, value: JSONValue)], record: String, base: JSONValue?, ours: JSONValue,
                                         theirs: JSONValue) -> [(key: String, value: JSONValue)] {
            let revoked = JSONValue.string("revoked")
            guard fields.first(where: { $0.key == "status" })?.value == revoked, base?["status"] != revoked else { return fields }
            let oursRevoked = ours["status"] == revoked
            guard let name = (oursRevoked ? ours : theirs)["deviceName"], let index = fields.firstIndex(where: { $0.key == "deviceName" }),
                  fields[index].value != name else { return fields }
            conflicts.append(Conflict(record: record, field: "deviceName", ours: Self.show("deviceName", ours["deviceName"]),
                                      theirs: Self.show("deviceName", theirs["deviceName"]), taken: oursRevoked ? "ours" : "theirs",
                                      rule: "a revoked device keeps the name it was revoked under"))
            var kept = fields
            kept[index].value = name
            return kept
        }

        static func lastSeen(_ device: JSONValue) -> Timestamp {
            if case .string(let text)? = device["lastSeenAt"], let time = Timestamp(rfc3339: text) { return time }
            return Timestamp(seconds: .min)
        }

        static func show(_ key: String, _ value: JSONValue?) -> String {
            guard let value else { return "(none)" }
            return VaultDiff.secretFields.contains(key) ? "(secret)" : VaultDiff.display(value)
        }
    }
}

extension VaultError {
    /// A three-way merge of vaults that belong to more than one household.
    static func mergeOfSeveralHouseholds(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyMismatch, "the three vaults are not of one household", file: file, line: line)
    }
}

extension VaultError {
    /// A merge by the vault key alone whose result holds `what` from a copy other than ours:
    /// only the parent key makes it, and nothing in that copy proves the parent did.
    static func mergeNeedsParentKey(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.parentKeyNeeded, "merging in \(what) needs the parent key: only the parent adds devices, group members and keys, and nothing in another copy proves the parent did; nothing was written",
                   hint: "have the parent merge it with the parent key (--key-file), or make the change with the command for it", file: file, line: line)
    }
}
