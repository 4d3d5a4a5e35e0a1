import VaultCore

/// Made-up households for trials and benchmarks (`vault-tool sample-fleet`): random keys, two
/// to five iPads with their subkeys, one to three children with their own keys, and a few
/// groups, shaped like the app's vaults. Test data only: nothing about them is real, and the
/// parent keys are written in plain files beside them.
public enum SampleHousehold {
    /// One household's document, at `version` (1 or 2), created at `now`.
    public static func document(parent: SecretKey, version: Int, now: Timestamp, random: some RandomSource = SystemRandom()) throws -> VaultDocument {
        func pick(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(random.bytes(1)[0]) % (range.upperBound - range.lowerBound + 1)
        }
        let created = Timestamp(seconds: now.seconds - Int64(pick(30...700)) * 86_400)
        let deviceCount = pick(2...5)
        var devices: [DeviceRecord] = []
        for index in 0..<deviceCount {
            let id = Hex.encode(random.bytes(16)).uppercased()
            let deviceID = [id.prefix(8), id.dropFirst(8).prefix(4), id.dropFirst(12).prefix(4), id.dropFirst(16).prefix(4), id.dropFirst(20)].joined(separator: "-")
            devices.append(DeviceRecord(
                deviceId: deviceID, deviceName: ["Kitchen iPad", "Bedroom iPad", "Car iPad", "Grandma's iPad", "Playroom iPad"][index],
                isPrimary: index == 0, subkeyPublicKey: try Derivation.deviceSubkey(for: parent, deviceID: deviceID).publicKey.hex,
                addedAt: created, lastSeenAt: Timestamp(seconds: now.seconds - Int64(pick(0...60)) * 3_600), status: .active))
        }
        var children: [ChildProfile] = []
        var groups: [GroupMembership] = []
        for index in 0..<pick(1...3) {
            let key = try SecretKey.generate(using: random)
            let profile = "child-\(index + 1)"
            let group = Hex.encode(random.bytes(16))
            children.append(ChildProfile(profileId: profile, name: ["Emma", "Leo", "Mia"][index], theme: ["ocean", "forest", "space"][index],
                                         avatarData: nil, mlsGroupIds: [group],
                                         nsec: .revealed(try key.withUnsafeBytes { try SecretBytes(copying: $0) }), npub: key.publicKey))
            groups.append(GroupMembership(mlsGroupId: group, groupName: "\(children[index].name)'s channel", memberPubkeys: devices.map(\.subkeyPublicKey),
                                          childProfileId: profile, createdAt: created))
        }
        var document = VaultDocument(version: 1, parentPubkey: parent.publicKey, parentWrapKey: .revealed(try random.secret(32)),
                                     childProfiles: children, devices: devices, groupMemberships: groups, createdAt: created, updatedAt: now)
        if version >= 2 {
            (document, _) = try Migration.migrate(document, to: version)
        }
        return document
    }
}
