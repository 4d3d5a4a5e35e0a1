import Testing
@testable import VaultCore

/// Key files and the derivations of docs/vault-format.md §2.
@Suite struct KeyParsingTests {
    static let exampleNsec = "nsec1lqt48lfawqu2gtwfzh0q25qkhfmgfur3suk5r632shu6fm8y9z9sncnftt"
    static let exampleHex = "f81753fd3d7038a42dc915de055016ba7684f071872d41ea2a85f9a4ece4288b"

    func parse(_ text: String) throws -> SecretKey {
        try SecretKey(parsing: .test(Array(text.utf8)), what: "key file 'k'")
    }

    func failure(_ text: String) -> VaultError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error as? VaultError
        }
    }

    @Test func acceptedForms() throws {
        let expected = try parse(Self.exampleNsec)
        for text in ["\(Self.exampleNsec)\n", "  \t\(Self.exampleNsec)\r\n\n", Self.exampleNsec.uppercased(), Self.exampleHex, Self.exampleHex.uppercased() + "\n"] {
            #expect(try parse(text) == expected)
        }
    }

    @Test func preciseErrors() throws {
        var swapped = Array(Self.exampleNsec)
        swapped.swapAt(10, 11)
        let cases: [(String, String)] = [
            ("", "is empty"),
            ("   \n", "is empty"),
            ("nsec1LQT48lfawqu2gtwfzh0q25qkhfmgfur3suk5r632shu6fm8y9z9sncnftt", "mixes upper- and lowercase"),
            (String(swapped), "bad checksum"),
            (String(Self.exampleNsec.dropLast()), "bad checksum"),
            ("npub174p847j8t6zp467hpsped7xkvzpvrd6g4elvndvde6t7dld06vzslh8a5m", "holds a public key (npub)"),
            (String(Self.exampleHex.dropLast(2)), "neither an nsec1"),
            (String(Self.exampleHex.dropLast()) + "g", "neither an nsec1"),
        ]
        for (text, fragment) in cases {
            let error = try #require(failure(text), "'\(text)' parsed")
            #expect(error.code == .malformedKey)
            #expect(error.reason.contains(fragment), "\(error.reason)")
            #expect(text.count < 20 || !error.reason.contains(text.trimmingCharacters(in: .whitespacesAndNewlines)), "a reason must not quote the key")
        }
    }

    @Test func wrongPrefixAndLength() throws {
        let note = String(decoding: NIP19.encode(prefix: "note", key: [UInt8](repeating: 1, count: 32)), as: UTF8.self)
        #expect(failure("nsec1" + note.dropFirst(5)) != nil)
        let short = String(decoding: Bech32.encode(hrp: "nsec", words: try Bech32.convertBits([UInt8](repeating: 1, count: 31), from: 8, to: 5, pad: true)), as: UTF8.self)
        #expect(try #require(failure(short)).reason.contains("should carry 32 bytes but carries 31"))
    }

    @Test func vaultKeyFiles() throws {
        let hexKey = String(repeating: "ab", count: 32)
        #expect(try VaultKey(parsing: .test(Array((hexKey + "\n").utf8)), what: "v").hex().testBytes == Array(hexKey.utf8))
        // An nsec given as a vault key is named for what it is.
        #expect(throws: VaultError(.parentKeyGivenAsVaultKey, "")) { try VaultKey(parsing: .test(Array(Self.exampleNsec.utf8)), what: "v") }
        #expect(throws: VaultError(.malformedKey, "")) { try VaultKey(parsing: .test(Array(String(repeating: "zz", count: 32).utf8)), what: "v") }
    }

    /// Known answers for the example household's test key, computed by the independent Python
    /// reference (Tests/Interop/vaultref.py) and shown in docs/vault-format.md §2.4.
    @Test func exampleDerivations() throws {
        let key = try parse(Self.exampleNsec)
        #expect(key.publicKey.hex == "f5427afa475e841aebd70c0396f8d66082c1b748ae7ec9b58dce97e6fdafd305")
        #expect(key.publicKey.npub == "npub174p847j8t6zp467hpsped7xkvzpvrd6g4elvndvde6t7dld06vzslh8a5m")
        #expect(try Derivation.vaultKey(for: key).hex().testBytes == Array("d727917d50873765509e32b3875462f52dc7f945f15c200f32cd060a4d45cbaf".utf8))
        let household = Household(parentPublicKey: key.publicKey)
        #expect(household.id.hex == "59e55f98d9b0fc4fac01f399d73ddb03c4ce391de3a507a9a955f5b47e863ffb")
        #expect(household.vaultPath == "vaults/59e55f98d9b0fc4fac01f399d73ddb03c4ce391de3a507a9a955f5b47e863ffb.vault")
        let subkey = try Derivation.deviceSubkey(for: key, deviceID: "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01")
        #expect(subkey.publicKey.hex == "556e3bb608d092dd2aa25335f5c307bd4f6eb7787774d67521ed9441b1e9664b")
    }

    @Test func secretsDoNotPrint() throws {
        let key = try parse(Self.exampleNsec)
        let secret = SecretBytes.test(hex(Self.exampleHex))
        for text in ["\(secret)", String(describing: secret), String(reflecting: secret), "\(key)", String(reflecting: key)] {
            #expect(!text.contains(Self.exampleHex) && !text.lowercased().contains("f817"), "\(text)")
        }
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("f817") && !dumped.contains("248"))
    }

    @Test func secretEqualityComparesContents() {
        #expect(SecretBytes.test([1, 2, 3]) == SecretBytes.test([1, 2, 3]))
        #expect(SecretBytes.test([1, 2, 3]) != SecretBytes.test([1, 2, 4]))
        #expect(SecretBytes.test([1, 2, 3]) != SecretBytes.test([1, 2]))
    }
}
