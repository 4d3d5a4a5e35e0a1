internal import CSodium

/// SHA-256 (libsodium `crypto_hash_sha256`).
public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { hash($0) }
    }

    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        precondition((try? Sodium.ensureInitialized()) != nil, "libsodium failed to initialise")
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = out.withUnsafeMutableBytes { digest in
            crypto_hash_sha256(
                digest.bindMemory(to: UInt8.self).baseAddress!,
                bytes.nonNullBase,
                UInt64(bytes.count)
            )
        }
        return out
    }

    /// SHA-256 of bytes that arrive in pieces (a manifest read a piece at a time).
    package final class Hasher {
        private var state = crypto_hash_sha256_state()

        package init() {
            precondition((try? Sodium.ensureInitialized()) != nil, "libsodium failed to initialise")
            crypto_hash_sha256_init(&state)
        }

        package func update(_ bytes: UnsafeRawBufferPointer) {
            crypto_hash_sha256_update(&state, bytes.nonNullBase, UInt64(bytes.count))
        }

        /// The digest of everything given so far; libsodium's state is spent after it.
        package func finish() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: byteCount)
            crypto_hash_sha256_final(&state, &out)
            return out
        }
    }
}

/// HMAC-SHA256 (libsodium `crypto_auth_hmacsha256_*`, which takes keys of any length).
package enum HMACSHA256 {
    package static let byteCount = 32

    /// HMAC of the concatenation of `parts` under `key`, written to `output` (32 bytes).
    package static func authenticate(
        key: UnsafeRawBufferPointer,
        parts: [UnsafeRawBufferPointer],
        into output: UnsafeMutableRawBufferPointer
    ) throws {
        precondition(output.count == byteCount)
        try Sodium.ensureInitialized()
        var state = crypto_auth_hmacsha256_state()
        defer { sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size) }
        try Sodium.check(
            crypto_auth_hmacsha256_init(&state, key.nonNullBase, key.count),
            "HMAC-SHA256 init"
        )
        for part in parts where part.count > 0 {
            try Sodium.check(
                crypto_auth_hmacsha256_update(&state, part.nonNullBase, UInt64(part.count)),
                "HMAC-SHA256 update"
            )
        }
        try Sodium.check(
            crypto_auth_hmacsha256_final(&state, output.bindMemory(to: UInt8.self).baseAddress!),
            "HMAC-SHA256 final"
        )
    }
}

extension UnsafeRawBufferPointer {
    /// The base address, or a pointer to a static byte for an empty buffer: libsodium's
    /// prototypes take non-null pointers even when the length is zero.
    var nonNullBase: UnsafePointer<UInt8> {
        if let base = baseAddress { return base.assumingMemoryBound(to: UInt8.self) }
        return UnsafeRawPointer(emptyByte).assumingMemoryBound(to: UInt8.self)
    }
}

private nonisolated(unsafe) let emptyByte = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
