import Foundation
import Testing
@testable import VaultCore

/// XChaCha20-Poly1305 against draft-irtf-cfrg-xchacha-03 A.3.1 and Wycheproof.
@Suite struct XChaCha20Poly1305Tests {
    struct DraftFile: Decodable {
        struct AEAD: Decodable { let plaintext, aad, key, iv, ciphertext, tag: String }
        let aead_xchacha20_poly1305: [AEAD]
    }

    struct WycheproofFile: Decodable {
        struct Group: Decodable { let tests: [Case] }
        struct Case: Decodable { let tcId: Int; let key, iv, aad, msg, ct, tag, result: String; let flags: [String] }
        let testGroups: [Group]
    }

    @Test func draftAppendixA31() throws {
        let vector = try #require(try TestFiles.vector("xchacha20_draft_vectors.json", as: DraftFile.self).aead_xchacha20_poly1305.first)
        let key = SecretBytes.test(hex(vector.key))
        let sealed = try hex(vector.plaintext).withUnsafeBytes {
            try XChaCha20Poly1305.seal($0, key: key, nonce: hex(vector.iv), associatedData: hex(vector.aad))
        }
        #expect(Hex.encode(sealed) == vector.ciphertext + vector.tag)
        let opened = try sealed.withUnsafeBytes { try XChaCha20Poly1305.open($0, key: key, nonce: hex(vector.iv), associatedData: hex(vector.aad)) }
        #expect(Hex.encode(opened.testBytes) == vector.plaintext)
    }

    @Test func wycheproof() throws {
        let tests = try TestFiles.vector("wycheproof_xchacha20_poly1305_test.json", as: WycheproofFile.self).testGroups.flatMap(\.tests)
        #expect(tests.count == 315)
        for test in tests {
            let key = SecretBytes.test(hex(test.key))
            let sealedInput = hex(test.ct) + hex(test.tag)
            let open = { try sealedInput.withUnsafeBytes { try XChaCha20Poly1305.open($0, key: key, nonce: hex(test.iv), associatedData: hex(test.aad)) } }
            if test.result == "valid" {
                let sealed = try hex(test.msg).withUnsafeBytes {
                    try XChaCha20Poly1305.seal($0, key: key, nonce: hex(test.iv), associatedData: hex(test.aad))
                }
                #expect(sealed == sealedInput, "tcId \(test.tcId) seal")
                #expect(try open().testBytes == hex(test.msg), "tcId \(test.tcId) open")
            } else {
                #expect(throws: VaultError.self, "tcId \(test.tcId) must be rejected") { try open() }
            }
        }
    }

    @Test func tamperedAssociatedDataFails() throws {
        let key = try SystemRandom().secret(32)
        let nonce = SystemRandom().bytes(24)
        let sealed = try [UInt8](repeating: 7, count: 40).withUnsafeBytes { try XChaCha20Poly1305.seal($0, key: key, nonce: nonce, associatedData: [1, 2, 3]) }
        #expect(throws: VaultError(.authenticationFailed, "")) {
            try sealed.withUnsafeBytes { try XChaCha20Poly1305.open($0, key: key, nonce: nonce, associatedData: [1, 2, 4]) }
        }
    }
}
