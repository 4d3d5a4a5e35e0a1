import Foundation
import Testing
@testable import VaultCore

@Suite struct RotationTests {
    let random = SeededRandom(seed: 0x707)
    static let template = try! TextTemplate(language: "en", text: String(contentsOf: RecoverySheetTests.templatesFolder.appendingPathComponent("rotation-plan.en.txt"), encoding: .utf8))
    static let time = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!

    struct Setup {
        let old: SecretKey, new: SecretKey, document: VaultDocument, vault: [UInt8]
    }

    func setup(devices: ClosedRange<Int> = 1...50, children: ClosedRange<Int> = 0...10, groups: ClosedRange<Int> = 0...500, version: Int = 1) throws -> Setup {
        let old = try SecretKey.generate(using: random), new = try SecretKey.generate(using: random)
        var document = try DocumentGenerator(random: random).household(parent: old, devices: devices, children: children, groups: groups)
        if version == 2 { document = try Migration.migrate(document, to: 2).0 }
        return Setup(old: old, new: new, document: document, vault: try Vault.seal(document, with: old, random: random))
    }

    func signedPlan(_ setup: Setup, mode: RotationPlan.Mode) throws -> RotationPlan {
        var plan = try RotationPlanner.plan(vault: setup.vault, oldKey: setup.old, newKey: setup.new, mode: mode, reason: "test", createdAt: Self.time, template: Self.template)
        try plan.sign(oldKey: setup.old, newKey: setup.new)
        return plan
    }

    /// Plan, apply and verify on generated households, in both modes; the new vault opens with
    /// the new key's vault key and every subkey is the new key's derivation.
    @Test(arguments: RotationPlan.Mode.allCases)
    func roundTrip(_ mode: RotationPlan.Mode) throws {
        for round in 0..<8 {
            let setup = try self.setup(version: round % 2 == 0 ? 1 : 2)
            let plan = try RotationPlan(json: signedPlan(setup, mode: mode).jsonValue().serialized())
            try plan.verifySignatures()
            #expect(plan.source.migratedInMemory == (setup.document.version == 1))
            let outcome = try RotationApplier.apply(plan, vault: setup.vault, oldKey: setup.old, newKey: setup.new, random: random)
            #expect(outcome.newVaultPath == Household(parentPublicKey: setup.new.publicKey).vaultPath)
            #expect(outcome.tombstonePath == Household(parentPublicKey: setup.old.publicKey).vaultPath)

            let opened = try Vault.open(outcome.newVault, with: .vaultKey(Derivation.vaultKey(for: setup.new))).document
            #expect(opened.version == 2 && opened.revision == 1 && opened.parentPubkey == setup.new.publicKey)
            for device in opened.devices {
                #expect(device.subkeyPublicKey == (try Derivation.deviceSubkey(for: setup.new, deviceID: device.deviceId).publicKey.hex))
            }
            #expect(opened.devices.map(\.deviceId) == setup.document.devices.filter { $0.status == .active }.map(\.deviceId))
            #expect(try VaultCheck.run(opened, access: .parentKey(setup.new)).isClean)
            let tombstone = try Vault.open(outcome.tombstone, with: .parentKey(setup.old)).document
            #expect(try VaultCheck.run(tombstone, access: .parentKey(setup.old)).isClean)

            let revealed = try opened.revealed(with: .parentKey(setup.new))
            let original = try setup.document.revealed(with: .parentKey(setup.old))
            for (new, old) in zip(revealed.childProfiles, original.childProfiles) {
                #expect((new.nsec == old.nsec) == (mode == .routine))
            }
            #expect((revealed.parentWrapKey == original.parentWrapKey) == (mode == .routine))
            let rekeyed = outcome.operations.contains { $0["op"] == .string("child.rekey") }
            #expect(rekeyed == (mode == .compromise && !original.childProfiles.isEmpty))

            let checks = try RotationVerifier.verify(tombstone: outcome.tombstone, newVault: outcome.newVault, oldKey: setup.old, newKey: setup.new)
            let failed = checks.filter { !$0.passed }
            #expect(failed.isEmpty, "\(failed)")
        }
    }

    @Test func applyingTwiceGivesTheSameContents() throws {
        let setup = try self.setup(devices: 3...10, groups: 5...20)
        let plan = try signedPlan(setup, mode: .routine)
        let first = try RotationApplier.apply(plan, vault: setup.vault, oldKey: setup.old, newKey: setup.new)
        let second = try RotationApplier.apply(plan, vault: setup.vault, oldKey: setup.old, newKey: setup.new)
        for (a, b, key) in [(first.newVault, second.newVault, setup.new), (first.tombstone, second.tombstone, setup.old)] {
            #expect(a != b)  // fresh nonces
            #expect(try Vault.open(a, with: .parentKey(key)).document.revealed(with: .parentKey(key)).jsonValue()
                    == Vault.open(b, with: .parentKey(key)).document.revealed(with: .parentKey(key)).jsonValue())
        }
        #expect(first.operations == second.operations)
    }

    /// A second apply recognises the first one's result, in both modes (a compromise rotation
    /// makes fresh child keys, so the two results differ there), and nothing else (issue 16).
    @Test(arguments: RotationPlan.Mode.allCases)
    func anEarlierApplyIsRecognised(_ mode: RotationPlan.Mode) throws {
        let setup = try self.setup(devices: 2...6, children: 1...3, groups: 1...5)
        let plan = try signedPlan(setup, mode: mode)
        let first = try RotationApplier.apply(plan, vault: setup.vault, oldKey: setup.old, newKey: setup.new)
        #expect(try RotationApplier.wasApplied(plan, vault: setup.vault, newVault: first.newVault, tombstone: first.tombstone,
                                               oldKey: setup.old, newKey: setup.new))
        // Another plan for the same keys (another time) produced other vaults: not this plan's.
        var other = try RotationPlanner.plan(vault: setup.vault, oldKey: setup.old, newKey: setup.new, mode: mode, reason: "other",
                                             createdAt: Timestamp(seconds: Self.time.seconds + 60), template: Self.template)
        try other.sign(oldKey: setup.old, newKey: setup.new)
        let second = try RotationApplier.apply(other, vault: setup.vault, oldKey: setup.old, newKey: setup.new)
        #expect(try !RotationApplier.wasApplied(plan, vault: setup.vault, newVault: second.newVault, tombstone: second.tombstone,
                                                oldKey: setup.old, newKey: setup.new))
        // A vault that does not open is not a result either.
        #expect(try !RotationApplier.wasApplied(plan, vault: setup.vault, newVault: setup.vault, tombstone: first.tombstone,
                                                oldKey: setup.old, newKey: setup.new))
    }

    @Test func refusals() throws {
        let setup = try self.setup(devices: 2...6, groups: 1...5)
        let plan = try signedPlan(setup, mode: .routine)
        func attempt(_ plan: RotationPlan, vault: [UInt8]? = nil, old: SecretKey? = nil, new: SecretKey? = nil) -> VaultError? {
            do {
                _ = try RotationApplier.apply(plan, vault: vault ?? setup.vault, oldKey: old ?? setup.old, newKey: new ?? setup.new)
                return nil
            } catch { return error as? VaultError }
        }
        // Stale: the vault changed (resealed) since the plan.
        #expect(attempt(plan, vault: try Vault.seal(setup.document, with: setup.old))?.code == .planForAnotherVault)
        // Swapped keys, and a stranger's key.
        #expect(attempt(plan, old: setup.new, new: setup.old)?.code == .notThePlansKey)
        #expect(attempt(plan, new: try SecretKey.generate(using: random))?.code == .notThePlansKey)
        // A plan from another household, applied to this vault.
        let other = try self.setup(devices: 2...3, groups: 1...2)
        #expect(attempt(try signedPlan(other, mode: .routine), old: other.old, new: other.new)?.code == .planForAnotherVault)
        // Tampered: a field changed after signing (the stated planId no longer matches).
        var json = String(decoding: plan.jsonValue().serialized(), as: UTF8.self)
        json = json.replacingOccurrences(of: #""mode": "routine""#, with: #""mode": "compromise""#)
        #expect(throws: VaultError(.badSignature, "")) { try RotationPlan(json: Array(json.utf8)) }
        // Tampered and re-identified: the signatures fail.
        var forged = plan
        forged.reason = "forged"
        #expect(attempt(forged)?.code == .badSignature)
        // Signed by the wrong key.
        var unsigned = plan
        unsigned.signatures = (plan.signatures!.new, plan.signatures!.old)
        #expect(attempt(unsigned)?.code == .badSignature)
        #expect(throws: VaultError(.newKeyIsOldKey, "")) {
            try RotationPlanner.plan(vault: setup.vault, oldKey: setup.old, newKey: setup.old, mode: .routine, reason: nil, createdAt: Self.time, template: Self.template)
        }
    }

    /// The plan id is SHA-256 of RFC 8785 canonical JSON: keys sorted, no whitespace.
    @Test func planIDIsOverCanonicalJSON() throws {
        let plan = try signedPlan(try setup(devices: 1...2, groups: 0...1), mode: .compromise)
        let canonical = String(decoding: plan.bodyJSON().canonicalSerialized(), as: UTF8.self)
        #expect(canonical.hasPrefix(#"{"children":["#) && !canonical.contains("\n") && !canonical.contains(#"": "#))
        #expect(plan.planID == SHA256.hash(Array(canonical.utf8)))
        #expect(String(decoding: JSONValue.string("\u{8}\u{c}\u{1}é").canonicalSerialized(), as: UTF8.self) == #""\b\f\u0001é""#)
    }
}

/// Issue 8's tamper sweep for plans: every single-bit flip of a signed plan is rejected as a
/// failed verification, whatever the flip breaks (JSON, a field, the version, a signature).
/// The quick tier flips every seventh bit, every position of a byte in turn.
@Suite struct PlanTamperTests {
    /// Every bit, in four interleaved shards that run side by side (one test of every bit took
    /// 77 s alone under AddressSanitizer, the longest of the run).
    @Test(arguments: 0..<4)
    func everyBitFlipOfASignedPlanFailsVerification(shard: Int) throws {
        let random = SeededRandom(seed: 0x7a)
        let old = try SecretKey.generate(using: random), new = try SecretKey.generate(using: random)
        let document = try DocumentGenerator(random: random).household(parent: old, devices: 2...3, children: 1...1, groups: 1...2)
        var plan = try RotationPlanner.plan(vault: Vault.seal(document, with: old, random: random), oldKey: old, newKey: new, mode: .routine,
                                            reason: "sweep", createdAt: RotationTests.time, template: RotationTests.template)
        try plan.sign(oldKey: old, newKey: new)
        let bytes = plan.jsonValue().serialized()
        try RotationPlan(json: bytes).verifySignatures()
        for bit in stride(from: shard, to: bytes.count * 8, by: 4) where !TestTier.isQuick || bit % 7 == 0 {
            var flipped = bytes
            flipped[bit / 8] ^= 1 << (bit % 8)
            do {
                try RotationPlan(json: flipped).verifySignatures()
                Issue.record("bit \(bit) flipped and the plan still verified: \(String(decoding: bytes[max(0, bit / 8 - 12)..<min(bytes.count, bit / 8 + 4)], as: UTF8.self)) → \(Character(Unicode.Scalar(flipped[bit / 8])))")
            } catch let error as VaultError {
                #expect(error.code.category == .authentication, "bit \(bit): \(error)")
            }
        }
    }
}
