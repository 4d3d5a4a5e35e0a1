internal import Crypto
import FoundationEssentials  // base64
import Glibc
import VaultCore

/// The Family Medical app's recovery code (seed 002, "Master Key Distribution: Recovery Code"):
/// a random 256-bit code shown as 24 BIP-39 words encrypts the 32-byte Master Key for the
/// server. key = PBKDF2-HMAC-SHA256(the 24 words joined by single spaces, salt, 100,000
/// iterations, 32 bytes); blob = AES-256-GCM nonce(12) ‖ ciphertext ‖ tag(16).
public struct RecoveryCodeBlob: Sendable, Equatable {
    public static let kdfName = "PBKDF2-HMAC-SHA256"
    public static let cipherName = "AES-256-GCM"
    public static let defaultIterations = 100_000

    public var userID: String
    public var encryptedMasterKey: [UInt8]
    public var salt: [UInt8]
    /// Recorded in the blob so the parameters are never lost.
    public var iterations: Int

    public init(userID: String, encryptedMasterKey: [UInt8], salt: [UInt8], iterations: Int) {
        self.userID = userID
        self.encryptedMasterKey = encryptedMasterKey
        self.salt = salt
        self.iterations = iterations
    }

    /// `{user_id, encrypted_master_key, salt, kdf, iterations, cipher}`, base64 for bytes.
    public func jsonValue() -> JSONValue {
        .object([
            ("user_id", .string(userID)),
            ("encrypted_master_key", .string(Data(encryptedMasterKey).base64EncodedString())),
            ("salt", .string(Data(salt).base64EncodedString())),
            ("kdf", .string(Self.kdfName)),
            ("iterations", .int(iterations)),
            ("cipher", .string(Self.cipherName)),
        ])
    }

    public init(json: [UInt8]) throws {
        var reader = try JSONObjectReader(JSONValue(parsing: json, what: "the recovery blob"), path: "")
        userID = try reader.string("user_id")
        guard let blob = try reader.optionalBase64("encrypted_master_key"), let salt = try reader.optionalBase64("salt") else {
            throw VaultError.blobIncomplete()
        }
        encryptedMasterKey = blob
        self.salt = salt
        // A blob from before the parameters were recorded is read with the seed's defaults.
        let kdf = try reader.optionalString("kdf") ?? Self.kdfName, cipher = try reader.optionalString("cipher") ?? Self.cipherName
        iterations = try reader.optionalInt("iterations") ?? Self.defaultIterations
        try reader.finish()
        guard kdf == Self.kdfName, cipher == Self.cipherName else {
            throw VaultError.blobAlgorithmsUnsupported(kdf: kdf, cipher: cipher)
        }
        guard (1...10_000_000).contains(iterations) else { throw VaultError.blobIterationsOutOfRange(iterations) }
        guard encryptedMasterKey.count == 12 + 32 + 16 else {
            throw VaultError.blobWrongLength(encryptedMasterKey.count)
        }
    }
}

public enum RecoveryCodes {
    /// Encrypts a 32-byte master key under a recovery code (32 bytes of entropy, i.e. 24 words).
    public static func wrap(masterKey: SecretBytes, code: SecretBytes, userID: String, iterations: Int = RecoveryCodeBlob.defaultIterations,
                            random: some RandomSource = SystemRandom()) throws -> RecoveryCodeBlob {
        guard masterKey.count == 32 else { throw VaultError.wrongKeyLength("a master key", masterKey.count) }
        let salt = random.bytes(16), nonce = random.bytes(12)
        let key = try derive(code: code, salt: salt, iterations: iterations)
        let sealed = try key.withUnsafeBytes { keyBytes in
            try masterKey.withUnsafeBytes { plaintext in
                try AES.GCM.seal(plaintext, using: SymmetricKey(data: keyBytes), nonce: AES.GCM.Nonce(data: nonce))
            }
        }
        return RecoveryCodeBlob(userID: userID, encryptedMasterKey: nonce + Array(sealed.ciphertext) + Array(sealed.tag), salt: salt, iterations: iterations)
    }

    /// The master key back; a wrong code is ``VaultError/Code/authenticationFailed``.
    public static func unwrap(_ blob: RecoveryCodeBlob, code: SecretBytes) throws -> SecretBytes {
        let key = try derive(code: code, salt: blob.salt, iterations: blob.iterations)
        let raw = blob.encryptedMasterKey
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: raw[0..<12]), ciphertext: raw[12..<(raw.count - 16)], tag: raw[(raw.count - 16)...])
            let plaintext = try key.withUnsafeBytes { try AES.GCM.open(box, using: SymmetricKey(data: $0)) }
            return try plaintext.withUnsafeBytes { try SecretBytes(copying: $0) }
        } catch is CryptoKitError {
            throw VaultError.wrongRecoveryCode()
        }
    }

    /// PBKDF2 over the 24 words joined by single spaces, as the app types them.
    static func derive(code: SecretBytes, salt: [UInt8], iterations: Int) throws -> SecretBytes {
        guard code.count == 32 else { throw VaultError.recoveryCodeNot256Bits() }
        return try BIP39.phrase(for: code).withUnsafeBytes { try PBKDF2.sha256(password: $0, salt: salt, iterations: iterations, outputByteCount: 32) }
    }
}

/// AES-256-GCM for tests against Wycheproof: the same swift-crypto calls the blob uses.
enum AESGCM {
    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce), authenticating: associatedData)
        return Array(box.ciphertext) + Array(box.tag)
    }

    static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
        return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: associatedData))
    }
}

extension VaultError {
    /// A blob without its encrypted key or salt.
    static func blobIncomplete(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "the recovery blob needs encrypted_master_key and salt", file: file, line: line)
    }

    /// A blob made with a key derivation or cipher this build does not read.
    static func blobAlgorithmsUnsupported(kdf: String, cipher: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unsupportedVersion, "the recovery blob uses \(kdf) and \(cipher); this build reads \(RecoveryCodeBlob.kdfName) and \(RecoveryCodeBlob.cipherName)", file: file, line: line)
    }

    /// A blob asking for no work, or for more than a day's.
    static func blobIterationsOutOfRange(_ iterations: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "the recovery blob's iteration count \(iterations) is out of range", file: file, line: line)
    }

    /// A blob whose encrypted key is not nonce, key and tag.
    static func blobWrongLength(_ count: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "encrypted_master_key should be 60 bytes (nonce, 32-byte key, tag), not \(count)", file: file, line: line)
    }

    /// The code does not open the blob.
    static func wrongRecoveryCode(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "the recovery code does not open this blob (a wrong code, or the blob was changed)", file: file, line: line)
    }

    /// A recovery code of another length than 24 words.
    static func recoveryCodeNot256Bits(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidKey, "a recovery code is 256 bits (24 words)", file: file, line: line)
    }
}
