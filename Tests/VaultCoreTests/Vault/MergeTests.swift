import Testing
@testable import VaultCore

/// The concurrent cases of issue 4: two devices editing one vault at once.
@Suite struct MergeTests {
    let random = SeededRandom(seed: 0xabc)

    func base() throws -> (SecretKey, VaultDocument) {
        let parent = try SecretKey.generate(using: random)
        var document = try DocumentGenerator(random: random).household(parent: parent)
        while document.childProfiles.isEmpty || document.groupMemberships.isEmpty || document.devices.count < 3 {
            document = try DocumentGenerator(random: random).household(parent: parent)
        }
        for index in document.devices.indices where !document.devices[index].isPrimary {
            document.devices[index].status = .active  // every device active, so each case starts clean
        }
        return (parent, try Migration.migrate(document, to: 2).0)
    }

    func later(_ document: VaultDocument, by seconds: Int64) -> VaultDocument {
        var copy = document
        copy.updatedAt = Timestamp(seconds: document.updatedAt.seconds + seconds)
        copy.revision = (document.revision ?? 1) + 1
        return copy
    }

    func device(_ parent: SecretKey, _ id: String, at time: Timestamp) throws -> DeviceRecord {
        DeviceRecord(deviceId: id, deviceName: id, isPrimary: false, subkeyPublicKey: try Derivation.deviceSubkey(for: parent, deviceID: id).publicKey.hex,
                     addedAt: time, lastSeenAt: time, status: .active)
    }

    @Test func bothSidesAddDifferentDevices() throws {
        let (parent, base) = try base()
        var ours = later(base, by: 10), theirs = later(base, by: 20)
        ours.devices.append(try device(parent, "ours-new", at: ours.updatedAt))
        theirs.devices.append(try device(parent, "theirs-new", at: theirs.updatedAt))
        theirs.revision = 9
        let result = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(result.conflicts.isEmpty)
        #expect(Set(result.document.devices.map(\.deviceId)) == Set(base.devices.map(\.deviceId) + ["ours-new", "theirs-new"]))
        #expect(result.document.revision == 10)
        #expect(result.document.updatedAt == theirs.updatedAt && result.document.createdAt == base.createdAt)
        #expect(try VaultCheck.run(result.document, access: .parentKey(parent)).isClean)
    }

    @Test func oneRevokesWhileTheOtherRenamesTheSameDevice() throws {
        let (parent, base) = try base()
        let target = base.devices.firstIndex { !$0.isPrimary }!
        var ours = later(base, by: 10), theirs = later(base, by: 20)
        ours.devices[target].status = .revoked
        ours.devices[target].revokedAt = ours.updatedAt
        ours.devices[target].revocationReason = "stolen"
        theirs.devices[target].deviceName = "Renamed iPad"
        let merged = try VaultMerge.merge(base: base, ours: ours, theirs: theirs).document.devices[target]
        #expect(merged.status == .revoked && merged.revokedAt == ours.updatedAt && merged.revocationReason == "stolen")
        #expect(merged.deviceName == "Renamed iPad")
        let result = try VaultMerge.merge(base: base, ours: theirs, theirs: ours)
        #expect(result.document.devices.first { $0.deviceId == merged.deviceId }?.status == .revoked)
        #expect(try VaultCheck.run(result.document, access: .parentKey(parent)).isClean)
    }

    @Test func bothEditTheSameChild() throws {
        let (parent, base) = try base()
        var ours = later(base, by: 10), theirs = later(base, by: 20)
        ours.childProfiles[0].name = "Name from ours"
        ours.childProfiles[0].theme = "theme from ours"
        theirs.childProfiles[0].name = "Name from theirs"
        theirs.childProfiles[0].mlsGroupIds.append("group-0")
        let result = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        let child = result.document.childProfiles[0]
        #expect(child.name == "Name from theirs")  // true conflict: their vault is later
        #expect(child.theme == "theme from ours")  // changed on one side only
        #expect(child.mlsGroupIds.contains("group-0"))
        #expect(result.conflicts.map(\.field) == ["name"])
        #expect(result.conflicts.first?.taken == "theirs")
        #expect(result.document.childProfiles[0].nsec == base.childProfiles[0].nsec)
        _ = parent
    }

    @Test func groupRemovedOnOneSideAndChangedOnTheOther() throws {
        let (parent, base) = try base()
        let group = base.groupMemberships[0]
        var ours = later(base, by: 10), theirs = later(base, by: 20)
        ours.groupMemberships.removeAll { $0.mlsGroupId == group.mlsGroupId }
        for index in ours.childProfiles.indices { ours.childProfiles[index].mlsGroupIds.removeAll { $0 == group.mlsGroupId } }
        theirs.groupMemberships[0].groupName = "Renamed group"
        theirs.groupMemberships[0].memberPubkeys.append(try SecretKey.generate(using: random).publicKey.hex)
        let result = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        let kept = try #require(result.document.groupMemberships.first { $0.mlsGroupId == group.mlsGroupId })
        #expect(kept.groupName == "Renamed group" && kept.memberPubkeys.count == group.memberPubkeys.count + 1)
        #expect(result.conflicts.contains { $0.record == "group '\(group.mlsGroupId)'" && $0.taken == "kept" })
        // A group removed on one side and untouched on the other goes.
        let untouched = try VaultMerge.merge(base: base, ours: ours, theirs: later(base, by: 5))
        #expect(!untouched.document.groupMemberships.contains { $0.mlsGroupId == group.mlsGroupId })
        _ = parent
    }

    @Test func memberListsMergeAsSets() throws {
        let (_, base) = try base()
        var ours = later(base, by: 10), theirs = later(base, by: 20)
        let added = try SecretKey.generate(using: random).publicKey.hex, alsoAdded = try SecretKey.generate(using: random).publicKey.hex
        let removed = base.groupMemberships[0].memberPubkeys.first!
        ours.groupMemberships[0].memberPubkeys.append(added)
        theirs.groupMemberships[0].memberPubkeys.append(alsoAdded)
        theirs.groupMemberships[0].memberPubkeys.removeAll { $0 == removed }
        let members = try VaultMerge.merge(base: base, ours: ours, theirs: theirs).document.groupMemberships[0].memberPubkeys
        #expect(members.contains(added) && members.contains(alsoAdded) && !members.contains(removed))
    }
}
