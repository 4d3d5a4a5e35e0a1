@testable import VaultCore

/// Random but valid households for property-style tests: random counts of children, devices,
/// groups and revoked devices, and optional fields sometimes missing.
struct DocumentGenerator {
    let random: SeededRandom

    func household(parent: SecretKey) throws -> VaultDocument {
        try household(parent: parent, devices: 1...8, children: 0...4, groups: 0...6)
    }

    /// A household with counts drawn from the given ranges; groups mix this household's active
    /// subkeys with up to three keys of other households.
    func household(parent: SecretKey, devices deviceRange: ClosedRange<Int>, children childRange: ClosedRange<Int>,
                   groups groupRange: ClosedRange<Int>) throws -> VaultDocument {
        let start = Timestamp(seconds: 1_700_000_000 + Int64(random.int(0...10_000_000)))
        let later = Timestamp(seconds: start.seconds + Int64(random.int(0...5_000_000)), nanoseconds: Int32(random.int(0...999)) * 1_000_000)
        let deviceCount = random.int(deviceRange)
        let primary = random.int(0...(deviceCount - 1))
        var devices: [DeviceRecord] = []
        for index in 0..<deviceCount {
            let id = "device-\(index)-\(random.int(0...99_999))"
            devices.append(DeviceRecord(
                deviceId: id, deviceName: "iPad \(index) \u{2014} \(random.int(0...9))", isPrimary: index == primary,
                subkeyPublicKey: try Derivation.deviceSubkey(for: parent, deviceID: id).publicKey.hex,
                addedAt: start, lastSeenAt: later,
                status: index != primary && random.int(0...3) == 0 ? .revoked : .active
            ))
        }
        var groups: [GroupMembership] = []
        var children: [ChildProfile] = []
        for index in 0..<random.int(childRange) {
            let key = try SecretKey.generate(using: random)
            children.append(ChildProfile(
                profileId: "child-\(index)", name: "Child \(index)", theme: ["ocean", "forest", "space"][random.int(0...2)],
                avatarData: random.int(0...1) == 0 ? nil : random.bytes(random.int(0...64)), mlsGroupIds: [],
                nsec: .revealed(try key.withUnsafeBytes { try SecretBytes(copying: $0) }), npub: key.publicKey
            ))
        }
        let strangers = try (0..<5).map { _ in try SecretKey.generate(using: random).publicKey.hex }
        for index in 0..<random.int(groupRange) {
            let child = children.isEmpty || random.int(0...1) == 0 ? nil : children[random.int(0...(children.count - 1))].profileId
            let members = devices.filter { $0.status == .active }.map(\.subkeyPublicKey)
                + (0..<random.int(0...3)).map { _ in strangers[random.int(0...4)] }
            groups.append(GroupMembership(mlsGroupId: "group-\(index)", groupName: "Group \(index)", memberPubkeys: members, childProfileId: child, createdAt: start))
            if let child, let position = children.firstIndex(where: { $0.profileId == child }) {
                children[position].mlsGroupIds.append("group-\(index)")
            }
        }
        return VaultDocument(
            version: 1, parentPubkey: parent.publicKey, parentWrapKey: .revealed(try random.secret(32)),
            childProfiles: children, devices: devices, groupMemberships: groups, createdAt: start, updatedAt: later
        )
    }

    /// A v2 household using the v2 fields v1 cannot carry: a revision, revocation times and
    /// reasons, key history, a device limit.
    func householdV2(parent: SecretKey) throws -> VaultDocument {
        var document = try household(parent: parent)
        document.version = 2
        document.revision = random.int(1...50)
        for index in document.devices.indices where document.devices[index].status == .revoked {
            document.devices[index].revokedAt = Timestamp(seconds: document.createdAt.seconds + Int64(random.int(0...1000)))
            document.devices[index].revocationReason = random.int(0...1) == 0 ? nil : "lost"
        }
        document.keyHistory = try (0..<random.int(0...2)).map { _ in
            KeyHistoryEntry(parentPubkey: try SecretKey.generate(using: random).publicKey, retiredAt: document.createdAt, reason: .routine)
        }
        document.deviceLimit = random.int(0...1) == 0 ? nil : 10
        return document
    }
}
