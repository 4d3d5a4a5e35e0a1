import Testing
@testable import VaultCore

/// A device's life in the vault besides revocation (issue 47, seed 000 Flow 2): added with the
/// subkey the app derives and into every group the household's devices are in, promoted,
/// renamed, and held to the household's device limit; every change checked by `check`.
@Suite struct VaultDevicesTests {
    let random = SeededRandom(seed: 0x47)
    let now = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!

    func household() throws -> (SecretKey, VaultDocument) {
        let parent = try SecretKey.generate(using: random)
        let document = try DocumentGenerator(random: random).household(parent: parent, devices: 3...8, children: 0...3, groups: 3...12)
        return (parent, try Migration.migrate(document, to: 2).0)
    }

    @Test func anAddedDeviceHasTheAppsSubkeyAndJoinsEveryGroupOfTheHousehold() throws {
        for _ in 0..<20 {
            let (parent, document) = try household()
            let id = Hex.encode(random.bytes(8)).uppercased()
            let outcome = try VaultDevices.apply(.add(id: id, name: "Sam's iPad"), to: document, parent: parent, now: now)
            let added = try #require(outcome.document.devices.first { $0.deviceId == id })
            let derived = try Derivation.deviceSubkey(for: parent, deviceID: id).publicKey.hex
            #expect(added.subkeyPublicKey == derived)
            #expect(added.status == .active && added.addedAt == now && !added.isPrimary)
            let household = Set(document.devices.filter { $0.status == .active }.map(\.subkeyPublicKey))
            let groups = document.groupMemberships.filter { $0.memberPubkeys.contains(where: household.contains) }.map(\.mlsGroupId)
            #expect(outcome.operations.map { $0["group"] } == groups.map { .string($0) })
            #expect(outcome.document.groupMemberships.filter { $0.memberPubkeys.contains(added.subkeyPublicKey) }.map(\.mlsGroupId) == groups)
            #expect(outcome.document.revision == document.revision! + 1)
            #expect(try VaultCheck.run(outcome.document, access: .parentKey(parent)).isClean)
            // Run again on its result: nothing to change, and the same additions again.
            let again = try VaultDevices.apply(.add(id: id, name: "Sam's iPad"), to: outcome.document, parent: parent, now: now)
            #expect(again.unchanged && again.operations == outcome.operations)
        }
    }

    @Test func anAddIsRefusedPastTheLimitForATakenIdOrNameAndWithoutTheParentKey() throws {
        let (parent, document) = try household()
        let active = document.devices.filter { $0.status == .active }
        var limited = document
        limited.deviceLimit = active.count
        #expect(throws: VaultError(.deviceLimitReached, "")) { try VaultDevices.apply(.add(id: "N1", name: "New"), to: limited, parent: parent, now: now) }
        let taken = active[0]
        #expect(throws: VaultError(.deviceExists, "")) { try VaultDevices.apply(.add(id: taken.deviceId, name: "New"), to: document, parent: parent, now: now) }
        #expect(throws: VaultError(.deviceNameTaken, "")) {
            try VaultDevices.apply(.add(id: "N1", name: taken.deviceName.uppercased()), to: document, parent: parent, now: now)
        }
        #expect(throws: VaultError(.parentKeyNeededToAddDevice, "")) { try VaultDevices.apply(.add(id: "N1", name: "New"), to: document, parent: nil, now: now) }
        for bad in ["", " padded", "line\nbreak", "zero\u{200B}width", String(repeating: "x", count: 101)] {
            #expect(throws: VaultError(.deviceTextInvalid, "")) { try VaultDevices.apply(.add(id: "N1", name: bad), to: document, parent: parent, now: now) }
        }
    }

    @Test func promoteRenameAndLimit() throws {
        let (parent, document) = try household()
        let secondary = try #require(document.devices.first { $0.status == .active && !$0.isPrimary })
        let oldPrimary = try #require(document.devices.first { $0.isPrimary })
        let promoted = try VaultDevices.apply(.promote(secondary.deviceName), to: document, parent: nil, now: now).document
        #expect(promoted.devices.filter(\.isPrimary).map(\.deviceId) == [secondary.deviceId])
        #expect(promoted.devices.first { $0.deviceId == oldPrimary.deviceId }?.status == .active)
        #expect(try VaultCheck.run(promoted, access: .parentKey(parent)).isClean)
        let renamed = try VaultDevices.apply(.rename(secondary.deviceId, to: "Grandma's iPad"), to: promoted, parent: nil, now: now).document
        #expect(renamed.devices.first { $0.deviceId == secondary.deviceId }?.deviceName == "Grandma's iPad")
        let active = document.devices.filter { $0.status == .active }.count
        #expect(throws: VaultError(.deviceLimitBelowActive, "")) { try VaultDevices.apply(.limit(active - 1), to: document, parent: nil, now: now) }
        #expect(throws: VaultError(.deviceLimitInvalid, "")) { try VaultDevices.apply(.limit(0), to: document, parent: nil, now: now) }
        let limited = try VaultDevices.apply(.limit(active), to: document, parent: nil, now: now).document
        #expect(limited.deviceLimit == active)
        #expect(try VaultDevices.apply(.limit(nil), to: limited, parent: nil, now: now).document.deviceLimit == nil)
        if let revoked = document.devices.first(where: { $0.status == .revoked }) {
            #expect(throws: VaultError(.deviceNotActive, "")) { try VaultDevices.apply(.promote(revoked.deviceId), to: document, parent: nil, now: now) }
        }
        #expect(throws: VaultError(.deviceNotNamed, "")) { try VaultDevices.apply(.promote("no such device at all"), to: document, parent: nil, now: now) }
    }
}
