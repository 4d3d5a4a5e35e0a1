import Foundation
import Testing
@testable import VaultCore

/// The worked example of docs/vault-format.md §7, computed by the independent Python reference.
/// If this test fails, the document and the code disagree: fix whichever is wrong.
@Suite struct WorkedExampleTests {
    let vaultKey = try! VaultKey(secret: .test(hex("d727917d50873765509e32b3875462f52dc7f945f15c200f32cd060a4d45cbaf")))

    @Test func sealedField() throws {
        let wrapKey = SecretBytes.test(hex("94f2bde28112547e6576f83f956713d1bb3536243b96b7e4892840cba7e55d71"))
        let nonce = Array(UInt8(0)..<24)
        let ciphertext = try wrapKey.withUnsafeBytes { try XChaCha20Poly1305.seal($0, key: vaultKey.secret, nonce: nonce, associatedData: []) }
        #expect(base64(nonce + ciphertext) == "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXmvIkXzxiRfB+d8vVa5n+ZscRjp2hoywWvSpbZuWF8fTXFyIBhAHLCYs8mv80CiW2")
    }

    @Test func envelope() throws {
        let header = VaultHeader(schemaVersion: 1, householdID: HouseholdID(bytes: hex("59e55f98d9b0fc4fac01f399d73ddb03c4ce391de3a507a9a955f5b47e863ffb")),
                                 nonce: [UInt8](repeating: 0x11, count: 24))
        #expect(Hex.encode(header.bytes) == "4d545641554c5401010159e55f98d9b0fc4fac01f399d73ddb03c4ce391de3a507a9a955f5b47e863ffb" + String(repeating: "11", count: 24))
        let ciphertext = try Array(#"{"version":1}"#.utf8).withUnsafeBytes {
            try XChaCha20Poly1305.seal($0, key: vaultKey.secret, nonce: header.nonce, associatedData: header.bytes)
        }
        #expect(Hex.encode(ciphertext) == "0406a7aa26aa51e3872f9cabe2fdf4502b261970036070bcead60154c1")
    }

    /// §9.5: the same wrap key in schema 3, sealed under the secrets key with v3's binding
    /// through the code's own sealing path (the nonce drawn from a source that counts up).
    @Test func sealedFieldOfVersion3() throws {
        var text = Array("nsec1lqt48lfawqu2gtwfzh0q25qkhfmgfur3suk5r632shu6fm8y9z9sncnftt".utf8)
        let parent = try SecretKey(parsing: SecretBytes(consuming: &text), what: "the example key")
        let secretsKey = try #require(try VaultAccess.parentKey(parent).fieldKey(version: 3))
        let wrapKey = ProtectedSecret.revealed(.test(hex("94f2bde28112547e6576f83f956713d1bb3536243b96b7e4892840cba7e55d71")))
        guard case .sealed(let blob) = try wrapKey.sealed(secretsKey, field: .wrapKey, version: 3, random: CountingRandom()) else {
            Issue.record("not sealed")
            return
        }
        #expect(base64(blob) == "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXDg3kPOhypoTWRpiQnd6SgdlpQPLk67PnyTVOxqp2BlgTkeCBxDBTtnMVBPAHCMuU")
    }

    private func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}

/// Bytes 0, 1, 2, … : the worked example's nonce.
private struct CountingRandom: RandomSource {
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index) }
    }
}
