/// A secp256k1 secret key: the parent's `nsec`, a child's key, or a device subkey.
///
/// The 32 bytes live in ``SecretBytes``; the type itself prints only its public key.
public struct SecretKey: Sendable, CustomStringConvertible {
    private let secret: SecretBytes
    public let publicKey: PublicKey

    /// Wraps 32 secret bytes, refusing zero or values not below the curve order.
    public init(secret: SecretBytes) throws {
        guard secret.count == 32 else {
            throw VaultError.wrongKeyLength("a secret key", secret.count)
        }
        let publicBytes = try secret.withUnsafeBytes { try Secp256k1.shared.xOnlyPublicKey(secret: $0) }
        self.secret = secret
        self.publicKey = try PublicKey(bytes: publicBytes)
        // Every secret key the run holds (restored from words, shares or a code, decrypted,
        // derived): nothing it records or takes for a public key may be one.
        secret.withUnsafeBytes { HeldSecrets.register($0) }
    }

    /// A fresh random key. A draw outside the curve order (probability about 2⁻¹²⁸) is drawn again.
    public static func generate(using random: some RandomSource = SystemRandom()) throws -> SecretKey {
        while true {
            let candidate = try random.secret(32)
            if candidate.withUnsafeBytes({ Secp256k1.shared.isValidSecretKey($0) }) {
                return try SecretKey(secret: candidate)
            }
        }
    }

    /// Parses what a key file holds: `nsec1…` or 64 hex characters, surrounded by any
    /// whitespace. `what` names the input in errors ("key file 'parent.nsec'").
    public init(parsing contents: SecretBytes, what: String) throws {
        let secret = try contents.withUnsafeBytes { raw -> SecretBytes in
            let text = UnsafeRawBufferPointer(rebasing: raw[trimmedRange(raw)])
            guard !text.isEmpty else {
                throw VaultError.emptyKeyText(what)
            }
            if text.count == 64, text.allSatisfy(isHexDigit) {
                return try SecretBytes(count: 32) { out in _ = Hex.decode(text, into: out) }
            }
            if text.startsWithFolded("npub1") {
                throw VaultError.publicKeyGivenAsSecret(what)
            }
            if text.startsWithFolded("nsec1") {
                return try NIP19.decodeKey(text, prefix: NIP19.secretKeyPrefix, what: what)
            }
            throw VaultError.notAKeyText(what)
        }
        try self.init(secret: secret)
        // A key read in is one a person gave: never forgotten, however many are derived after.
        secret.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
        // So are the keys it gives a household, derived or not by this run (a trial: pieces of
        // the vault key were taken as a device's name where the parent key was given): pinned
        // with their pieces when text is first asked about, not at every start.
        let parent = self
        HeldSecrets.registerWhenAsked {
            (try? Derivation.vaultKey(for: parent))?.secret.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
            (try? Derivation.secretsKey(for: parent))?.secret.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
        }
    }

    /// The key as NIP-19 `nsec1…` ASCII, in protected memory.
    public func nsec() throws -> SecretBytes {
        try secret.withUnsafeBytes(NIP19.nsec)
    }

    /// The key as 64 lowercase hex ASCII, in protected memory.
    public func hex() throws -> SecretBytes { try secret.hex() }

    /// Read access to the 32 raw bytes.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try secret.withUnsafeBytes(body)
    }

    /// A BIP-340 Schnorr signature over `message` with fresh auxiliary randomness.
    public func signature(for message: [UInt8], auxiliaryRandom: [UInt8]? = nil) throws -> [UInt8] {
        let aux = auxiliaryRandom ?? SystemRandom().bytes(32)
        return try secret.withUnsafeBytes { try Secp256k1.shared.sign(message: message, secret: $0, auxiliaryRandom: aux) }
    }

    public var description: String { "SecretKey(public: \(publicKey.hex))" }
}

/// Constant-time equality of the secret bytes.
extension SecretKey: Equatable {
    public static func == (lhs: SecretKey, rhs: SecretKey) -> Bool { lhs.secret == rhs.secret }
}

private func isHexDigit(_ char: UInt8) -> Bool {
    (0x30...0x39).contains(char) || (0x61...0x66).contains(char) || (0x41...0x46).contains(char)
}

private func isWhitespace(_ char: UInt8) -> Bool {
    char == 0x20 || char == 0x09 || char == 0x0a || char == 0x0d || char == 0x0b || char == 0x0c
}

func trimmedRange(_ bytes: UnsafeRawBufferPointer) -> Range<Int> {
    var start = 0, end = bytes.count
    while start < end, isWhitespace(bytes[start]) { start += 1 }
    while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
    return start..<end
}

extension VaultError {
    /// Key bytes of the wrong length (`kind`: "a secret key", "a vault key").
    package static func wrongKeyLength(_ kind: String, _ count: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidKey, "\(kind) is 32 bytes, not \(count)", file: file, line: line)
    }

    /// A key file or text with nothing in it.
    static func emptyKeyText(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(what) is empty", file: file, line: line)
    }

    /// An npub where a secret key belongs.
    static func publicKeyGivenAsSecret(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(what) holds a public key (npub); a secret key (nsec) is needed", file: file, line: line)
    }

    /// Text that is neither form of a secret key.
    static func notAKeyText(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(what) holds neither an nsec1… key nor 64 hex characters", file: file, line: line)
    }
}
