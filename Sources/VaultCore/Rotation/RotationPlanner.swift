/// Making a plan from the current vault and the two keys (`rotation-planner plan`).
public enum RotationPlanner {
    /// The revocation reason the tombstone gives every device.
    public static let tombstoneReason = "key rotation"

    public static func plan(
        vault bytes: [UInt8], oldKey: SecretKey, newKey: SecretKey, mode: RotationPlan.Mode, reason: String?,
        createdAt: Timestamp, template: TextTemplate
    ) throws -> RotationPlan {
        guard oldKey.publicKey != newKey.publicKey else {
            throw VaultError.newKeyIsOldKey()
        }
        let document = try Vault.open(bytes, with: .parentKey(oldKey)).document
        let oldIdentity = RotationPlan.Identity(publicKey: oldKey.publicKey), newIdentity = RotationPlan.Identity(publicKey: newKey.publicKey)

        var devices: [RotationPlan.Device] = []
        for device in document.devices {
            devices.append(RotationPlan.Device(
                deviceId: device.deviceId, deviceName: device.deviceName, status: device.status,
                oldSubkeyPublicKey: device.subkeyPublicKey,
                newSubkeyPublicKey: try Derivation.deviceSubkey(for: newKey, deviceID: device.deviceId).publicKey.hex,
                action: device.status == .active ? .relink : .retire
            ))
        }
        let oldSubkeys = Set(devices.map(\.oldSubkeyPublicKey))
        let newSubkeys = devices.filter { $0.action == .relink }.map(\.newSubkeyPublicKey)
        let groups = document.groupMemberships.map { group in
            RotationPlan.Group(mlsGroupId: group.mlsGroupId, groupName: group.groupName,
                               remove: group.memberPubkeys.filter { oldSubkeys.contains($0) }, add: newSubkeys)
        }
        let keyAction: RotationPlan.KeyAction = mode == .routine ? .keep : .replace
        // A child with no key of its own (schema 3) has no key to keep or replace.
        let children = document.childProfiles.compactMap { child in
            child.npub.map { RotationPlan.Child(profileId: child.profileId, name: child.name, npub: $0.npub, action: keyAction) }
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

        return RotationPlan(
            mode: mode, reason: reason, createdAt: createdAt, old: oldIdentity, new: newIdentity,
            source: RotationPlan.Source(schemaVersion: document.version, migratedInMemory: document.version < 2,
                                        revision: document.revision ?? 0, sha256: Hex.encode(SHA256.hash(bytes))),
            devices: devices, groups: groups, children: children, wrapKey: keyAction,
            wrapKeyWarning: mode == .compromise ? try template.text("wrapKey.warning") : nil,
            steps: steps
        )
    }
}
