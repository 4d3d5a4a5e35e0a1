import Testing
@testable import VaultCore
@testable import VaultPaper
@testable import VaultRegistry

/// Rules that used to live in the executables (issue 12, "typed outcomes"), tested as values.
@Suite struct RulesInTheLibraryTests {
    let random = SeededRandom(seed: 0x12)

    @Test func anEditedDocumentIsSealedAsTheNextRevision() throws {
        let parent = try SecretKey.generate(using: random)
        let document = try DocumentGenerator(random: random).householdV2(parent: parent)
        let (vault, revision) = try Vault.sealEdited(document, with: parent, random: random)
        #expect(revision == document.revision.map { $0 + 1 })
        #expect(try Vault.open(vault, with: .parentKey(parent)).document.revision == revision)
        // A v1 document has no revision to raise.
        let v1 = try DocumentGenerator(random: random).household(parent: parent)
        #expect(try Vault.sealEdited(v1, with: parent, random: random).revision == nil)
    }

    @Test func oneParserForRegistryDeviceReferences() {
        #expect(DeviceRegistry.deviceReference("did:plc:abc#ipad-1").map { [$0.user, $0.device] } == ["did:plc:abc", "ipad-1"])
        #expect(DeviceRegistry.deviceReference("did:web:x#frag#d").map { [$0.user, $0.device] } == ["did:web:x#frag", "d"])
        for bad in ["no-hash", "#device", "did:plc:abc#", ""] {
            #expect(DeviceRegistry.deviceReference(bad) == nil, "\(bad)")
        }
    }

    @Test func aSheetPayloadIsAKeyOrAsksForItsPassphrase() throws {
        let parent = try SecretKey.generate(using: random)
        let nsec = try parent.nsec().withUnsafeBytes { Array($0) }
        #expect(try RecoverySheet.key(fromPayload: nsec, name: "test") { () -> SecretBytes? in nil }.key == parent)
        let encrypted = try NIP49.encrypt(parent, passphrase: "pass", logN: 4, random: random)
        #expect(throws: VaultError(.passphraseNeeded, "")) { try RecoverySheet.key(fromPayload: Array(encrypted.utf8), name: "test") { () -> SecretBytes? in nil } }
        let opened = try RecoverySheet.key(fromPayload: Array(encrypted.utf8), name: "test") { "pass" }
        #expect(opened.key == parent && opened.encrypted)
        #expect(throws: VaultError(.malformedKey, "")) { try RecoverySheet.key(fromPayload: Array("hello".utf8), name: "test") { "pass" } }
    }
}
