/// Sealing and revealing the secret fields inside a document (docs/vault-format.md §4.3):
/// base64 of nonce ‖ XChaCha20-Poly1305(ciphertext ‖ tag) under the vault key.
extension VaultDocument {
    /// The associated data that binds a sealed field to its place. Schema v1 binds nothing
    /// (empty); v2 binds a child's key to its profile id and the wrap key to its field, so a
    /// blob copied elsewhere fails to open (docs/vault-format.md §8.2).
    package static func associatedData(version: Int, field: SecretField) -> [UInt8] {
        guard version >= 2 else { return [] }
        switch field {
        case .wrapKey: return Array("mytube:v2:wrap-key".utf8)
        case .childNsec(let profileId): return Array("mytube:v2:child-nsec:\(profileId)".utf8)
        }
    }

    /// Every secret sealed. Sealed fields are checked to open under `vaultKey` and kept as they are.
    public func sealed(with vaultKey: VaultKey, random: some RandomSource = SystemRandom()) throws -> VaultDocument {
        var copy = self
        copy.parentWrapKey = try parentWrapKey?.sealed(vaultKey, field: .wrapKey, version: version, random: random)
        for index in copy.childProfiles.indices {
            let child = copy.childProfiles[index]
            copy.childProfiles[index].nsec = try child.nsec.sealed(vaultKey, field: .childNsec(profileId: child.profileId), version: version, random: random)
        }
        return copy
    }

    /// Every secret revealed. Fails with ``VaultError/Code/authenticationFailed`` naming the
    /// first field that does not open.
    public func revealed(with vaultKey: VaultKey) throws -> VaultDocument {
        var copy = self
        copy.parentWrapKey = try parentWrapKey.map { .revealed(try $0.reveal(vaultKey, field: .wrapKey, version: version)) }
        for index in copy.childProfiles.indices {
            let child = copy.childProfiles[index]
            copy.childProfiles[index].nsec = .revealed(try child.nsec.reveal(vaultKey, field: .childNsec(profileId: child.profileId), version: version))
        }
        return copy
    }
}

/// Which secret field a blob belongs to: names it in errors, and (from schema v2 on) binds it.
package enum SecretField {
    case wrapKey
    case childNsec(profileId: String)

    var name: String {
        switch self {
        case .wrapKey: "parentWrapKeyEncrypted"
        case .childNsec(let profileId): "nsecEncrypted of child profile '\(profileId)'"
        }
    }
}

extension ProtectedSecret {
    /// Both secret fields hold 32-byte keys.
    static let secretByteCount = 32

    func reveal(_ vaultKey: VaultKey, field: SecretField, version: Int) throws -> SecretBytes {
        switch self {
        case .revealed(let secret):
            return secret
        case .sealed(let blob):
            let nonce = Array(blob.prefix(XChaCha20Poly1305.nonceByteCount))
            let secret: SecretBytes
            do {
                secret = try blob.dropFirst(XChaCha20Poly1305.nonceByteCount).withContiguousStorageIfAvailable {
                    try XChaCha20Poly1305.open(UnsafeRawBufferPointer($0), key: vaultKey.secret, nonce: nonce,
                                               associatedData: VaultDocument.associatedData(version: version, field: field))
                }!
            } catch let error as VaultError where error.code == .authenticationFailed {
                throw VaultError.secretDoesNotOpen(field)
            }
            guard secret.count == Self.secretByteCount else {
                throw VaultError.sealedSecretWrongLength(field, byteCount: secret.count)
            }
            return secret
        }
    }

    func sealed(_ vaultKey: VaultKey, field: SecretField, version: Int, random: some RandomSource) throws -> ProtectedSecret {
        switch self {
        case .sealed:
            _ = try reveal(vaultKey, field: field, version: version)
            return self
        case .revealed(let secret):
            guard secret.count == Self.secretByteCount else {
                throw VaultError.revealedSecretWrongLength(field, byteCount: secret.count)
            }
            let nonce = random.bytes(XChaCha20Poly1305.nonceByteCount)
            let ciphertext = try secret.withUnsafeBytes {
                try XChaCha20Poly1305.seal($0, key: vaultKey.secret, nonce: nonce,
                                           associatedData: VaultDocument.associatedData(version: version, field: field))
            }
            return .sealed(nonce + ciphertext)
        }
    }
}

extension VaultError {
    /// A sealed secret field whose AEAD does not open under the household's vault key.
    static func secretDoesNotOpen(_ field: SecretField, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "\(field.name) does not open with this household's vault key", file: file, line: line)
    }

    /// A sealed secret that opened to something other than a 32-byte key (only its length is told).
    static func sealedSecretWrongLength(_ field: SecretField, byteCount: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.corruptVault, "\(field.name) holds \(byteCount) bytes, not a 32-byte key", file: file, line: line)
    }

    /// A revealed secret, about to be sealed, that is not a 32-byte key (only its length is told).
    static func revealedSecretWrongLength(_ field: SecretField, byteCount: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(field.name) should be a 32-byte key, not \(byteCount) bytes", file: file, line: line)
    }
}
