import Testing
@testable import VaultCore

@Suite struct MigrationTests {
    let random = SeededRandom(seed: 0x0102)

    /// Thousands of generated households: 1 → 2 → 1 gives back the same JSON values, the v2
    /// form passes check, and every v1 value is in the v2 document.
    @Test func generatedHouseholdsRoundTrip() throws {
        let parent = try SecretKey.generate(using: random)
        for _ in 0..<3000 {
            let document = try DocumentGenerator(random: random).household(parent: parent)
            let (up, report) = try Migration.migrate(document, to: 2)
            #expect(up.version == 2 && up.revision == 1 && report.losses.isEmpty)
            #expect(up.devices.allSatisfy { ($0.status == .revoked) == ($0.revokedAt == document.updatedAt) })
            let (down, back) = try Migration.migrate(up, to: 1)
            #expect(back.losses.isEmpty)
            #expect(down.jsonValue() == document.jsonValue())
        }
    }

    /// The same through whole vault files: sealed, migrated, re-opened, checked, and back.
    @Test func generatedVaultFilesRoundTrip() throws {
        for _ in 0..<150 {
            let parent = try SecretKey.generate(using: random)
            let document = try DocumentGenerator(random: random).household(parent: parent)
            let access = VaultAccess.parentKey(parent)
            let v1 = try Vault.seal(document, with: parent, random: random)
            let v2 = try VaultMigration.migrate(v1, access: access, to: 2, logVerified: true, random: random)
            let opened = try Vault.open(v2.bytes, with: access)
            #expect(opened.header.schemaVersion == 2)
            #expect(try VaultCheck.run(opened.document, access: access).isClean)
            let back = try VaultMigration.migrate(v2.bytes, access: access, to: 1, logVerified: true, random: random)
            #expect(try Vault.open(back.bytes, with: access).document.revealed(with: access).jsonValue() == document.jsonValue())
        }
    }

    @Test func lossyDowngradeIsRefusedThenListed() throws {
        let parent = try SecretKey.generate(using: random)
        var document = try DocumentGenerator(random: random).householdV2(parent: parent)
        document.deviceLimit = 4
        #expect(throws: VaultError(.lossyDowngrade, "")) { try Migration.migrate(document, to: 1) }
        let (down, report) = try Migration.migrate(document, to: 1, allowLossy: true)
        #expect(down.version == 1 && down.deviceLimit == nil && down.keyHistory.isEmpty)
        #expect(report.losses.contains("deviceLimit 4"))
    }

    @Test func migrationNeedsRevealedSecretsAndAKnownTarget() throws {
        let parent = try SecretKey.generate(using: random)
        let document = try DocumentGenerator(random: random).household(parent: parent)
        #expect(throws: VaultError(.secretsNotRevealed, "")) { try Migration.migrate(document.sealed(with: .parentKey(parent)), to: 2) }
        #expect(throws: VaultError(.unsupportedVersion, "")) { try Migration.migrate(document, to: 4) }
    }

    @Test func expectRevisionGuards() throws {
        let parent = try SecretKey.generate(using: random)
        let v1 = try Vault.seal(DocumentGenerator(random: random).household(parent: parent), with: parent)
        #expect(throws: VaultError(.staleRevision, "")) { try VaultMigration.migrate(v1, access: .parentKey(parent), to: 2, expectRevision: 1, logVerified: true) }
        #expect(try VaultMigration.migrate(v1, access: .parentKey(parent), to: 2, expectRevision: 0, logVerified: true).report.to == 2)
    }

    /// In v2 a sealed secret is bound to its place: moved to another profile, it does not open.
    @Test func v2BindsSecretsToTheirPlace() throws {
        let parent = try SecretKey.generate(using: random)
        var document = try DocumentGenerator(random: random).householdV2(parent: parent)
        let key = try SecretKey.generate(using: random)
        for id in ["a", "b"] {
            document.childProfiles.append(ChildProfile(profileId: id, name: id, theme: "t", avatarData: nil, mlsGroupIds: [],
                                                       nsec: .revealed(try key.withUnsafeBytes { try SecretBytes(copying: $0) }), npub: key.publicKey))
        }
        var sealed = try document.sealed(with: .parentKey(parent), random: random)
        let count = sealed.childProfiles.count
        sealed.childProfiles[count - 1].nsec = sealed.childProfiles[count - 2].nsec
        #expect(throws: VaultError(.authenticationFailed, "")) { try sealed.revealed(with: .parentKey(parent)) }
    }

    @Test func v2CheckRules() throws {
        let parent = try SecretKey.generate(using: random)
        var document = try DocumentGenerator(random: random).householdV2(parent: parent)
        let active = document.devices.firstIndex { $0.status == .active }!
        document.devices[active].revokedAt = document.createdAt
        document.deviceLimit = 0
        document.revision = 0
        document.successor = Successor(parentPubkey: parent.publicKey, vaultPath: "vaults/x.vault", rotatedAt: document.createdAt)
        let rules = Set(try VaultCheck.run(document, access: .parentKey(parent)).findings.map(\.rule))
        #expect(rules.isSuperset(of: [.revocationFields, .deviceLimit, .revision, .successor]))
    }
}
