import Foundation
import Testing
@testable import VaultCore

/// All 19 BIP-340 vectors: x-only public keys, signatures with the given auxiliary randomness,
/// and verification results (including keys not on the curve and messages not 32 bytes long).
@Suite struct BIP340Tests {
    struct Row {
        let index: Int
        let secretKey, publicKey, auxRand, message, signature: String
        let valid: Bool
    }

    static func rows() throws -> [Row] {
        let text = try String(contentsOf: TestFiles.vectors.appendingPathComponent("bip340_test_vectors.csv"), encoding: .utf8)
        return text.split(whereSeparator: \.isNewline).dropFirst().map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { String($0).lowercased() }
            return Row(index: Int(fields[0])!, secretKey: fields[1], publicKey: fields[2], auxRand: fields[3],
                       message: fields[4], signature: fields[5], valid: fields[6] == "true")
        }
    }

    @Test func allVectors() throws {
        let rows = try Self.rows()
        #expect(rows.count == 19)
        for row in rows {
            if !row.secretKey.isEmpty {
                let key = try SecretKey(secret: .test(hex(row.secretKey)))
                #expect(key.publicKey.hex == row.publicKey, "vector \(row.index) public key")
                let signature = try key.signature(for: hex(row.message), auxiliaryRandom: hex(row.auxRand))
                #expect(Hex.encode(signature) == row.signature, "vector \(row.index) signature")
            }
            let verified = Secp256k1.shared.verify(signature: hex(row.signature), message: hex(row.message), publicKey: hex(row.publicKey))
            #expect(verified == row.valid, "vector \(row.index) verification")
        }
    }

    @Test func invalidSecretKeysAreRefused() {
        let order = hex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
        for bad in [[UInt8](repeating: 0, count: 32), order] {
            #expect(throws: VaultError(.invalidKey, "")) { try SecretKey(secret: .test(bad)) }
        }
    }
}
