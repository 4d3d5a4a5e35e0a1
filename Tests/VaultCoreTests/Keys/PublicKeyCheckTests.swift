import Testing
@testable import VaultCore

/// Public keys are checked to be on the curve, and keys found valid are remembered (issue 29):
/// what is remembered never lets a point off the curve through.
@Suite struct PublicKeyCheckTests {
    @Test func pointsOffTheCurveAreRefusedBeforeAndAfterManyValidKeys() throws {
        let random = SeededRandom(seed: 0x29)
        // x ≥ p, and x = 5 (5³ + 7 = 132 is no square modulo p), are no x coordinate of a point.
        let offCurve: [[UInt8]] = [Array(repeating: 0xff, count: 32), Array(repeating: 0, count: 31) + [5]]
        for bytes in offCurve { #expect(throws: VaultError(.invalidKey, "")) { try PublicKey(bytes: bytes) } }
        // More valid keys than are remembered, each twice: remembered or checked again.
        for _ in 0..<5_000 {
            let key = try SecretKey.generate(using: random).publicKey
            #expect(try PublicKey(bytes: key.bytes) == key)
            #expect(try PublicKey(bytes: key.bytes) == key)
        }
        for bytes in offCurve { #expect(throws: VaultError(.invalidKey, "")) { try PublicKey(bytes: bytes) } }
    }
}
