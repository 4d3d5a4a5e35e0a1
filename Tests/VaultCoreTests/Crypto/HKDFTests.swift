import Foundation
import Testing
@testable import VaultCore

/// HKDF-SHA256 against RFC 5869 appendix A (with PRKs) and Wycheproof's hkdf_sha256 file.
@Suite struct HKDFTests {
    struct RFCFile: Decodable {
        struct Case: Decodable { let tc: Int; let ikm, salt, info, prk, okm: String; let length: Int }
        let tests: [Case]
    }

    struct WycheproofFile: Decodable {
        struct Group: Decodable { let tests: [Case] }
        struct Case: Decodable { let tcId: Int; let ikm, salt, info, okm, result: String; let size: Int }
        let testGroups: [Group]
    }

    @Test func rfc5869() throws {
        let file = try TestFiles.vector("rfc5869_hkdf_sha256.json", as: RFCFile.self)
        #expect(file.tests.count == 3)
        for test in file.tests {
            let ikm = SecretBytes.test(hex(test.ikm))
            let prk = try ikm.withUnsafeBytes { try HKDF.extract(inputKeyMaterial: $0, salt: hex(test.salt)) }
            #expect(Hex.encode(prk.testBytes) == test.prk, "tc \(test.tc) PRK")
            let okm = try HKDF.deriveKey(inputKeyMaterial: ikm, salt: hex(test.salt), info: hex(test.info), outputByteCount: test.length)
            #expect(Hex.encode(okm.testBytes) == test.okm, "tc \(test.tc) OKM")
        }
    }

    @Test func wycheproof() throws {
        let file = try TestFiles.vector("wycheproof_hkdf_sha256_test.json", as: WycheproofFile.self)
        let tests = file.testGroups.flatMap(\.tests)
        #expect(tests.count == 86)
        for test in tests {
            let derive = {
                try HKDF.deriveKey(inputKeyMaterial: SecretBytes.test(hex(test.ikm)), salt: hex(test.salt), info: hex(test.info), outputByteCount: test.size)
            }
            if test.result == "valid" {
                #expect(Hex.encode(try derive().testBytes) == test.okm, "tcId \(test.tcId)")
            } else {
                // The invalid cases ask for more than 255 blocks of output.
                #expect(throws: VaultError(.badPrimitiveParameters, ""), "tcId \(test.tcId)") { try derive() }
            }
        }
    }
}
