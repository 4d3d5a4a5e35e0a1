import Foundation
import Testing
@testable import VaultCore

@Suite struct BIP39Tests {
    struct VectorFile: Decodable { let english: [[String]] }

    @Test func wordlistIsThePublishedOne() throws {
        let published = try String(contentsOf: TestFiles.vectors.appendingPathComponent("bip39_english.txt"), encoding: .utf8)
        #expect(BIP39.englishWords.count == 2048)
        #expect(BIP39.englishWords.joined(separator: "\n") + "\n" == published)
        #expect(Hex.encode(SHA256.hash(Array(published.utf8))).hasPrefix("2f5eed53a4727b4b"))
    }

    @Test func publishedVectors() throws {
        let vectors = try TestFiles.vector("bip39_vectors.json", as: VectorFile.self).english
        #expect(vectors.count == 24)
        for vector in vectors {
            let entropy = SecretBytes.test(hex(vector[0]))
            #expect(try BIP39.words(for: entropy).joined(separator: " ") == vector[1])
            #expect(try BIP39.entropy(fromWords: vector[1]) == entropy)
        }
    }

    @Test func forgivingInput() throws {
        let words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
        let expected = try BIP39.entropy(fromWords: words)
        #expect(try BIP39.entropy(fromWords: "  ABANDON aban\tabandon\n\nABAN abandon, aband abandon abandon abandon abandon abandon abou ") == expected)
        // A byte order mark (Notepad), zero-width characters in or between words: no text.
        #expect(try BIP39.entropy(fromWords: "\u{feff}" + words.replacingOccurrences(of: "about", with: "ab\u{200b}out\u{2060}")) == expected)
    }

    @Test func preciseErrors() throws {
        func reason(_ text: String) -> String {
            do { _ = try BIP39.entropy(fromWords: text); return "" } catch { return (error as? VaultError)?.reason ?? "" }
        }
        let twelve = Array(repeating: "abandon", count: 11)
        #expect(reason((twelve + ["abandom"]).joined(separator: " ")) == "word 12 is not on BIP-39's English list, the one the sheets print")
        // What else is typed from a sheet: its npub (grouped as printed), a share's words and
        // their check line, numbers given twice or left out.
        #expect(reason("npub1fa0nx3zd 2rjgs9ud xskshkz2 h00q0nma").hasPrefix("that is a public key"))
        let share = Array(SLIP39.words.prefix(33)).joined(separator: " ")
        #expect(reason(share).hasPrefix("these 33 words are a share's"))
        #expect(reason(share + "\nHVT-SHARE 12951 0a92686c7aa4").hasPrefix("these 33 words are a share's"))
        let numbered = (1...12).map { "\($0 == 3 ? 2 : $0). abandon" }.joined(separator: "\n")
        #expect(reason(numbered).contains("(2 is given twice, 3 missing)"))
        #expect(reason((twelve + ["zoo"]).joined(separator: " ")).contains("checksum does not match"))
        #expect(reason(twelve.joined(separator: " ")).contains("found 11"))
        #expect(reason((twelve + ["abanxyz"]).joined(separator: " ")).hasPrefix("word 12 is not"))
    }
}

@Suite struct NIP49Tests {
    struct VectorFile: Decodable {
        struct Decryption: Decodable { let ncryptsec, password, secret_key_hex: String; let log_n: Int }
        struct Normalization: Decodable { let input, nfkc_utf8_hex: String }
        let decryption: [Decryption]
        let password_normalization: [Normalization]
    }

    @Test func publishedVectorDecrypts() throws {
        let file = try TestFiles.vector("nip49_vectors.json", as: VectorFile.self)
        let vector = try #require(file.decryption.first)
        let (key, keySecurity) = try NIP49.decrypt(vector.ncryptsec, passphrase: vector.password)
        #expect(try key.hex().testBytes == Array(vector.secret_key_hex.utf8))
        #expect(keySecurity == 0)
        #expect(throws: VaultError(.authenticationFailed, "")) { try NIP49.decrypt(vector.ncryptsec, passphrase: "nostR") }
    }

    @Test func passphraseIsNFKCNormalised() throws {
        let normalization = try #require(try TestFiles.vector("nip49_vectors.json", as: VectorFile.self).password_normalization.first)
        #expect(Hex.encode(try Array(normalization.input.utf8).withUnsafeBytes { try UnicodeNormalization.nfkc($0) }) == normalization.nfkc_utf8_hex)
        let key = try SecretKey.generate()
        let encrypted = try NIP49.encrypt(key, passphrase: normalization.input, logN: 4)
        #expect(try NIP49.decrypt(encrypted, passphrase: "\u{00c5}\u{03a9}\u{1e69}").key == key)
    }

    @Test func roundTripAndLayout() throws {
        let key = try SecretKey.generate()
        let encrypted = try NIP49.encrypt(key, passphrase: "correct horse", logN: 8, keySecurity: .notKnownInsecure)
        #expect(encrypted.hasPrefix("ncryptsec1"))
        let decrypted = try NIP49.decrypt(encrypted, passphrase: "correct horse")
        #expect(decrypted.key == key && decrypted.keySecurity == 1)
        #expect(throws: VaultError(.scryptCostOutOfRange, "")) { try NIP49.encrypt(key, passphrase: "x", logN: 30) }
    }
}
