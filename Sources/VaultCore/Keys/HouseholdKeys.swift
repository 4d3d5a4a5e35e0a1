/// The derivations that tie a household to its parent key. They are the compatibility contract
/// with the app (seed 000, "Vault Key Derivation" and "DeviceSubkeyManager"); the exact bytes are
/// in docs/vault-format.md §2.
public enum Derivation {
    /// HKDF salt of the vault key.
    public static let vaultKeySalt = "mytube:vault:v1"
    /// HKDF info of every device subkey.
    public static let deviceSubkeyInfo = "mytube:subkey:v1"
    /// HKDF salt of the secrets key (schema 3).
    public static let secretsKeySalt = "mytube:secrets:v1"

    /// vault key = HKDF-SHA256(IKM = secret key, salt = "mytube:vault:v1",
    /// info = parent public key as 64 lowercase hex, L = 32).
    public static func vaultKey(for parent: SecretKey) throws -> VaultKey {
        let secret = try parent.withUnsafeBytes { ikm in
            try HKDF.deriveKey(
                inputKeyMaterial: ikm,
                salt: Array(vaultKeySalt.utf8),
                info: Array(parent.publicKey.hex.utf8),
                outputByteCount: 32
            )
        }
        return try VaultKey(secret: secret)
    }

    /// secrets key = HKDF-SHA256(IKM = secret key, salt = "mytube:secrets:v1", info = parent
    /// public key as 64 lowercase hex, L = 32): from schema 3 on, the key a document's secret
    /// fields (each child's key, the wrap key) are sealed under, so that the vault key a parent
    /// hands to support opens the household's structure and never a child's key
    /// (docs/vault-format.md §9.1).
    public static func secretsKey(for parent: SecretKey) throws -> FieldKey {
        let secret = try parent.withUnsafeBytes { ikm in
            try HKDF.deriveKey(inputKeyMaterial: ikm, salt: Array(secretsKeySalt.utf8), info: Array(parent.publicKey.hex.utf8), outputByteCount: 32)
        }
        secret.withUnsafeBytes { HeldSecrets.register($0) }
        return FieldKey(secret: secret)
    }

    /// device subkey = HKDF-SHA256(IKM = secret key, salt = device id as UTF-8,
    /// info = "mytube:subkey:v1", L = 32). An output that is not a valid scalar is an error,
    /// never a silent retry, because the app would derive a different key.
    public static func deviceSubkey(for parent: SecretKey, deviceID: String) throws -> SecretKey {
        let secret = try parent.withUnsafeBytes { ikm in
            try HKDF.deriveKey(
                inputKeyMaterial: ikm,
                salt: Array(deviceID.utf8),
                info: Array(deviceSubkeyInfo.utf8),
                outputByteCount: 32
            )
        }
        guard secret.withUnsafeBytes({ Secp256k1.shared.isValidSecretKey($0) }) else {
            throw VaultError.invalidDeviceSubkey(deviceID)
        }
        return try SecretKey(secret: secret)
    }
}

/// The 32-byte XChaCha20-Poly1305 key of a household's vault.
/// The key a document's secret fields are sealed under: the vault key up to schema 2, the
/// secrets key from schema 3 (``VaultAccess/fieldKey(version:)``).
public struct FieldKey: Sendable {
    package let secret: SecretBytes
}

public struct VaultKey: Sendable, Equatable {
    package let secret: SecretBytes

    public init(secret: SecretBytes) throws {
        guard secret.count == 32 else {
            throw VaultError.wrongKeyLength("a vault key", secret.count)
        }
        self.secret = secret
        // Read in or derived, a vault key is never a value this run records (a grant's key).
        secret.withUnsafeBytes { HeldSecrets.register($0) }
    }

    /// Parses a vault-key file: 64 hex characters, surrounded by any whitespace.
    /// An `nsec1…` (the parent key, the usual mix-up) is named as such.
    public init(parsing contents: SecretBytes, what: String) throws {
        let isParentKey = contents.withUnsafeBytes { raw in
            let text = raw[trimmedRange(raw)]
            return text.count != 64 && text.starts(with: Array("nsec1".utf8))
        }
        if isParentKey { throw VaultError.parentKeyGivenAsVaultKey(what) }
        // Read in, it is one a person gave: never forgotten, and known by its pieces too
        // (SecretBytes.parsingHex, every hex key file's door, pins it).
        try self.init(secret: SecretBytes.parsingHex(contents, byteCount: 32, what: what, kind: "a vault key"))
    }

    /// The key as 64 lowercase hex ASCII, in protected memory.
    public func hex() throws -> SecretBytes { try secret.hex() }

    /// The public key of these 32 bytes taken as a secp256k1 secret key (nil for the rare
    /// bytes that are not one): whoever holds the vault key could sign with it, so it is never
    /// granted nor let sign (a vault key is handed to support; a signer is one person).
    public var publicKeyAsSigner: PublicKey? {
        try? SecretKey(secret: SecretBytes(copying: secret.withUnsafeBytes { $0 })).publicKey
    }
}

/// A household's public identity: the parent's public key and what follows from it.
public struct Household: Hashable, Sendable {
    public let parentPublicKey: PublicKey
    /// SHA-256 of the parent public key's 64 lowercase hex characters (UTF-8).
    public let id: HouseholdID

    public init(parentPublicKey: PublicKey) {
        self.parentPublicKey = parentPublicKey
        self.id = HouseholdID(bytes: SHA256.hash(Array(parentPublicKey.hex.utf8)))
    }

    /// Where the vault is stored: `vaults/<household id>.vault`.
    public var vaultPath: String { id.vaultPath }
}

/// The 32-byte household id, as carried in the envelope header.
public struct HouseholdID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 32)
        self.bytes = bytes
    }

    public var hex: String { Hex.encode(bytes) }
    /// The first 12 hex digits, for people (a recovery sheet, a summary line).
    public var shortHex: String { String(hex.prefix(12)) }
    public var vaultPath: String { "vaults/\(hex).vault" }
    public var description: String { hex }
}

extension VaultError {
    /// A device id whose HKDF output is no secp256k1 scalar (about 2^-128 of ids).
    static func invalidDeviceSubkey(_ deviceID: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidKey, "device id '\(deviceID)' derives a subkey that is not a valid secp256k1 secret key", file: file, line: line)
    }
}
