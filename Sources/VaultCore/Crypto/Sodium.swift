internal import CSodium

/// The one place libsodium is initialised and its return codes are checked.
enum Sodium {
    // A static let runs its initialiser once, thread-safely, on first use.
    private static let initialized: Bool = sodium_init() >= 0

    static func ensureInitialized() throws {
        guard initialized else {
            throw VaultError.sodiumUnavailable()
        }
    }

    /// Every libsodium call whose result is a status goes through here: 0 is success.
    static func check(_ status: Int32, _ operation: @autoclosure () -> String) throws {
        guard status == 0 else {
            throw VaultError.sodiumFailed(operation())
        }
    }
}

extension VaultError {
    /// sodium_init failed: no randomness source, or the CPU checks failed.
    static func sodiumUnavailable(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "libsodium could not be initialised", file: file, line: line)
    }

    /// A libsodium call that returned a failure status; `operation` names the call.
    static func sodiumFailed(_ operation: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "\(operation) failed in libsodium", file: file, line: line)
    }
}

// MARK: - Base64 for secrets

extension Sodium {
    /// Standard padded base64 (RFC 4648 §4, as Foundation's `Data.base64EncodedString()` writes
    /// it) decoded straight into protected memory; nil unless it is exactly `byteCount` bytes.
    static func base64Secret(_ text: String, byteCount: Int) throws -> SecretBytes? {
        try ensureInitialized()
        var characters = Array(text.utf8)
        defer { characters.zeroize() }
        guard characters.count == (byteCount + 2) / 3 * 4 else { return nil }
        var decoded = 0
        var valid = true
        let secret = try SecretBytes(count: byteCount) { output in
            var length = 0
            valid = characters.withUnsafeBufferPointer { input in
                sodium_base642bin(output.bindMemory(to: UInt8.self).baseAddress!, output.count, input.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  input.count, nil, &length, nil, Int32(sodium_base64_VARIANT_ORIGINAL)) == 0
            }
            decoded = length
        }
        return valid && decoded == byteCount ? secret : nil
    }

    /// Standard padded base64 of a secret, as `JSONEncoder` writes a `Data` field.
    static func base64(_ secret: SecretBytes) throws -> String {
        try ensureInitialized()
        return try secret.withUnsafeBytes { bytes in
            var out = [CChar](repeating: 0, count: Int(sodium_base64_encoded_len(bytes.count, Int32(sodium_base64_VARIANT_ORIGINAL))))
            defer { sodium_memzero(&out, out.count) }
            guard sodium_bin2base64(&out, out.count, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, Int32(sodium_base64_VARIANT_ORIGINAL)) != nil else {
                throw VaultError.sodiumFailed("base64 encoding")
            }
            return String(cString: out)
        }
    }
}
