internal import CSodium

/// Where nonces and new keys come from. Production code uses ``SystemRandom``; tests inject a
/// seeded source so fixtures and property tests are reproducible.
public protocol RandomSource: Sendable {
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RandomSource {
    /// `count` fresh bytes for public values such as nonces and salts.
    public func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }

    /// `count` fresh bytes straight into protected memory, for keys.
    public func secret(_ count: Int) throws -> SecretBytes {
        try SecretBytes(count: count) { fill($0) }
    }
}

/// The operating system's CSPRNG through libsodium's `randombytes_buf`.
public struct SystemRandom: RandomSource {
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        precondition((try? Sodium.ensureInitialized()) != nil, "libsodium failed to initialise")
        if let base = buffer.baseAddress, buffer.count > 0 {
            randombytes_buf(base, buffer.count)
        }
    }
}
