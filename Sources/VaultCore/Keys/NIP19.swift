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

    /// Decodes `<prefix>1…` ASCII into exactly 32 bytes in protected memory.
    static func decodeKey(_ chars: UnsafeRawBufferPointer, prefix: String, what: String) throws -> SecretBytes {
        let decoded: (hrp: String, words: [UInt8])
        do {
            decoded = try Bech32.decode(chars)
        } catch {
            throw VaultError(.malformedKey, "\(what) \(error.reason)")
        }
        var words = decoded.words
        defer { words.zeroize() }
        guard decoded.hrp == prefix else {
            let found = decoded.hrp.count <= 10 ? "'\(decoded.hrp)'" : "another prefix"
            throw VaultError(.malformedKey, "\(what) should start with '\(prefix)1' but has \(found)")
        }
        var bytes: [UInt8]
        do {
            bytes = try Bech32.convertBits(words, from: 5, to: 8, pad: false)
        } catch {
            throw VaultError(.malformedKey, "\(what) \(error.reason)")
        }
        guard bytes.count == 32 else {
            let count = bytes.count
            bytes.zeroize()
            throw VaultError(.malformedKey, "\(what) should carry 32 bytes but carries \(count)")
        }
        return try SecretBytes(consuming: &bytes)
    }
}
