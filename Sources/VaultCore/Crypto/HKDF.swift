/// HKDF with SHA-256 (RFC 5869), built on libsodium's HMAC-SHA256 because libsodium 1.0.18
/// has no HKDF of its own. Checked against RFC 5869 appendix A and Wycheproof.
public enum HKDF {
    /// The most output RFC 5869 allows: 255 blocks of 32 bytes.
    public static let maximumOutputByteCount = 255 * HMACSHA256.byteCount

    /// Extract-then-expand. The result lives in protected memory.
    public static func deriveKey(
        inputKeyMaterial: UnsafeRawBufferPointer,
        salt: [UInt8],
        info: [UInt8],
        outputByteCount: Int
    ) throws -> SecretBytes {
        let prk = try extract(inputKeyMaterial: inputKeyMaterial, salt: salt)
        return try expand(pseudoRandomKey: prk, info: info, outputByteCount: outputByteCount)
    }

    /// Convenience for input keying material that is itself a secret.
    public static func deriveKey(
        inputKeyMaterial: SecretBytes,
        salt: [UInt8],
        info: [UInt8],
        outputByteCount: Int
    ) throws -> SecretBytes {
        try inputKeyMaterial.withUnsafeBytes {
            try deriveKey(inputKeyMaterial: $0, salt: salt, info: info, outputByteCount: outputByteCount)
        }
    }

    /// PRK = HMAC-SHA256(salt, IKM). An empty salt acts as 32 zero bytes (HMAC pads the key
    /// with zeros either way, so no special case is needed).
    static func extract(inputKeyMaterial: UnsafeRawBufferPointer, salt: [UInt8]) throws -> SecretBytes {
        try SecretBytes(count: HMACSHA256.byteCount) { prk in
            try salt.withUnsafeBytes { salt in
                try HMACSHA256.authenticate(key: salt, parts: [inputKeyMaterial], into: prk)
            }
        }
    }

    /// OKM = T(1) ‖ T(2) ‖ …, T(i) = HMAC(PRK, T(i-1) ‖ info ‖ i), cut to `outputByteCount`.
    static func expand(pseudoRandomKey prk: SecretBytes, info: [UInt8], outputByteCount: Int) throws -> SecretBytes {
        guard outputByteCount >= 0, outputByteCount <= maximumOutputByteCount else {
            throw VaultError.badPrimitiveParameters("HKDF output of \(outputByteCount) bytes is more than RFC 5869 allows (\(maximumOutputByteCount))")
        }
        let blockSize = HMACSHA256.byteCount
        let blockCount = (outputByteCount + blockSize - 1) / blockSize
        // Every block is written in place, so T(i-1) is read straight from the output buffer.
        let blocks = try SecretBytes(count: blockCount * blockSize) { t in
            try prk.withUnsafeBytes { prk in
                try info.withUnsafeBytes { info in
                    for index in 0..<blockCount {
                        let previous = UnsafeRawBufferPointer(rebasing: t[max(0, (index - 1) * blockSize)..<index * blockSize])
                        let current = UnsafeMutableRawBufferPointer(rebasing: t[index * blockSize..<(index + 1) * blockSize])
                        try withUnsafeBytes(of: UInt8(index + 1)) { counter in
                            try HMACSHA256.authenticate(key: prk, parts: [previous, info, counter], into: current)
                        }
                    }
                }
            }
        }
        return blocks.count == outputByteCount ? blocks : try blocks.slice(0..<outputByteCount)
    }
}
