import Testing
@testable import VaultCore

/// Schema 3 (issue 45, docs/vault-format.md §9): the secrets sit under a key only the parent
/// key derives, so the vault key support holds opens the structure and never a child's key or
/// the wrap key; and a child may have no key of its own.
@Suite struct Schema3Tests {
    let random = SeededRandom(seed: 0x0303)

    func v3Vault(children: ClosedRange<Int> = 1...4) throws -> (SecretKey, VaultDocument, [UInt8]) {
        let parent = try SecretKey.generate(using: random)
        let document = try DocumentGenerator(random: random).household(parent: parent, devices: 2...6, children: children, groups: 1...4)
        let (v3, report) = try Migration.migrate(document, to: 3)
        #expect(report.losses.isEmpty && v3.version == 3)
        return (parent, v3, try Vault.seal(v3, with: parent, random: random))
    }

    /// The secrets key of the example household (Examples/household.nsec), as the Python
    /// `cryptography` package's HKDF computes it (docs/vault-format.md §9.1), and not its vault key.
    @Test func theSecretsKeyIsItsOwnDerivation() throws {
        var text = Array("nsec1lqt48lfawqu2gtwfzh0q25qkhfmgfur3suk5r632shu6fm8y9z9sncnftt".utf8)
        let parent = try SecretKey(parsing: SecretBytes(consuming: &text), what: "the example key")
        let secrets = try Derivation.secretsKey(for: parent).secret.withUnsafeBytes { Hex.encode($0) }
        let vault = try Derivation.vaultKey(for: parent).secret.withUnsafeBytes { Hex.encode($0) }
        #expect(secrets == "9ff5aaad19b3ee01fc2dbfa9578c18681dc7bd979f739c0381dd186c098836c1")
        #expect(vault == "d727917d50873765509e32b3875462f52dc7f945f15c200f32cd060a4d45cbaf")
    }

    /// No sealed field of a v3 vault opens under the vault key, with v3's binding or v2's; each
    /// opens under the secrets key; and the vault key alone is told it needs the parent key.
    @Test func theVaultKeyOpensNoSecretOfAVersion3Vault() throws {
        for _ in 0..<20 {
            let (parent, _, bytes) = try v3Vault()
            let vaultKey = try Derivation.vaultKey(for: parent)
            let opened = try Vault.open(bytes, with: .vaultKey(vaultKey)).document
            #expect(opened.isFullySealed)
            let asVaultKey = FieldKey(secret: vaultKey.secret), secretsKey = try Derivation.secretsKey(for: parent)
            for (secret, field) in [(opened.parentWrapKey!, SecretField.wrapKey)] + opened.childProfiles.map({ ($0.nsec!, SecretField.childNsec(profileId: $0.profileId)) }) {
                for version in [2, 3] {
                    #expect(throws: VaultError(.authenticationFailed, "")) { try secret.reveal(asVaultKey, field: field, version: version) }
                }
                #expect(try secret.reveal(secretsKey, field: field, version: 3).count == 32)
            }
            #expect(throws: VaultError(.parentKeyNeeded, "")) { try opened.revealed(with: .vaultKey(vaultKey)) }
            #expect(try opened.revealed(with: .parentKey(parent)).isFullyRevealed)
        }
    }

    /// 2 → 3 → 2 gives back the same values, through whole files, with the parent key.
    @Test func version2To3AndBackLosesNothing() throws {
        for _ in 0..<60 {
            let parent = try SecretKey.generate(using: random)
            let access = VaultAccess.parentKey(parent)
            let (v2, _) = try Migration.migrate(DocumentGenerator(random: random).household(parent: parent), to: 2)
            let up = try VaultMigration.migrate(Vault.seal(v2, with: parent, random: random), access: access, to: 3, logVerified: true, random: random)
            #expect(try Vault.open(up.bytes, with: access).header.schemaVersion == 3)
            #expect(try VaultCheck.run(Vault.open(up.bytes, with: access).document, access: access).isClean)
            let down = try VaultMigration.migrate(up.bytes, access: access, to: 2, logVerified: true, random: random)
            // A caller that reads no logs (a fleet run) does not take a schema 3 vault down.
            #expect(throws: VaultError(.downgradeWithoutItsLog, "")) { try VaultMigration.migrate(up.bytes, access: access, to: 2, logVerified: false, random: random) }
            #expect(try Vault.open(down.bytes, with: access).document.revealed(with: access).jsonValue() == v2.jsonValue())
            let fromOne = try VaultMigration.migrate(Vault.seal(try Migration.migrate(v2, to: 1).0, with: parent, random: random), access: access, to: 3, logVerified: true, random: random)
            #expect(fromOne.report.from == 1 && fromOne.report.to == 3)
        }
    }

    /// A migration to 3 with the vault key alone is refused before the vault is opened.
    @Test func aMigrationTo3NeedsTheParentKey() throws {
        let parent = try SecretKey.generate(using: random)
        let v2 = try Vault.seal(Migration.migrate(DocumentGenerator(random: random).household(parent: parent), to: 2).0, with: parent, random: random)
        #expect(throws: VaultError(.parentKeyNeeded, "")) {
            try VaultMigration.migrate(v2, access: .vaultKey(Derivation.vaultKey(for: parent)), to: 3, logVerified: true, random: random)
        }
        #expect(throws: VaultError(.parentKeyNeeded, "")) {
            try VaultMigration.migrate(Array("not even a vault".utf8), access: .vaultKey(Derivation.vaultKey(for: parent)), to: 3, logVerified: true, random: random)
        }
    }

    /// Support's work with the vault key alone: a revocation written back carries every sealed
    /// field byte for byte, and check says which rules it could not run.
    @Test func aVaultKeyHolderRewritesAVersion3VaultCarryingItsSecrets() throws {
        let (parent, _, bytes) = try v3Vault()
        let access = VaultAccess.vaultKey(try Derivation.vaultKey(for: parent))
        var document = try Vault.open(bytes, with: access).document
        let before = document
        document.devices[0].deviceName = "renamed by support"
        try document.raiseRevision()
        let written = try Vault.sealVerified(document, access: access, random: random)
        let after = try Vault.open(written, with: access).document
        #expect(after.parentWrapKey == before.parentWrapKey && after.childProfiles.map(\.nsec) == before.childProfiles.map(\.nsec))
        #expect(try Vault.open(written, with: .parentKey(parent)).document.revealed(with: .parentKey(parent)).devices[0].deviceName == "renamed by support")
        let check = try VaultCheck.run(after, access: access)
        #expect(check.isClean && Set(check.skipped.map(\.rule)) == [.deviceSubkey, .childKey, .wrapKey])
        // A new secret needs the parent key.
        var withNewSecret = after
        withNewSecret.parentWrapKey = .revealed(try random.secret(32))
        #expect(throws: VaultError(.parentKeyNeeded, "")) { try Vault.sealVerified(withNewSecret, access: access, random: random) }
    }

    /// A child with no key of its own (seed 001): read and written in v3, refused in v2 and by
    /// half (a key without its npub or the reverse); 3 → 2 drops it only when allowed.
    @Test func aChildMayHaveNoKeyFromVersion3() throws {
        let (parent, revealed, _) = try v3Vault(children: 2...3)
        var document = revealed
        let keyless = document.childProfiles[0].profileId
        document.childProfiles[0].nsec = nil
        document.childProfiles[0].npub = nil
        if !document.groupMemberships.isEmpty { document.groupMemberships[0].childProfileId = keyless }
        let bytes = try Vault.seal(document, with: parent, random: random)
        let access = VaultAccess.parentKey(parent)
        let opened = try Vault.open(bytes, with: access).document
        #expect(!opened.childProfiles[0].hasKey && opened.childProfiles[1].hasKey)
        #expect(try VaultCheck.run(opened, access: access).isClean)

        var json = try document.sealed(with: access, random: random).jsonValue()
        #expect(try !VaultDocument(jsonValue: json).childProfiles[0].hasKey)
        guard case .object(var fields) = json, let index = fields.firstIndex(where: { $0.key == "childProfiles" }),
              case .array(var children) = fields[index].value, case .object(var first) = children[0] else { Issue.record("no child"); return }
        first.append(("npub", .string(try SecretKey.generate(using: random).publicKey.npub)))
        children[0] = .object(first)
        fields[index].value = .array(children)
        json = .object(fields)
        #expect(throws: VaultError.self) { try VaultDocument(jsonValue: json) }
        // In v2 a child without a key is no child at all.
        var v2JSON = document.jsonValue()
        if case .object(var top) = v2JSON { top[0].value = .int(2); v2JSON = .object(top) }
        #expect(throws: VaultError.self) { try VaultDocument(jsonValue: v2JSON) }

        #expect(throws: VaultError(.lossyDowngrade, "")) { try VaultMigration.migrate(bytes, access: access, to: 2, logVerified: true, random: random) }
        let down = try VaultMigration.migrate(bytes, access: access, to: 2, allowLossy: true, logVerified: true, random: random)
        #expect(down.report.losses.count == 1 && down.report.losses[0].contains(keyless))
        let v2 = try Vault.open(down.bytes, with: access).document
        #expect(!v2.childProfiles.contains { $0.profileId == keyless } && !v2.groupMemberships.contains { $0.childProfileId == keyless })
        #expect(try VaultCheck.run(v2, access: access).isClean)
    }

    /// A rotation of a v3 vault stays at 3: the new vault's secrets under the new key's secrets
    /// key, a child without a key left without one (a compromise rekeys only children with keys).
    @Test(arguments: RotationPlan.Mode.allCases)
    func aRotationKeepsVersion3AndItsKeylessChildren(_ mode: RotationPlan.Mode) throws {
        let old = try SecretKey.generate(using: random), new = try SecretKey.generate(using: random)
        var document = try Migration.migrate(DocumentGenerator(random: random).household(parent: old, devices: 2...5, children: 2...3, groups: 1...3), to: 3).0
        document.childProfiles[0].nsec = nil
        document.childProfiles[0].npub = nil
        let vault = try Vault.seal(document, with: old, random: random)
        var plan = try RotationPlanner.plan(vault: vault, oldKey: old, newKey: new, mode: mode, reason: "test", createdAt: RotationTests.time, template: RotationTests.template)
        try plan.sign(oldKey: old, newKey: new)
        #expect(plan.children.map(\.profileId) == document.childProfiles.dropFirst().map(\.profileId))
        let outcome = try RotationApplier.apply(plan, vault: vault, oldKey: old, newKey: new, random: random)
        let opened = try Vault.open(outcome.newVault, with: .parentKey(new)).document.revealed(with: .parentKey(new))
        #expect(opened.version == 3 && !opened.childProfiles[0].hasKey && opened.childProfiles.dropFirst().allSatisfy(\.hasKey))
        #expect(try VaultCheck.run(opened, access: .parentKey(new)).isClean)
        let newVaultKey = VaultAccess.vaultKey(try Derivation.vaultKey(for: new))
        #expect(throws: VaultError(.parentKeyNeeded, "")) { try Vault.open(outcome.newVault, with: newVaultKey).document.revealed(with: newVaultKey) }
        let rekeyed = outcome.operations.filter { $0["op"] == .string("child.rekey") }.count
        #expect(rekeyed == (mode == .compromise ? document.childProfiles.count - 1 : 0))
    }

    /// With the vault key alone a v3 copy is sealed and an older one revealed: a merge or a
    /// diff of the two needs the parent key (a hostile trial merged a child's sealed key from
    /// one copy beside the other copy's npub, and wrote it with exit 0).
    @Test func aVaultKeyHolderCannotMixVersion3WithOlderCopies() throws {
        let parent = try SecretKey.generate(using: random)
        let v2 = try Migration.migrate(DocumentGenerator(random: random).household(parent: parent, devices: 2...4, children: 1...2, groups: 1...2), to: 2).0
        let access = VaultAccess.vaultKey(try Derivation.vaultKey(for: parent))
        let older = try Vault.open(Vault.seal(v2, with: parent, random: random), with: access).document.comparable(with: access)
        let newer = try Vault.open(Vault.seal(Migration.migrate(v2, to: 3).0, with: parent, random: random), with: access).document.comparable(with: access)
        #expect(older.isFullyRevealed && newer.isFullySealed)
        #expect(throws: VaultError(.parentKeyNeeded, "")) { try VaultMerge.merge(base: older, ours: newer, theirs: older) }
        #expect(throws: VaultError(.parentKeyNeeded, "")) { try VaultDiff.between(older, newer) }
        #expect(throws: VaultError(.parentKeyNeeded, "")) { try VaultDiff.between(newer, older) }
    }

    /// A three-way merge of v3 copies with the vault key alone: the result stays at 3, a keyless
    /// child is kept as it is, and every sealed field comes through as it was.
    @Test func aMergeOfVersion3CopiesWithTheVaultKeyKeepsKeylessChildren() throws {
        let (parent, revealed, _) = try v3Vault(children: 2...3)
        var document = revealed
        document.childProfiles[0].nsec = nil
        document.childProfiles[0].npub = nil
        let access = VaultAccess.vaultKey(try Derivation.vaultKey(for: parent))
        let base = try Vault.open(Vault.seal(document, with: parent, random: random), with: access).document
        var ours = base, theirs = base
        ours.devices[0].deviceName = "ours"
        ours.updatedAt = Timestamp(seconds: base.updatedAt.seconds + 10)
        theirs.childProfiles[0].name = "renamed by theirs"
        theirs.updatedAt = Timestamp(seconds: base.updatedAt.seconds + 20)
        let merged = try VaultMerge.checkedMerge(base: base, ours: ours, theirs: theirs, access: access).document
        #expect(merged.version == 3 && merged.devices[0].deviceName == "ours" && merged.childProfiles[0].name == "renamed by theirs")
        #expect(!merged.childProfiles[0].hasKey && merged.parentWrapKey == base.parentWrapKey && merged.childProfiles.map(\.nsec) == base.childProfiles.map(\.nsec))
        let written = try Vault.sealVerified(merged, access: access, random: random)
        #expect(try Vault.open(written, with: .parentKey(parent)).document.revealed(with: .parentKey(parent)).childProfiles[0].name == "renamed by theirs")
    }
}
