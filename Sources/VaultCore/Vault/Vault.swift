/// What a caller holds to open a vault: the parent's secret key, or only the vault key that a
/// parent handed to support staff (`vault-tool derive --show-vault-key`).
public enum VaultAccess: Sendable {
    case parentKey(SecretKey)
    case vaultKey(VaultKey)

    public func vaultKey() throws -> VaultKey {
        switch self {
        case .parentKey(let key): try Derivation.vaultKey(for: key)
        case .vaultKey(let key): key
        }
    }

    public var parentKey: SecretKey? {
        if case .parentKey(let key) = self { key } else { nil }
    }

    /// The key the secret fields of a document of `version` are sealed under: the vault key up
    /// to schema 2; from 3, the secrets key, which only the parent key derives (nil with the
    /// vault key alone: the sealed fields are carried, never opened).
    public func fieldKey(version: Int) throws -> FieldKey? {
        if version >= 3 {
            return try parentKey.map { try Derivation.secretsKey(for: $0) }
        }
        return FieldKey(secret: try vaultKey().secret)
    }
}

/// A vault that opened: its header and its document, secrets still sealed.
public struct OpenedVault: Sendable {
    public let header: VaultHeader
    public let document: VaultDocument
    /// The size of the file it came from.
    public let byteCount: Int
}

/// Sealing and opening whole vault files (docs/vault-format.md §3 and §5).
public enum Vault {
    /// Whether `key`'s 32 bytes are the vault key of the vault `bytes` (they open it): a key
    /// handed to support staff, given where a person's own key belongs (a parent key, a signer).
    public static func isVaultKey(_ key: SecretKey, of bytes: [UInt8]) -> Bool {
        (try? VaultEnvelope(parsing: bytes))?.opens(asVaultKey: key) ?? false
    }

    /// Opens an envelope: header checks, the key's household, the AEAD, the document, and the
    /// document against its header. The document's own secret fields stay sealed.
    public static func open(_ bytes: [UInt8], with access: VaultAccess) throws -> OpenedVault {
        let envelope = try VaultEnvelope(parsing: bytes)
        if let parent = access.parentKey {
            let household = Household(parentPublicKey: parent.publicKey)
            guard household.id == envelope.header.householdID else {
                // Support staff are often handed the vault key (64 hex, like a parent key):
                // when the key's bytes open this vault as a vault key, say so.
                if envelope.opens(asVaultKey: parent) { throw VaultError.vaultKeyGivenAsParentKey() }
                throw VaultError.keyOfAnotherHousehold(household.id.hex, header: envelope.header.householdID.hex)
            }
        }
        let plaintext: SecretBytes
        do {
            plaintext = try envelope.ciphertext.withUnsafeBytes {
                try XChaCha20Poly1305.open($0, key: try access.vaultKey().secret, nonce: envelope.header.nonce, associatedData: envelope.header.bytes)
            }
        } catch let error as VaultError where error.code == .authenticationFailed {
            throw VaultError.vaultDoesNotOpen(withParentKey: access.parentKey != nil)
        }
        let json = try plaintext.withUnsafeBytes { try JSONValue(parsing: $0, what: "the vault document") }
        // Compare versions before the full parse, so a mismatch is reported as such rather than
        // as a document of an unknown version.
        if case .number(let text)? = json["version"], text != String(envelope.header.schemaVersion) {
            throw VaultError.documentVersionContradictsHeader(text, header: envelope.header.schemaVersion)
        }
        let document = try VaultDocument(jsonValue: json)
        guard Household(parentPublicKey: document.parentPubkey).id == envelope.header.householdID else {
            throw VaultError.documentOfAnotherHousehold()
        }
        // A run given the parent key holds the children's keys too (a vault key alone, up to
        // schema 2): nothing it records may hold a piece of one.
        if document.holdSecrets(with: access) { HeldSecrets.heldSecretFields(of: envelope.header.householdID) }
        return OpenedVault(header: envelope.header, document: document, byteCount: bytes.count)
    }

    /// Seals a document for its household. Revealed secrets are encrypted; sealed ones are first
    /// checked to open under this household's vault key, so no unreadable blob is written.
    /// Seals an edited copy of a document as its next write: a v2 document's revision is raised
    /// first, so the copy is newer than the vault it was opened from. Returns the vault and the
    /// revision it now has.
    public static func sealEdited(_ document: VaultDocument, with parent: SecretKey, random: some RandomSource = SystemRandom()) throws -> (vault: [UInt8], revision: Int?) {
        try document.checkTextsToSeal(with: .parentKey(parent))
        var edited = document
        try edited.raiseRevision()
        return (try seal(edited, with: parent, random: random), edited.revision)
    }

    public static func seal(_ document: VaultDocument, with parent: SecretKey, random: some RandomSource = SystemRandom()) throws -> [UInt8] {
        guard document.parentPubkey == parent.publicKey else {
            throw VaultError.documentNotOfThisKey(document.parentPubkey.hex, key: parent.publicKey.hex)
        }
        let vaultKey = try Derivation.vaultKey(for: parent)
        let sealed = try document.sealed(with: .parentKey(parent), random: random)
        return try seal(sealed, vaultKey: vaultKey, random: random)
    }

    /// Encrypts a document whose secrets are already sealed. Callers outside VaultCore go
    /// through ``seal(_:with:random:)``, which checks the key; the testkit generator uses
    /// this to build deliberately broken vaults.
    static func seal(_ document: VaultDocument, vaultKey: VaultKey, random: some RandomSource, headerSchemaVersion: UInt8? = nil) throws -> [UInt8] {
        let header = VaultHeader(
            schemaVersion: headerSchemaVersion ?? UInt8(document.version),
            householdID: Household(parentPublicKey: document.parentPubkey).id,
            nonce: random.bytes(XChaCha20Poly1305.nonceByteCount)
        )
        let json = try document.json()
        // No vault larger than every reader of the suite takes (a hostile trial: a 13.5 MB
        // document sealed into a 16.8 MB vault that no command would open again).
        let size = VaultEnvelope.headerByteCount + json.count + XChaCha20Poly1305.tagByteCount
        guard size <= InputLimits.document else { throw VaultError.vaultWouldBeTooLarge(size) }
        let ciphertext = try json.withUnsafeBytes {
            try XChaCha20Poly1305.seal($0, key: vaultKey.secret, nonce: header.nonce, associatedData: header.bytes)
        }
        return VaultEnvelope(header: header, ciphertext: ciphertext).bytes
    }
}

// MARK: - Rewriting

extension Vault {
    /// Seals a changed document for the household it came from. With the parent key, the
    /// document must be that key's; with only the vault key, the document's household is taken
    /// as is (it was just opened with this key).
    public static func reseal(_ document: VaultDocument, access: VaultAccess, random: some RandomSource = SystemRandom()) throws -> [UInt8] {
        if let parent = access.parentKey {
            return try seal(document, with: parent, random: random)
        }
        let vaultKey = try access.vaultKey()
        return try seal(document.sealed(with: access, random: random), vaultKey: vaultKey, random: random)
    }

    /// Seals, then opens what was sealed and compares it with what was meant, value by value,
    /// secrets included. Every command that replaces a vault writes only bytes that passed this.
    public static func sealVerified(_ document: VaultDocument, access: VaultAccess, random: some RandomSource = SystemRandom()) throws -> [UInt8] {
        // With the key that opens the secret fields, they are compared opened; a vault-key
        // holder of a schema 3 vault compares them as the sealed bytes it carried through.
        let intended = try document.comparable(with: access)
        let bytes = try reseal(document, access: access, random: random)
        // Documents are compared as values, every field and secret: the same comparison as of
        // their JSON, without building both trees (issue 29).
        let reopened = try open(bytes, with: access).document.comparable(with: access)
        guard reopened == intended else {
            throw VaultError.sealedVaultReadsBackWrong()
        }
        return bytes
    }

    /// The `--expect-revision` guard: optimistic concurrency instead of the seed's warning.
    /// A v1 vault, which has no revision, counts as revision 0. Only a change that would write
    /// is guarded (`changing`): one the vault already holds, run again after it was made (its
    /// revision now one past the expected), finishes changing nothing, as any run cut off
    /// after its write must (a hostile trial: every rerun with the flag was refused).
    public static func checkRevision(_ document: VaultDocument, expected: Int?, changing: Bool) throws {
        guard let expected, changing else { return }
        let actual = document.revision ?? 0
        guard actual == expected else {
            throw VaultError.staleRevision(actual, expected: expected)
        }
    }
}

/// A whole vault file migrated: what `vault-tool migrate` and the batch run do per vault.
public enum VaultMigration {
    public struct Outcome: Sendable {
        /// The new vault file, verified; the input's bytes when nothing changed.
        public let bytes: [UInt8]
        public let report: Migration.Report
        public let household: HouseholdID
        public var unchanged: Bool { report.from == report.to }
    }

    /// `logVerified`: the caller verified the household log of a schema 3 input with it (the
    /// record a migration down leaves behind); a caller that reads no logs (a fleet run) says
    /// false, and a schema 3 vault is not taken down by it.
    public static func migrate(
        _ input: [UInt8], access: VaultAccess, to target: Int, allowLossy: Bool = false,
        expectRevision: Int? = nil, logVerified: Bool, random: some RandomSource = SystemRandom()
    ) throws -> Outcome {
        // Schema 3's secret fields are sealed under the secrets key: re-sealing them for another
        // version, or sealing v2's under it, needs the parent key (docs/vault-format.md §9.4).
        if Migration.needsParentKey(target), access.parentKey == nil { throw VaultError.parentKeyNeeded("a migration to schema version \(target)") }
        let opened = try Vault.open(input, with: access)
        try Vault.checkRevision(opened.document, expected: expectRevision, changing: opened.document.version != target)
        let household = opened.header.householdID
        if opened.document.version == target {
            return Outcome(bytes: input, report: Migration.Report(from: target, to: target), household: household)
        }
        let revealed = try opened.document.revealed(with: access)
        // Down from schema 3 the log stays behind unread unless the caller verified it: a vault
        // changed with no signed event would leave with no record (a trial: a fleet run took a
        // schema 3 vault beside a junk log down to 2, exit 0, where `migrate vault` refuses it).
        if opened.document.version >= 3, target < 3, !logVerified { throw VaultError.downgradeWithoutItsLog(target) }
        let (migrated, report) = try Migration.migrate(revealed, to: target, allowLossy: allowLossy)
        let bytes = try Vault.sealVerified(migrated, access: access, random: random)
        return Outcome(bytes: bytes, report: report, household: household)
    }
}

extension VaultError.Code {
    /// An operation that reads secret values was given a document whose secrets are sealed.
    public static let secretsNotRevealed = VaultError.Code(name: "secretsNotRevealed", category: .refused)
    /// The vault is not at the revision the change was made against (compare-and-swap).
    public static let staleRevision = VaultError.Code(name: "staleRevision", category: .refused)
    /// A schema 3 vault taken down by a run that does not verify its household log.
    public static let downgradeWithoutItsLog = VaultError.Code(name: "downgradeWithoutItsLog", category: .refused)
    /// A rotation tombstone cannot be written in schema version 1, which has no place for it.
    public static let tombstoneInVersion1 = VaultError.Code(name: "tombstoneInVersion1", category: .refused)
}

extension VaultError {
    /// `what` says which operation needed the secrets and why.
    static func secretsNotRevealed(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.secretsNotRevealed, what, file: file, line: line)
    }

    static func staleRevision(_ actual: Int, expected: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.staleRevision, "the vault is at revision \(actual), not the expected \(expected): someone else changed it",
                   hint: "open it again, and redo the change on the current revision", file: file, line: line)
    }

    static func downgradeWithoutItsLog(_ target: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.downgradeWithoutItsLog, "a schema 3 vault is taken down to schema version \(target) only by a command that verifies its household log first; this run reads no logs",
                   hint: "take it down on its own: vault-tool migrate vault --key-file PARENT.nsec --to \(target) -o OUT VAULT", file: file, line: line)
    }

    static func tombstoneInVersion1(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tombstoneInVersion1, "a rotation tombstone (no wrap key) cannot be written as version 1", file: file, line: line)
    }

    /// The parent key's household (hex) is not the one the vault's header names: each is shown
    /// only as far as it differs from the other.
    static func keyOfAnotherHousehold(_ keyHousehold: String, header headerHousehold: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        let (key, header) = Hex.shortened(keyHousehold, headerHousehold)
        return VaultError(.keyMismatch, "the key belongs to household \(key), but the vault's header names household \(header)",
                          hint: "use the key of this vault's family; if it is the right key, the header was damaged", file: file, line: line)
    }

    /// The AEAD did not open the vault. With the parent key, the household already matched, so
    /// the file was changed; with only a vault key, the key may be another household's.
    static func vaultDoesNotOpen(withParentKey: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        withParentKey
            ? VaultError(.authenticationFailed, "the vault does not open: the file was changed or damaged", file: file, line: line)
            : VaultError(.authenticationFailed, "the vault does not open: wrong vault key, or the file was changed",
                         hint: "a vault key belongs to one household; check it was derived from this family's key", file: file, line: line)
    }

    /// The document's version (as written, `stated`) is not the schema version in the header.
    static func documentVersionContradictsHeader(_ stated: String, header: UInt8, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.corruptVault, "the document inside says version \(stated) but the header says schema version \(header)", file: file, line: line)
    }

    /// The document's parentPubkey is not the household the header names.
    static func documentOfAnotherHousehold(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.corruptVault, "the document's parentPubkey does not hash to the household id in the header", file: file, line: line)
    }

    /// A document sealed with a parent key that is not its own (both public keys in hex, shown
    /// only as far as they differ).
    static func documentNotOfThisKey(_ stated: String, key actual: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        let (stated, actual) = Hex.shortened(stated, actual)
        return VaultError(.keyMismatch, "the document's parentPubkey \(stated) is not the public key of this key file (\(actual))", file: file, line: line)
    }

    /// A vault larger than every reader of the suite takes.
    static func vaultWouldBeTooLarge(_ size: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "the vault would be \(size) bytes, more than the \(InputLimits.document >> 20) MiB every command reads; nothing was written",
                   hint: "a household's vault is kilobytes: check the document for data that does not belong in it", file: file, line: line)
    }

    /// A freshly sealed vault that, opened again, is not the document meant: nothing is replaced.
    static func sealedVaultReadsBackWrong(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "the vault written does not read back as intended; nothing was replaced", file: file, line: line)
    }
}

extension VaultEnvelope {
    /// Whether `key`'s bytes, taken as a vault key, open this envelope.
    func opens(asVaultKey key: SecretKey) -> Bool {
        guard let asVaultKey = try? key.withUnsafeBytes({ try VaultKey(secret: SecretBytes(copying: $0)) }) else { return false }
        return (try? ciphertext.withUnsafeBytes({
            try XChaCha20Poly1305.open($0, key: asVaultKey.secret, nonce: header.nonce, associatedData: header.bytes)
        })) != nil
    }
}
