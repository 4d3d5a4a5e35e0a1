/// Sealing and revealing the secret fields inside a document (docs/vault-format.md §4.3, §9.2):
/// base64 of nonce ‖ XChaCha20-Poly1305(ciphertext ‖ tag) under the vault key up to schema 2,
/// under the secrets key from schema 3.
extension VaultDocument {
    /// The associated data that binds a sealed field to its place. Schema v1 binds nothing
    /// (empty); v2 binds a child's key to its profile id and the wrap key to its field, so a
    /// blob copied elsewhere fails to open (docs/vault-format.md §8.2); v3 the same under its
    /// own prefix, so a blob of v2 (sealed under the vault key) never opens as one of v3 (§9.2).
    package static func associatedData(version: Int, field: SecretField) -> [UInt8] {
        guard version >= 2 else { return [] }
        let prefix = version >= 3 ? "mytube:v3:" : "mytube:v2:"
        switch field {
        case .wrapKey: return Array("\(prefix)wrap-key".utf8)
        case .childNsec(let profileId): return Array("\(prefix)child-nsec:\(profileId)".utf8)
        }
    }

    /// Every secret sealed under the key of this document's version (``VaultAccess/fieldKey(version:)``).
    /// Sealed fields are checked to open and kept as they are; with the vault key alone, a
    /// schema 3 document's sealed fields are carried through byte for byte, unopened, and a
    /// revealed one (a new secret) needs the parent key.
    public func sealed(with access: VaultAccess, random: some RandomSource = SystemRandom()) throws -> VaultDocument {
        guard let key = try access.fieldKey(version: version) else {
            guard isFullySealed else { throw VaultError.parentKeyNeeded("sealing a new secret in a schema version 3 vault") }
            return self
        }
        var copy = self
        copy.parentWrapKey = try parentWrapKey?.sealed(key, field: .wrapKey, version: version, random: random)
        for index in copy.childProfiles.indices {
            let child = copy.childProfiles[index]
            copy.childProfiles[index].nsec = try child.nsec?.sealed(key, field: .childNsec(profileId: child.profileId), version: version, random: random)
        }
        return copy
    }

    /// Every secret revealed. Fails with ``VaultError/Code/authenticationFailed`` naming the
    /// first field that does not open, and, for a schema 3 document given the vault key alone,
    /// says the parent key is needed (its secrets are sealed under the secrets key).
    public func revealed(with access: VaultAccess) throws -> VaultDocument {
        guard let key = try access.fieldKey(version: version) else {
            throw VaultError.parentKeyNeeded("revealing the secrets of a schema version 3 vault (each child's key, the wrap key)")
        }
        var copy = self
        copy.parentWrapKey = try parentWrapKey.map { .revealed(try $0.reveal(key, field: .wrapKey, version: version)) }
        for index in copy.childProfiles.indices {
            let child = copy.childProfiles[index]
            copy.childProfiles[index].nsec = try child.nsec.map { .revealed(try $0.reveal(key, field: .childNsec(profileId: child.profileId), version: version)) }
        }
        return copy
    }

    /// The document as two copies of it are compared (after a write, by diff and merge):
    /// secrets revealed where `access` opens them, else (schema 3, vault key alone) as the
    /// sealed bytes a vault-key holder carries through.
    public func comparable(with access: VaultAccess) throws -> VaultDocument {
        try access.fieldKey(version: version) == nil ? self : revealed(with: access)
    }

    /// Makes each secret field `access` opens one this run holds (``HeldSecrets``), before any
    /// text it records is checked: a run given the parent key holds every child's key, and a
    /// device's name or id, a reason or a log's sentence must hold no piece of one (a trial: a
    /// child key's hex in groups became a device id, in the vault support reads, the operations
    /// and the signed log). A run keeps every field of the first household it opens (up to
    /// ``HeldSecrets/firstHouseholdCapacity``), and of later ones as many as
    /// ``HeldSecrets/fieldCapacity`` places allow: a fleet run's thousands of vaults hold the
    /// first ones. Whether every field `access` opens is now held.
    @discardableResult
    package func holdSecrets(with access: VaultAccess) -> Bool {
        guard let key = try? access.fieldKey(version: version) else { return false }
        let household = Household(parentPublicKey: parentPubkey).id
        let first = HeldSecrets.mayBeFirstHousehold(household)
        let fields = [parentWrapKey.map { ($0, SecretField.wrapKey) }]
            + childProfiles.map { child in child.nsec.map { ($0, SecretField.childNsec(profileId: child.profileId)) } }
        for case let (secret, place)? in fields {
            guard first || HeldSecrets.mayHoldVaultSecrets else { return false }
            if (try? secret.reveal(key, field: place, version: version, holdingBeyondCapacity: first)) != nil, first {
                HeldSecrets.claimFirstHousehold(household)
            }
        }
        return true
    }

    /// Whether no secret field is in the clear.
    public var isFullySealed: Bool {
        !(parentWrapKey?.isRevealed ?? false) && !childProfiles.contains { $0.nsec?.isRevealed ?? false }
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

    /// `holdingBeyondCapacity`: the secret is one of the first household's (``HeldSecrets/mayBeFirstHousehold(_:)``).
    func reveal(_ key: FieldKey, field: SecretField, version: Int, holdingBeyondCapacity: Bool = false) throws -> SecretBytes {
        switch self {
        case .revealed(let secret):
            secret.withUnsafeBytes { HeldSecrets.registerVaultField($0, beyondCapacity: holdingBeyondCapacity) }
            return secret
        case .sealed(let blob):
            let nonce = Array(blob.prefix(XChaCha20Poly1305.nonceByteCount))
            let secret: SecretBytes
            do {
                secret = try blob.dropFirst(XChaCha20Poly1305.nonceByteCount).withContiguousStorageIfAvailable {
                    try XChaCha20Poly1305.open(UnsafeRawBufferPointer($0), key: key.secret, nonce: nonce,
                                               associatedData: VaultDocument.associatedData(version: version, field: field))
                }!
            } catch let error as VaultError where error.code == .authenticationFailed {
                throw VaultError.secretDoesNotOpen(field, version: version)
            }
            guard secret.count == Self.secretByteCount else {
                throw VaultError.sealedSecretWrongLength(field, byteCount: secret.count)
            }
            // A child's key and the wrap key are secrets this run now holds, as much as the
            // parent key it was given: no name, id or record it writes may hold a piece of one
            // (a trial: a device id of a child key's hex in groups went into the signed log, the
            // operations and the vault support reads).
            secret.withUnsafeBytes { HeldSecrets.registerVaultField($0, beyondCapacity: holdingBeyondCapacity) }
            return secret
        }
    }

    func sealed(_ key: FieldKey, field: SecretField, version: Int, random: some RandomSource) throws -> ProtectedSecret {
        switch self {
        case .sealed:
            _ = try reveal(key, field: field, version: version)
            return self
        case .revealed(let secret):
            guard secret.count == Self.secretByteCount else {
                throw VaultError.revealedSecretWrongLength(field, byteCount: secret.count)
            }
            let nonce = random.bytes(XChaCha20Poly1305.nonceByteCount)
            let ciphertext = try secret.withUnsafeBytes {
                try XChaCha20Poly1305.seal($0, key: key.secret, nonce: nonce,
                                           associatedData: VaultDocument.associatedData(version: version, field: field))
            }
            return .sealed(nonce + ciphertext)
        }
    }
}

extension VaultError {
    /// A sealed secret field whose AEAD does not open under the household's vault key (the
    /// secrets key from schema 3).
    static func secretDoesNotOpen(_ field: SecretField, version: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "\(field.name) does not open with this household's \(version >= 3 ? "secrets key" : "vault key")", file: file, line: line)
    }

    /// What needs the parent key, given the vault key alone: from schema 3, every secret field
    /// is sealed under the secrets key, which only the parent key derives.
    package static func parentKeyNeeded(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.parentKeyNeeded, "\(what) needs the parent key; a vault key alone never reveals a child's key or the wrap key",
                   hint: "give the parent key with --key-file (or --key-command)", file: file, line: line)
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

extension VaultError.Code {
    /// The vault key was given where only the parent key will do (schema 3's secrets).
    public static let parentKeyNeeded = VaultError.Code(name: "parentKeyNeeded", category: .usage)
}

extension VaultDocument {
    /// Refuses a document to be sealed any of whose texts holds a key this run holds, whole or
    /// a piece (``HeldSecrets``), each child's and the wrap key's too: every string of it but
    /// the secret fields themselves, names, ids, group members, avatars and key history alike
    /// (a review: `seal` of an edited document kept a device named with the parent's nsec;
    /// a second, a child's key in a group's `childProfileId`, `mlsGroupIds` and `avatarData`,
    /// which `check` and `inspect` then printed). Only the run's own secrets: a name reading as
    /// some other key (a thief's, on a stolen iPad) is the household's record of that device,
    /// which listings show withheld and a revocation must still reach. The document's secrets
    /// are held first, so a revealed child's key counts.
    package func checkTextsToSeal(with access: VaultAccess) throws {
        holdSecrets(with: access)
        if let path = textsHoldingHeldSecrets().first { throw VaultError.secretInRecord(path) }
    }

    /// Where any text of the document holds a key this run holds or a piece of one, as a path
    /// (`devices[1].deviceName`): every string but the secret fields themselves, public keys
    /// and avatars too. For `seal`, which refuses such a document, and `check`, which names
    /// each (``VaultRule/secretInText``).
    package func textsHoldingHeldSecrets() -> [String] {
        var withoutSecrets = self
        withoutSecrets.parentWrapKey = nil
        for index in withoutSecrets.childProfiles.indices { withoutSecrets.childProfiles[index].nsec = nil }
        var found: [String] = []
        func visit(_ value: JSONValue, at path: String) {
            switch value {
            case .string(let text): if HeldSecrets.appear(in: Array(text.utf8)) { found.append(path) }
            case .array(let items): for (index, item) in items.enumerated() { visit(item, at: "\(path)[\(index)]") }
            case .object(let entries): for (key, item) in entries { visit(item, at: path.isEmpty ? key : "\(path).\(key)") }
            case .null, .bool, .number: return
            }
        }
        visit(withoutSecrets.jsonValue(), at: "")
        return found
    }
}
