import Foundation
import Testing
@testable import VaultCore

/// BIP-173 bech32 vectors and the NIP-19 examples.
@Suite struct Bech32Tests {
    struct Bech32File: Decodable { let valid, invalid, invalid_reasons: [String] }
    struct NIP19File: Decodable {
        struct Key: Decodable { let type, hex, bech32: String }
        struct Profile: Decodable { let bech32, pubkey: String; let relays: [String] }
        let keys: [Key]
        let tlv: [Profile]
    }

    func decode(_ text: String, limit: Int? = Bech32.standardLengthLimit) throws(Bech32.Failure) -> (hrp: String, words: [UInt8]) {
        try Array(text.utf8).withUnsafeBytes { buffer in
            Result { () throws(Bech32.Failure) in try Bech32.decode(buffer, lengthLimit: limit) }
        }.get()
    }

    @Test func validStringsDecodeAndReencode() throws {
        let file = try TestFiles.vector("bech32_vectors.json", as: Bech32File.self)
        #expect(file.valid.count == 7)
        for text in file.valid {
            let decoded = try decode(text)
            let encoded = String(decoding: Bech32.encode(hrp: decoded.hrp, words: decoded.words), as: UTF8.self)
            #expect(encoded == text.lowercased(), "\(text)")
        }
    }

    @Test func invalidStringsFailForTheStatedReason() throws {
        let file = try TestFiles.vector("bech32_vectors.json", as: Bech32File.self)
        #expect(file.invalid.count == 12)
        let expected: [String: (Bech32.Failure) -> Bool] = [
            "HRP character out of range": { if case .characterOutOfRange = $0 { true } else { false } },
            "overall max length exceeded": { $0 == .tooLong },
            "No separator character": { $0 == .noSeparator },
            "Empty HRP": { $0 == .emptyHumanReadablePart },
            "empty HRP": { $0 == .emptyHumanReadablePart },
            "Invalid data character": { if case .invalidDataCharacter = $0 { true } else { false } },
            "Too short checksum": { $0 == .checksumTooShort },
            "Invalid character in checksum": { if case .characterOutOfRange = $0 { true } else { false } },
            "checksum calculated with uppercase form of HRP": { $0 == .badChecksum },
        ]
        for (text, reason) in zip(file.invalid, file.invalid_reasons) {
            do {
                _ = try decode(text)
                Issue.record("\(reason): '\(text)' decoded but must not")
            } catch {
                let matches = try #require(expected[reason], "no expectation for \(reason)")
                #expect(matches(error), "\(reason): got \(error)")
            }
        }
    }

    @Test func nip19KeysRoundTrip() throws {
        let file = try TestFiles.vector("nip19_examples.json", as: NIP19File.self)
        for key in file.keys {
            if key.type == "npub" {
                let publicKey = try PublicKey(npub: key.bech32)
                #expect(publicKey.hex == key.hex)
                #expect(publicKey.npub == key.bech32)
            } else {
                let parsed = try SecretKey(parsing: .test(Array(key.bech32.utf8)), what: "test key")
                #expect(try parsed.hex().testBytes == Array(key.hex.utf8))
                #expect(String(decoding: try parsed.nsec().testBytes, as: UTF8.self) == key.bech32)
            }
        }
    }

    /// NIP-19's longer TLV entities lift BIP-173's 90-character limit; the generic decoder with
    /// no limit reads the example nprofile, whose first TLV (type 0, 32 bytes) is the pubkey.
    @Test func nip19ProfileTLV() throws {
        let profile = try #require(try TestFiles.vector("nip19_examples.json", as: NIP19File.self).tlv.first)
        #expect(profile.bech32.count > Bech32.standardLengthLimit)
        #expect(throws: Bech32.Failure.tooLong) { try decode(profile.bech32) }
        let decoded = try decode(profile.bech32, limit: nil)
        #expect(decoded.hrp == "nprofile")
        let bytes = try Bech32.convertBits(decoded.words, from: 5, to: 8, pad: false)
        #expect(bytes[0] == 0 && bytes[1] == 32)
        #expect(Hex.encode(bytes[2..<34]) == profile.pubkey)
        let relay = String(decoding: bytes[36..<(36 + Int(bytes[35]))], as: UTF8.self)
        #expect(bytes[34] == 1 && relay == profile.relays[0])
    }
}
