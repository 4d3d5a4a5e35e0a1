import Foundation
import Testing
@testable import VaultCore
@testable import VaultImaging
@testable import VaultPaper

@Suite struct PBKDF2AndAESGCMTests {
    struct PBKDF2File: Decodable {
        struct Group: Decodable { let tests: [Case] }
        struct Case: Decodable { let tcId: Int; let password, salt, dk, result: String; let iterationCount, dkLen: Int }
        let testGroups: [Group]
    }

    struct AESFile: Decodable {
        struct Group: Decodable { let keySize: Int; let ivSize: Int; let tests: [Case] }
        struct Case: Decodable { let tcId: Int; let key, iv, aad, msg, ct, tag, result: String }
        let testGroups: [Group]
    }

    @Test func wycheproofPBKDF2() throws {
        let tests = try TestFiles.vector("wycheproof_pbkdf2_hmacsha256_test.json", as: PBKDF2File.self).testGroups.flatMap(\.tests)
        #expect(tests.count == 60)
        for test in tests where test.iterationCount <= 100_000 {
            let derived = try hex(test.password).withUnsafeBytes {
                try PBKDF2.sha256(password: $0, salt: hex(test.salt), iterations: test.iterationCount, outputByteCount: test.dkLen)
            }
            #expect((Hex.encode(derived.testBytes) == test.dk) == (test.result == "valid"), "tcId \(test.tcId)")
        }
    }

    /// The 256-bit cases with the 96-bit nonce GCM is used with here.
    @Test func wycheproofAES256GCM() throws {
        let groups = try TestFiles.vector("wycheproof_aes_gcm_test.json", as: AESFile.self).testGroups.filter { $0.keySize == 256 && $0.ivSize == 96 }
        let tests = groups.flatMap(\.tests)
        #expect(tests.count > 30)
        for test in tests {
            let opened = try? AESGCM.open(hex(test.ct) + hex(test.tag), key: hex(test.key), nonce: hex(test.iv), associatedData: hex(test.aad))
            if test.result == "valid" {
                #expect(opened == hex(test.msg), "tcId \(test.tcId)")
                #expect(try AESGCM.seal(hex(test.msg), key: hex(test.key), nonce: hex(test.iv), associatedData: hex(test.aad)) == hex(test.ct) + hex(test.tag))
            } else {
                #expect(opened == nil, "tcId \(test.tcId) must be rejected")
            }
        }
    }
}

@Suite struct CodesTests {
    struct SeedQRFile: Decodable {
        struct Vector: Decodable { let mnemonic: String; let standard_seedqr_digits: String }
        let vectors: [Vector]
    }

    @Test func seedQRVectorsRoundTrip() throws {
        let vectors = try TestFiles.vector("seedqr_vectors.json", as: SeedQRFile.self).vectors
        #expect(vectors.count == 9)
        for vector in vectors {
            let entropy = try SeedQR.entropy(fromDigits: vector.standard_seedqr_digits)
            #expect(try BIP39.words(for: entropy).joined(separator: " ") == vector.mnemonic)
            #expect(try SeedQR.digits(for: entropy).testText == vector.standard_seedqr_digits)
            // A Standard SeedQR is numeric: 24 words fit version 3 (29 × 29) at level L.
            let code = try QRCode(text: vector.standard_seedqr_digits, level: .low)
            #expect(code.size == (vector.standard_seedqr_digits.count == 96 ? 29 : 25))
        }
    }

    @Test func recoveryCodeRoundTripAndWrongCode() throws {
        let random = SeededRandom(seed: 5)
        let masterKey = try random.secret(32), code = try random.secret(32)
        let blob = try RecoveryCodes.wrap(masterKey: masterKey, code: code, userID: "emma", iterations: 1000, random: random)
        let parsed = try RecoveryCodeBlob(json: blob.jsonValue().serialized())
        #expect(parsed == blob && parsed.iterations == 1000)
        #expect(try RecoveryCodes.unwrap(parsed, code: code) == masterKey)
        #expect(throws: VaultError(.authenticationFailed, "")) { try RecoveryCodes.unwrap(parsed, code: random.secret(32)) }
        var tampered = parsed
        tampered.salt[0] ^= 1
        #expect(throws: VaultError(.authenticationFailed, "")) { try RecoveryCodes.unwrap(tampered, code: code) }
    }

    @Test func deviceLinkChecks() throws {
        let key = try SecretKey.generate(using: SeededRandom(seed: 6))
        let path = Household(parentPublicKey: key.publicKey).vaultPath
        let made = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!, expires = Timestamp(seconds: made.seconds + 300)
        let payload = try DeviceLink(vaultURL: "https://minio.example/b/" + path, key: key, expiresAt: expires).payload()
        #expect(try DeviceLink(payload: payload, now: made).key == key)
        #expect(throws: VaultError(.authenticationFailed, "")) { try DeviceLink(payload: payload, now: Timestamp(seconds: expires.seconds + 1)) }
        let wrongURL = try DeviceLink(vaultURL: "https://minio.example/b/vaults/other.vault", key: key, expiresAt: expires).payload()
        #expect(throws: VaultError(.keyMismatch, "")) { try DeviceLink(payload: wrongURL, now: made) }
        var text = String(decoding: payload, as: UTF8.self)
        text = text.replacingOccurrences(of: key.publicKey.hex, with: try SecretKey.generate().publicKey.hex)
        #expect(throws: VaultError(.keyMismatch, "")) { try DeviceLink(payload: Array(text.utf8), now: made) }
    }

    /// The one `%XX` decoder: a link's URL is looked into decoded, a broken escape kept as
    /// written (a key hidden behind `%2B` must still be found beside a `%zz`); S3 keys refuse one.
    @Test func percentDecodingKeepsWhatIsBroken() {
        let (bytes, broken) = PercentEncoding.decoded("%2Ba+b%zz%2f%4")
        #expect(bytes == Array("+a+b%zz/%4".utf8) && broken)
        #expect(PercentEncoding.decoded("a%41+").bytes == Array("aA+".utf8) && !PercentEncoding.decoded("a%41+").broken)
        #expect(PercentEncoding.decoded("a+b", plusIsSpace: true).bytes == Array("a b".utf8))
        #expect(PercentEncoding.s3Key("a%zz") == nil && PercentEncoding.s3Key("a+%C3%A9") == "a é")
    }

    @Test func pairingChecks() throws {
        let time = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!
        func payload(url: String = "https://www.icloud.com/share/x", device: String = "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
                     token: String = "5BD9F42C-8962-4CFA-AF4B-0FED5F34DF0A") -> [UInt8] {
            PairingCode(shareURL: url, parentDeviceID: device, verificationToken: token, sharedZoneID: "z", timestamp: time).jsonValue().serialized()
        }
        #expect(try PairingCode(payload: payload(), now: Timestamp(seconds: time.seconds + 600)).sharedZoneID == "z")
        #expect(throws: VaultError(.authenticationFailed, "")) { try PairingCode(payload: payload(), now: Timestamp(seconds: time.seconds + 601)) }
        #expect(throws: VaultError(.authenticationFailed, "")) { try PairingCode(payload: payload(), now: Timestamp(seconds: time.seconds - 61)) }
        #expect(throws: VaultError(.malformedDocument, "")) { try PairingCode(payload: payload(url: "http://x/y"), now: time) }
        #expect(throws: VaultError(.malformedDocument, "")) { try PairingCode(payload: payload(device: "not-a-uuid"), now: time) }
        // The token is the app's `UUID()`: random, version 4, and not the device's own id.
        for token in ["t", "00000000-0000-0000-0000-000000000000", "00000000-0000-4000-8000-000000000000", "C232AB00-9414-11EC-B3C8-9E6BDECED846", "6f1c2b7e-0d4a-4c55-9e1b-2a7f3c9d8e01"] {
            #expect(throws: VaultError(.malformedDocument, "")) { try PairingCode(payload: payload(token: token), now: time) }
        }
        #expect(throws: VaultError(.malformedDocument, "")) { try PairingCode(payload: Array(#"{"shareURL": "https://x"}"#.utf8), now: time) }
    }
}
