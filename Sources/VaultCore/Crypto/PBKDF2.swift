internal import CSodium

/// PBKDF2 with HMAC-SHA256 (RFC 8018 §5.2) on libsodium's HMAC, which libsodium does not offer
/// as PBKDF2 itself. Checked against Wycheproof's pbkdf2_hmacsha256 vectors.
public enum PBKDF2 {
    public static func sha256(password: UnsafeRawBufferPointer, salt: [UInt8], iterations: Int, outputByteCount: Int) throws -> SecretBytes {
        guard iterations >= 1, outputByteCount >= 1 else {
            throw VaultError.badPrimitiveParameters("PBKDF2 needs at least one iteration and one byte of output")
        }
        try Sodium.ensureInitialized()
        // The HMAC state keyed with the password, computed once and copied for every block.
        var keyed = crypto_auth_hmacsha256_state()
        defer { sodium_memzero(&keyed, MemoryLayout<crypto_auth_hmacsha256_state>.size) }
        try Sodium.check(crypto_auth_hmacsha256_init(&keyed, password.nonNullBase, password.count), "HMAC-SHA256 init")

        func mac(_ parts: [[UInt8]], into output: inout [UInt8]) throws {
            var state = keyed
            defer { sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size) }
            for part in parts where !part.isEmpty {
                try Sodium.check(crypto_auth_hmacsha256_update(&state, part, UInt64(part.count)), "HMAC-SHA256 update")
            }
            try Sodium.check(crypto_auth_hmacsha256_final(&state, &output), "HMAC-SHA256 final")
        }

        let blockCount = (outputByteCount + 31) / 32
        return try SecretBytes(count: outputByteCount) { out in
            var u = [UInt8](repeating: 0, count: 32), t = [UInt8](repeating: 0, count: 32)
            defer { u.zeroize(); t.zeroize() }
            for block in 1...blockCount {
                let index = [UInt8(block >> 24 & 0xff), UInt8(block >> 16 & 0xff), UInt8(block >> 8 & 0xff), UInt8(block & 0xff)]
                try mac([salt, index], into: &u)
                t = u
                for _ in 1..<max(iterations, 1) {
                    try mac([u], into: &u)
                    for byte in 0..<32 { t[byte] ^= u[byte] }
                }
                let start = (block - 1) * 32, take = min(32, outputByteCount - start)
                for byte in 0..<take { out[start + byte] = t[byte] }
            }
        }
    }
}

extension VaultError.Code {
    /// A primitive was called with parameters its standard does not define (no iterations, an
    /// output longer than allowed): the suite's own mistake, never a person's, so not a refusal.
    public static let badPrimitiveParameters = VaultError.Code(name: "badPrimitiveParameters", category: .operational)
}

extension VaultError {
    static func badPrimitiveParameters(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badPrimitiveParameters, what, file: file, line: line)
    }
}
