import Testing
@testable import VaultCore

@Suite struct VaultTests {
    let random = SeededRandom(seed: 0x5eed)

    /// Generated households seal, open, check clean and reveal to the same values.
    @Test func generatedHouseholdsRoundTrip() throws {
        for _ in 0..<60 {
            let parent = try SecretKey.generate(using: random)
            let document = try DocumentGenerator(random: random).household(parent: parent)
            let bytes = try Vault.seal(document, with: parent, random: random)
            for access in [VaultAccess.parentKey(parent), .vaultKey(try Derivation.vaultKey(for: parent))] {
                let opened = try Vault.open(bytes, with: access)
                #expect(opened.header.householdID == Household(parentPublicKey: parent.publicKey).id)
                #expect(try opened.document.revealed(with: access).jsonValue() == document.jsonValue())
                #expect(try VaultCheck.run(opened.document, access: access).isClean)
            }
        }
    }

    @Test func sealedJSONRoundTripsThroughText() throws {
        let parent = try SecretKey.generate(using: random)
        let document = try DocumentGenerator(random: random).household(parent: parent).sealed(with: .parentKey(parent), random: random)
        #expect(try VaultDocument(json: document.json()) == document)
    }

    @Test func sealRefusesAnotherParentsDocument() throws {
        let parent = try SecretKey.generate(using: random), stranger = try SecretKey.generate(using: random)
        let document = try DocumentGenerator(random: random).household(parent: parent)
        #expect(throws: VaultError(.keyMismatch, "")) { try Vault.seal(document, with: stranger, random: random) }
    }

    @Test func sealRefusesASealedBlobThatDoesNotOpen() throws {
        let parent = try SecretKey.generate(using: random), stranger = try SecretKey.generate(using: random)
        var document = try DocumentGenerator(random: random).household(parent: parent)
        document.parentWrapKey = try document.parentWrapKey!.sealed(#require(try VaultAccess.parentKey(stranger).fieldKey(version: 1)), field: .wrapKey, version: 1, random: random)
        #expect(throws: VaultError(.authenticationFailed, "")) { try Vault.seal(document, with: parent, random: random) }
    }

    @Test func everySealUsesAFreshNonce() throws {
        let parent = try SecretKey.generate(using: random)
        let document = try DocumentGenerator(random: random).household(parent: parent)
        let first = try Vault.seal(document, with: parent), second = try Vault.seal(document, with: parent)
        #expect(first[42..<66] != second[42..<66])
    }

    @Test(arguments: [
        (#""nickname": "x""#, "nickname is not a field of this schema"),
        (#""devices": [{"deviceId": "a"}]"#, "devices[0].deviceName is missing"),
        (#""devices": [{"deviceId": "a", "deviceName": "b", "isPrimary": "yes"}]"#, "devices[0].isPrimary should be true or false"),
        (#""childProfiles": [{"profileId": "p", "name": "n", "theme": "t", "mlsGroupIds": [], "nsec": "x", "nsecEncrypted": "x"}]"#, "both present"),
        (#""childProfiles": [{"profileId": "p", "name": "n", "theme": "t", "mlsGroupIds": []}]"#, "childProfiles[0].nsecEncrypted is missing"),
        (#""createdAt": "yesterday""#, "createdAt should be an RFC 3339 time"),
        (#""parentWrapKeyEncrypted": "not base64!""#, "standard padded base64"),
        (#""parentWrapKeyEncrypted": "AAAA""#, "too short to be sealed"),
        (#""version": 9"#, "version 9 is not supported"),
    ])
    func strictDocumentErrors(_ field: String, _ fragment: String) throws {
        let parent = try SecretKey.generate(using: random)
        var object = try JSONValue(parsing: try DocumentGenerator(random: random).household(parent: parent).sealed(with: .parentKey(parent), random: random).json())
        let override = try JSONValue(parsing: Array("{\(field)}".utf8))
        guard case .object(var entries) = object, case .object(let changes) = override else { return }
        for change in changes {
            if let index = entries.firstIndex(where: { $0.key == change.key }) { entries[index].value = change.value } else { entries.append(change) }
        }
        object = .object(entries)
        do {
            _ = try VaultDocument(jsonValue: object)
            Issue.record("accepted a document with \(field)")
        } catch let error as VaultError {
            #expect(error.reason.contains(fragment), "\(error.reason)")
        }
    }
}
