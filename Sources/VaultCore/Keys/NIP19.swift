/// NIP-19 bare keys: `npub1…` for public keys and `nsec1…` for secret keys, bech32 over the
/// 32 raw key bytes.
public enum NIP19 {
    public static let publicKeyPrefix = "npub"
    public static let secretKeyPrefix = "nsec"

    /// Encodes 32 bytes as `<prefix>1…`, in ASCII bytes. Used for secrets too, so the caller
    /// decides where the bytes go and zeroes them when needed.
    static func encode(prefix: String, key: [UInt8]) -> [UInt8] {
        precondition(key.count == 32)
        var words = try! Bech32.convertBits(key, from: 8, to: 5, pad: true)  // padding never fails
        defer { words.zeroize() }
        return Bech32.encode(hrp: prefix, words: words)
    }

    /// A secret key as `nsec1…` ASCII, in protected memory; every scratch copy is zeroed.
    static func nsec(_ key: UnsafeRawBufferPointer) throws -> SecretBytes {
        var raw = Array(key)
        defer { raw.zeroize() }
        var ascii = encode(prefix: secretKeyPrefix, key: raw)
        return try SecretBytes(consuming: &ascii)
    }

    /// Decodes `<prefix>1…` ASCII into exactly 32 bytes in protected memory.
    static func decodeKey(_ chars: UnsafeRawBufferPointer, prefix: String, what: String) throws -> SecretBytes {
        let decoded: (hrp: String, words: [UInt8])
        do {
            decoded = try Bech32.decode(chars)
        } catch {
            throw VaultError.badBech32(what, error)
        }
        var words = decoded.words
        defer { words.zeroize() }
        guard decoded.hrp == prefix else {
            let found = decoded.hrp.count <= 10 ? "'\(decoded.hrp)'" : "another prefix"
            throw VaultError.wrongBech32Prefix(what, expected: prefix, found: found)
        }
        var bytes: [UInt8]
        do {
            bytes = try Bech32.convertBits(words, from: 5, to: 8, pad: false)
        } catch {
            throw VaultError.badBech32(what, error)
        }
        guard bytes.count == 32 else {
            let count = bytes.count
            bytes.zeroize()
            throw VaultError.wrongBech32KeyLength(what, count)
        }
        return try SecretBytes(consuming: &bytes)
    }
}

extension VaultError {
    /// Bech32 text that does not decode (characters, checksum, padding).
    static func badBech32(_ what: String, _ failure: Bech32.Failure, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(what) \(failure.reason)", file: file, line: line)
    }

    /// Bech32 of another kind (an npub where an nsec belongs, or anything else).
    static func wrongBech32Prefix(_ what: String, expected: String, found: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(what) should start with '\(expected)1' but has \(found)", file: file, line: line)
    }

    /// Bech32 that decodes to another length than a key's.
    static func wrongBech32KeyLength(_ what: String, _ count: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(what) should carry 32 bytes but carries \(count)", file: file, line: line)
    }
}
