/// Making a plan from the current vault and the two keys (`rotation-planner plan`).
public enum RotationPlanner {
    /// The revocation reason the tombstone gives every device.
    public static let tombstoneReason = "key rotation"

    /// A device revoked this recently may have been lost or stolen, and it held the family's
    /// key (device links carry the nsec): a plan after it names its mode (issue 47).
    public static let recentRevocation: Int64 = 30 * 86_400

    /// A plan, and the devices revoked at a time the vault does not record (a schema 1 vault
    /// keeps none) when its mode was not given: routine still, since such a revocation may be
    /// years old, but one a minute old reads the same (a trial), so the caller says so.
    public struct Planned: Sendable {
        public var plan: RotationPlan
        public let undatedRevocations: [String]
    }

    /// `mode` nil: routine, unless a device was revoked in the last ``recentRevocation``
    /// before `createdAt`; then refused, since only the family knows whether the old key may be
    /// known to someone else, and a routine plan keeps every child's key.
    public static func plan(
        vault bytes: [UInt8], oldKey: SecretKey, newKey: SecretKey, mode: RotationPlan.Mode?, reason: String?,
        createdAt: Timestamp, template: TextTemplate
    ) throws -> RotationPlan {
        try planned(vault: bytes, oldKey: oldKey, newKey: newKey, mode: mode, reason: reason, createdAt: createdAt, template: template).plan
    }

    /// ``plan(vault:oldKey:newKey:mode:reason:createdAt:template:)``, with what its caller
    /// should say of a mode it chose (``Planned``).
    public static func planned(
        vault bytes: [UInt8], oldKey: SecretKey, newKey: SecretKey, mode: RotationPlan.Mode?, reason: String?,
        createdAt: Timestamp, template: TextTemplate
    ) throws -> Planned {
        guard oldKey.publicKey != newKey.publicKey else {
            throw VaultError.newKeyIsOldKey()
        }
        let document = try Vault.open(bytes, with: .parentKey(oldKey)).document
        // A plan is a record shown to whoever approves it: its reason keeps no key, as a
        // revocation's does not (a trial: `--reason "leak nsec1…"` wrote the new key into it),
        // nor a piece of a child's, which the run holds once the vault is open.
        if let reason { try RecordedText.check(reason, field: "the plan's reason") }
        // Each named with its id: two may share a name, or a name hold ", " (a hostile review).
        let undated = mode != nil ? [] : document.devices.filter { $0.status == .revoked && $0.revokedAt == nil }
            .map { "\(RecordedText.named($0.deviceName)) (\(RecordedText.recordedID($0.deviceId)))" }
        let mode = try mode ?? routineUnlessRecentlyRevoked(document, at: createdAt)
        let oldIdentity = RotationPlan.Identity(publicKey: oldKey.publicKey), newIdentity = RotationPlan.Identity(publicKey: newKey.publicKey)

        // A plan holds no secret, and is shown to whoever approves it: a name the vault holds
        // that reads as a key (a device a thief named, a vault sealed by another program) is
        // kept out of it, as a record keeps it out (a hostile trial found the parent key in a
        // 0644 plan). Ids and keys match devices; names are for people.
        var devices: [RotationPlan.Device] = []
        for device in document.devices {
            devices.append(RotationPlan.Device(
                deviceId: device.deviceId, deviceName: RecordedText.named(device.deviceName), status: device.status,
                oldSubkeyPublicKey: device.subkeyPublicKey,
                newSubkeyPublicKey: try Derivation.deviceSubkey(for: newKey, deviceID: device.deviceId).publicKey.hex,
                action: device.status == .active ? .relink : .retire
            ))
        }
        let oldSubkeys = Set(devices.map(\.oldSubkeyPublicKey))
        let newSubkeys = devices.filter { $0.action == .relink }.map(\.newSubkeyPublicKey)
        let groups = document.groupMemberships.map { group in
            RotationPlan.Group(mlsGroupId: group.mlsGroupId, groupName: RecordedText.named(group.groupName),
                               remove: group.memberPubkeys.filter { oldSubkeys.contains($0) }, add: newSubkeys)
        }
        let keyAction: RotationPlan.KeyAction = mode == .routine ? .keep : .replace
        // A child with no key of its own (schema 3) has no key to keep or replace.
        let children = document.childProfiles.compactMap { child in
            child.npub.map { RotationPlan.Child(profileId: child.profileId, name: RecordedText.named(child.name), npub: $0.npub, action: keyAction) }
        }

        var steps: [RotationPlan.Step] = []
        func step(_ id: String, _ key: String, _ values: [String: String] = [:]) throws {
            steps.append(RotationPlan.Step(id: id, text: try template.text("step." + key, values)))
        }
        try step("write-new-vault", "write-new-vault", ["newVaultPath": newIdentity.vaultPath])
        for device in devices where device.action == .relink {
            try step("relink-device:\(device.deviceId)", "relink-device", ["deviceName": device.deviceName, "deviceId": device.deviceId])
        }
        try step("publish-key-packages", "publish-key-packages")
        try step("add-new-subkeys", "add-new-subkeys", ["groupCount": "\(groups.count)", "addCount": "\(groups.map(\.add.count).reduce(0, +))"])
        try step("remove-old-subkeys", "remove-old-subkeys", ["removeCount": "\(groups.map(\.remove.count).reduce(0, +))"])
        if mode == .compromise, !children.isEmpty {
            try step("rekey-children", "rekey-children", ["childCount": "\(children.count)"])
        }
        try step("write-tombstone", "write-tombstone", ["oldVaultPath": oldIdentity.vaultPath])
        try step("new-recovery-sheet", "new-recovery-sheet")
        if mode == .compromise {
            try step("notify-families", "notify-families")
        }
        // Last: shares of the old key still restore the old key (issue 14).
        try step("new-family-shares", "new-family-shares")

        return Planned(plan: RotationPlan(
            mode: mode, reason: reason, createdAt: createdAt, old: oldIdentity, new: newIdentity,
            source: RotationPlan.Source(schemaVersion: document.version, migratedInMemory: document.version < 2,
                                        revision: document.revision ?? 0, sha256: Hex.encode(SHA256.hash(bytes))),
            devices: devices, groups: groups, children: children, wrapKey: keyAction,
            wrapKeyWarning: mode == .compromise ? try template.text("wrapKey.warning") : nil,
            steps: steps
        ), undatedRevocations: undated)
    }
}

extension RotationPlanner {
    /// Routine, or the refusal that names the devices revoked lately (the last one first).
    static func routineUnlessRecentlyRevoked(_ document: VaultDocument, at now: Timestamp) throws -> RotationPlan.Mode {
        let recent = document.devices.filter { device in
            // Revoked at most 30 days before the plan's time, or dated after it: a clock a few
            // minutes ahead on the support machine (a hostile trial) must not skip the question.
            device.status == .revoked && device.revokedAt.map { now.seconds - $0.seconds <= recentRevocation } == true
        }.sorted { $0.revokedAt! > $1.revokedAt! }
        guard let last = recent.first else { return .routine }
        throw VaultError.modeNeededAfterRevocation(count: recent.count, last: last, now: now)
    }
}

extension VaultError.Code {
    /// A plan without a mode after a recent revocation: whether the key may be known decides it.
    public static let modeNeededAfterRevocation = VaultError.Code(name: "modeNeededAfterRevocation", category: .usage)
}

extension VaultError {
    static func modeNeededAfterRevocation(count: Int, last: DeviceRecord, now: Timestamp, file: String = #fileID, line: UInt = #line) -> VaultError {
        let why = last.revocationReason.map { ", reason \(RecordedText.named($0))" } ?? ""
        let devices = count == 1 ? "a device was revoked" : "\(count) devices were revoked"
        let held = count == 1 ? "it held" : "each held"
        return VaultError(.modeNeededAfterRevocation,
                          "\(devices) in the last 30 days (the last: \(RecordedText.named(last.deviceName)), \(TimeSpan.relative(last.revokedAt!, now: now))\(why)), and \(held) the family's key: "
                          + "a routine plan keeps every child's key, which is wrong if one was lost or stolen; say which plan this is",
                          file: file, line: line)
    }
}
