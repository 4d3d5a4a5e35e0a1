internal import CSodium

/// NIP-49 private key encryption: `ncryptsec1…`, the parent key under a passphrase.
///
/// key = scrypt(NFKC(passphrase), salt, N = 2^log_n, r = 8, p = 1, 32 bytes);
/// payload = 0x02 ‖ log_n ‖ salt(16) ‖ nonce(24) ‖ key-security byte ‖ XChaCha20-Poly1305
/// ciphertext of the 32 key bytes (associated data: the key-security byte); bech32 `ncryptsec`.
public enum NIP49 {
    public static let prefix = "ncryptsec"
    /// scrypt memory is 128·r·2^log_n bytes: 20 is 1 GiB. A file asking for more is refused
    /// rather than allowed to exhaust the machine.
    public static let maximumLogN: UInt8 = 20

    /// The key-security byte: what is known of the key's handling before encryption.
    public enum KeySecurity: UInt8, Sendable {
        case knownInsecure = 0x00
        case notKnownInsecure = 0x01
        case unknown = 0x02
    }

    public static func encrypt(_ key: SecretKey, passphrase: SecretBytes, logN: UInt8, keySecurity: KeySecurity = .unknown,
                               random: some RandomSource = SystemRandom()) throws -> String {
        let salt = random.bytes(16), nonce = random.bytes(24)
        let symmetric = try scrypt(passphrase, salt: salt, logN: logN)
        let ciphertext = try key.withUnsafeBytes {
            try XChaCha20Poly1305.seal($0, key: symmetric, nonce: nonce, associatedData: [keySecurity.rawValue])
        }
        let payload = [0x02, logN] + salt + nonce + [keySecurity.rawValue] + ciphertext
        let words = try Bech32.convertBits(payload, from: 8, to: 5, pad: true)
        return String(decoding: Bech32.encode(hrp: prefix, words: words), as: UTF8.self)
    }

    /// Decrypts; a wrong passphrase (or a changed string) is ``VaultError/Code/authenticationFailed``.
    public static func decrypt(_ ncryptsec: String, passphrase: SecretBytes) throws -> (key: SecretKey, keySecurity: UInt8) {
        let decoded: (hrp: String, words: [UInt8])
        do {
            decoded = try Array(ncryptsec.utf8).withUnsafeBytes { chars in
                Result { () throws(Bech32.Failure) in try Bech32.decode(chars, lengthLimit: nil) }
            }.get()
        } catch {
            throw VaultError.badBech32("the ncryptsec", error)
        }
        guard decoded.hrp == prefix else {
            throw VaultError.notAnNcryptsec()
        }
        let payload: [UInt8]
        do { payload = try Bech32.convertBits(decoded.words, from: 5, to: 8, pad: false) } catch {
            throw VaultError.badBech32("the ncryptsec", error)
        }
        guard payload.count == 91, payload[0] == 0x02 else {
            throw VaultError.unsupportedNcryptsec()
        }
        let logN = payload[1], salt = Array(payload[2..<18]), nonce = Array(payload[18..<42]), keySecurity = payload[42]
        let symmetric = try scrypt(passphrase, salt: salt, logN: logN)
        let secret: SecretBytes
        do {
            secret = try payload[43...].withContiguousStorageIfAvailable {
                try XChaCha20Poly1305.open(UnsafeRawBufferPointer($0), key: symmetric, nonce: nonce, associatedData: [keySecurity])
            }!
        } catch let error as VaultError where error.code == .authenticationFailed {
            throw VaultError.wrongPassphrase()
        }
        return (try SecretKey(secret: secret), keySecurity)
    }

    /// The passphrase (UTF-8) is NFKC-normalised first, as NIP-49 requires (libunistring, bytes
    /// to bytes); the normalised bytes go to scrypt from a zeroed scratch array.
    static func scrypt(_ passphrase: SecretBytes, salt: [UInt8], logN: UInt8) throws -> SecretBytes {
        guard (1...maximumLogN).contains(logN) else {
            throw VaultError.scryptCostOutOfRange(logN, maximum: maximumLogN)
        }
        try Sodium.ensureInitialized()
        var normalized = try passphrase.withUnsafeBytes { try UnicodeNormalization.nfkc($0) }
        defer { normalized.zeroize() }
        return try SecretBytes(count: 32) { key in
            try Sodium.check(
                normalized.withUnsafeBytes { password in
                    crypto_pwhash_scryptsalsa208sha256_ll(password.nonNullBase, password.count, salt, salt.count,
                                                          UInt64(1) << logN, 8, 1, key.bindMemory(to: UInt8.self).baseAddress!, key.count)
                },
                "scrypt"
            )
        }
    }
}

extension VaultError.Code {
    /// An ncryptsec's scrypt cost is outside what the tool accepts (a cost too high takes hours).
    public static let scryptCostOutOfRange = VaultError.Code(name: "scryptCostOutOfRange", category: .refused)
}

extension VaultError {
    static func scryptCostOutOfRange(_ logN: UInt8, maximum: UInt8, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.scryptCostOutOfRange, "scrypt log_n \(logN) is outside what this tool accepts (1 to \(maximum))", file: file, line: line)
    }
}

extension VaultError {
    /// Bech32 of another kind where an ncryptsec belongs.
    static func notAnNcryptsec(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "an encrypted key starts with 'ncryptsec1'", file: file, line: line)
    }

    /// An ncryptsec of a version or length this build does not read.
    static func unsupportedNcryptsec(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unsupportedVersion, "the ncryptsec is not a version 2 NIP-49 payload of 91 bytes", file: file, line: line)
    }

    /// The passphrase does not open the ncryptsec.
    static func wrongPassphrase(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "the passphrase does not open this ncryptsec (or the text was changed)", file: file, line: line)
    }
}
