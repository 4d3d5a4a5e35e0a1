internal import CLibCrypto
internal import CPaperLoad
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
        // The user id is kept in the blob, printed on the sheet and said in the run's notes: a
        // key, words or a share there would be printed with it (a hostile trial: a vault key
        // given as the user id was shown whole).
        try RecordedText.check(userID, field: "the user id")
        let salt = random.bytes(16), nonce = random.bytes(12)
        let key = try derive(code: code, salt: salt, iterations: iterations)
        let sealed = try key.withUnsafeBytes { keyBytes in
            try masterKey.withUnsafeBytes { try AESGCM.seal($0, key: keyBytes, nonce: nonce, associatedData: []) }
        }
        return RecoveryCodeBlob(userID: userID, encryptedMasterKey: nonce + sealed, salt: salt, iterations: iterations)
    }

    /// The master key back; a wrong code is ``VaultError/Code/authenticationFailed``.
    public static func unwrap(_ blob: RecoveryCodeBlob, code: SecretBytes) throws -> SecretBytes {
        let key = try derive(code: code, salt: blob.salt, iterations: blob.iterations)
        let raw = blob.encryptedMasterKey
        guard var plaintext = try key.withUnsafeBytes({ try AESGCM.open(Array(raw[12...]), key: $0, nonce: Array(raw[0..<12]), associatedData: []) }) else {
            throw VaultError.wrongRecoveryCode()
        }
        defer { plaintext.zeroize() }
        // The master key the blob gave is a secret this run holds, kept out of every record
        // and sheet as a key read from a file is (`code rotate` prints a new sheet).
        plaintext.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
        return try plaintext.withUnsafeBytes { try SecretBytes(copying: $0) }
    }

    /// PBKDF2 over the 24 words joined by single spaces, as the app types them.
    static func derive(code: SecretBytes, salt: [UInt8], iterations: Int) throws -> SecretBytes {
        guard code.count == 32 else { throw VaultError.recoveryCodeNot256Bits() }
        return try BIP39.phrase(for: code).withUnsafeBytes { try PBKDF2.sha256(password: $0, salt: salt, iterations: iterations, outputByteCount: 32) }
    }
}

/// AES-256-GCM (96-bit nonce, 128-bit tag) through libcrypto's EVP interface, its one owner
/// (Debian's OpenSSL, already in every process libcurl is in): swift-crypto's BoringSSL made
/// recovery-sheet 3.5 MB larger stripped, 20.4 MB against 16.9 (issue 39). The tests check it against Wycheproof.
enum AESGCM {
    /// The ciphertext and its 16-byte tag.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try run(encrypt: true, plaintext, key: key, nonce: nonce, associatedData: associatedData, tag: nil)!
    }

    /// The plaintext; nil when the tag does not verify (a wrong key, or altered bytes).
    static func open(_ sealed: [UInt8], key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8]? {
        guard sealed.count >= 16 else { return nil }
        return try sealed.dropLast(16).withUnsafeBytes {
            try run(encrypt: false, $0, key: key, nonce: nonce, associatedData: associatedData, tag: Array(sealed.suffix(16)))
        }
    }

    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { text in try key.withUnsafeBytes { try seal(text, key: $0, nonce: nonce, associatedData: associatedData) } }
    }

    static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        guard let opened = try key.withUnsafeBytes({ try open(sealed, key: $0, nonce: nonce, associatedData: associatedData) }) else {
            throw VaultError.wrongRecoveryCode()
        }
        return opened
    }

    /// One EVP pass: encrypting appends the tag; decrypting checks `tag` (nil when it fails).
    private static func run(encrypt: Bool, _ input: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8],
                            tag: [UInt8]?) throws -> [UInt8]? {
        guard key.count == 32, nonce.count == 12 else { throw VaultError.aesGCMFailed("a 32-byte key and a 12-byte nonce") }
        // libcrypto, loaded on use (issue 48): only the recovery codes need it.
        try LoadOnUse.require(OpaquePointer(hvt_library_crypto()), feature: "a recovery code's AES-256-GCM")
        guard let context = EVP_CIPHER_CTX_new() else { throw VaultError.aesGCMFailed("no cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }  // frees and clears the key schedule
        let begin = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        let update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate
        var output = [UInt8](repeating: 0, count: input.count + 16)
        defer { output.zeroize() }  // a master key, once decrypted
        var length: Int32 = 0, written: Int32 = 0
        guard begin(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, 12, nil) == 1,
              begin(context, nil, nil, key.bindMemory(to: UInt8.self).baseAddress, nonce) == 1,
              associatedData.isEmpty || update(context, nil, &length, associatedData, Int32(associatedData.count)) == 1,
              input.isEmpty || update(context, &output, &written, input.bindMemory(to: UInt8.self).baseAddress, Int32(input.count)) == 1
        else { throw VaultError.aesGCMFailed("the cipher refused its input") }
        var scratch = [UInt8](repeating: 0, count: 16)  // GCM's final step writes nothing
        if encrypt {
            guard EVP_EncryptFinal_ex(context, &scratch, &length) == 1 else {
                throw VaultError.aesGCMFailed("the cipher could not finish")
            }
            var newTag = [UInt8](repeating: 0, count: 16)
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &newTag) == 1 else { throw VaultError.aesGCMFailed("no tag") }
            return Array(output[..<Int(written)]) + newTag
        }
        var expected = tag!
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &expected) == 1 else { throw VaultError.aesGCMFailed("the tag was refused") }
        guard EVP_DecryptFinal_ex(context, &scratch, &length) == 1 else { return nil }
        return Array(output[..<Int(written)])
    }
}

extension VaultError {
    /// libcrypto's AES-256-GCM failed for a reason other than a wrong key (a C library's fault).
    static func aesGCMFailed(_ why: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "AES-256-GCM (libcrypto): \(why)", file: file, line: line)
    }

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
