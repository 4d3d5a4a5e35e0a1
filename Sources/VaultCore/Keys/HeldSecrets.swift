import Synchronization

/// The secrets this run holds (a key read from a file or a command, a vault or secrets key
/// derived from it), known by their SHA-256 so that no text the suite records or names can be
/// one of them (issue 44: a parent key given as the public key of a grant was signed into the
/// household log). 64 hex digits look the same whether they are a public or a secret key; only
/// a run that holds the secret can tell, and it must.
package enum HeldSecrets {
    /// A run holds a few keys; a fleet run derives one vault key a household, and the last
    /// ``capacity`` are kept (a fleet run records nothing a person typed).
    static let capacity = 64

    private static let fingerprints = Mutex<[[UInt8]]>([])

    /// Remembers a 32-byte secret.
    package static func register(_ secret: UnsafeRawBufferPointer) {
        guard secret.count == 32 else { return }
        let fingerprint = SHA256.hash(secret)
        fingerprints.withLock { held in
            guard !held.contains(fingerprint) else { return }
            if held.count == capacity { held.removeFirst() }
            held.append(fingerprint)
        }
    }

    /// Whether `secret` (32 bytes) is one this run holds.
    package static func holds(_ secret: UnsafeRawBufferPointer) -> Bool {
        guard secret.count == 32 else { return false }
        let fingerprint = SHA256.hash(secret)
        return fingerprints.withLock { $0.contains(fingerprint) }
    }

    /// Whether any 64 hex digits in a row in `text`, any case, are a secret this run holds.
    package static func appear(in text: some Collection<UInt8>) -> Bool {
        let bytes = Array(text)
        var runStart = 0
        var index = 0
        var decoded = [UInt8](repeating: 0, count: 32)
        defer { decoded.zeroize() }
        while index <= bytes.count {
            if index < bytes.count, Hex.value(bytes[index]) != nil { index += 1; continue }
            // A run of hex digits ends: every 64 of them in a row is a candidate.
            if index - runStart >= 64 {
                for start in runStart...(index - 64) {
                    for byte in 0..<32 {
                        decoded[byte] = Hex.value(bytes[start + 2 * byte])! << 4 | Hex.value(bytes[start + 2 * byte + 1])!
                    }
                    if decoded.withUnsafeBytes(holds) { return true }
                }
            }
            index += 1
            runStart = index
        }
        return false
    }
}
