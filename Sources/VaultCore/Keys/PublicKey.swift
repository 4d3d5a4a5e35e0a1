import Synchronization

/// A BIP-340 x-only secp256k1 public key: a Nostr `npub`. Written as 64 lowercase hex.
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes of the x coordinate.
    public let bytes: [UInt8]

    /// Checks that the bytes are a point on the curve.
    public init(bytes: [UInt8]) throws {
        self.bytes = bytes
        if Self.recentlyValid.withLock({ $0.contains(bytes) }) { return }
        guard Secp256k1.shared.isValidXOnlyPublicKey(bytes) else {
            throw VaultError.notACurvePoint()
        }
        Self.recentlyValid.withLock { valid in
            if valid.count >= Self.recentlyValidCapacity { valid.removeAll(keepingCapacity: true) }
            valid.insert(bytes)
        }
    }

    /// Keys already found on the curve. A document names the same key in several places (a
    /// device, its group memberships), and every vault a command writes is read back before it
    /// is written: each would lift the point from its x coordinate again, a square root in the
    /// field (issue 29). A point on the curve stays on it, so a hit needs no check; past the
    /// capacity the set starts over.
    private static let recentlyValid = Mutex<Set<[UInt8]>>([])
    private static let recentlyValidCapacity = 4096

    /// 64 hex characters (either case on input).
    public init(hex: String) throws {
        guard hex.utf8.count == 64, let bytes = Hex.decode(hex) else {
            throw VaultError.wrongPublicKeyText()
        }
        try self.init(bytes: bytes)
    }

    /// A NIP-19 `npub1…`.
    public init(npub: String) throws {
        let secret = try Array(npub.utf8).withUnsafeBytes {
            try NIP19.decodeKey($0, prefix: NIP19.publicKeyPrefix, what: "the npub")
        }
        try self.init(bytes: secret.withUnsafeBytes { Array($0) })
    }

    public var hex: String { Hex.encode(bytes) }
    public var npub: String { String(decoding: NIP19.encode(prefix: NIP19.publicKeyPrefix, key: bytes), as: UTF8.self) }
    public var description: String { hex }

    /// Verifies a BIP-340 Schnorr signature by this key over `message`.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        Secp256k1.shared.verify(signature: signature, message: message, publicKey: bytes)
    }
}

extension VaultError {
    /// 32 bytes that are no x coordinate of a point on secp256k1.
    static func notACurvePoint(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidKey, "the bytes are not a valid x-only secp256k1 public key", file: file, line: line)
    }

    /// Public-key text that is not 64 hex characters.
    static func wrongPublicKeyText(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "a public key is 64 hex characters", file: file, line: line)
    }
}
