internal import CSodium

/// XChaCha20-Poly1305-IETF (libsodium `crypto_aead_xchacha20poly1305_ietf_*`): 32-byte key,
/// 24-byte nonce, 16-byte tag appended to the ciphertext.
public enum XChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 24
    public static let tagByteCount = 16

    /// Encrypts `plaintext`; returns ciphertext ‖ tag.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer,
        key: SecretBytes,
        nonce: [UInt8],
        associatedData: [UInt8]
    ) throws -> [UInt8] {
        try Sodium.ensureInitialized()
        try checkSizes(key: key, nonce: nonce)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var written: UInt64 = 0
        let status = key.withUnsafeBytes { key in
            associatedData.withUnsafeBytes { ad in
                out.withUnsafeMutableBytes { out in
                    crypto_aead_xchacha20poly1305_ietf_encrypt(
                        out.bindMemory(to: UInt8.self).baseAddress!, &written,
                        plaintext.nonNullBase, UInt64(plaintext.count),
                        ad.nonNullBase, UInt64(ad.count),
                        nil, nonce, key.nonNullBase
                    )
                }
            }
        }
        try Sodium.check(status, "XChaCha20-Poly1305 encryption")
        return out
    }

    /// Decrypts and authenticates ciphertext ‖ tag. The plaintext lands in protected memory.
    /// Throws ``VaultError/Code/authenticationFailed`` when the tag does not verify.
    public static func open(
        _ ciphertextAndTag: UnsafeRawBufferPointer,
        key: SecretBytes,
        nonce: [UInt8],
        associatedData: [UInt8]
    ) throws -> SecretBytes {
        try Sodium.ensureInitialized()
        try checkSizes(key: key, nonce: nonce)
        guard ciphertextAndTag.count >= tagByteCount else {
            throw VaultError.ciphertextShorterThanTag()
        }
        return try SecretBytes(count: ciphertextAndTag.count - tagByteCount) { plaintext in
            var written: UInt64 = 0
            let status = key.withUnsafeBytes { key in
                associatedData.withUnsafeBytes { ad in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        plaintext.bindMemory(to: UInt8.self).baseAddress!, &written,
                        nil,
                        ciphertextAndTag.nonNullBase, UInt64(ciphertextAndTag.count),
                        ad.nonNullBase, UInt64(ad.count),
                        nonce, key.nonNullBase
                    )
                }
            }
            guard status == 0 else {
                throw VaultError.tagDoesNotVerify()
            }
        }
    }

    private static func checkSizes(key: SecretBytes, nonce: [UInt8]) throws {
        guard key.count == keyByteCount else {
            throw VaultError.aeadKeyWrongLength(key.count)
        }
        guard nonce.count == nonceByteCount else {
            throw VaultError.aeadNonceWrongLength(nonce.count)
        }
    }
}

extension VaultError {
    /// Ciphertext too short to hold even the tag: it cannot be authentic.
    static func ciphertextShorterThanTag(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "ciphertext is shorter than its 16-byte tag", file: file, line: line)
    }

    /// The Poly1305 tag did not verify: a wrong key, or changed data.
    static func tagDoesNotVerify(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "authentication failed", file: file, line: line)
    }

    /// A key that is not 32 bytes (only its length is told).
    static func aeadKeyWrongLength(_ byteCount: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidKey, "an XChaCha20-Poly1305 key is 32 bytes, not \(byteCount)", file: file, line: line)
    }

    /// A nonce that is not 24 bytes.
    static func aeadNonceWrongLength(_ byteCount: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedEnvelope, "an XChaCha20-Poly1305 nonce is 24 bytes, not \(byteCount)", file: file, line: line)
    }
}
