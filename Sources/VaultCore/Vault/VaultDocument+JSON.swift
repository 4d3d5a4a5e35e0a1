import FoundationEssentials  // base64 only

/// The document's JSON form (docs/vault-format.md §4). Fields appear in the seed's order; each
/// secret is either sealed (`nsecEncrypted`, `parentWrapKeyEncrypted`) or revealed (`nsec`,
/// `parentWrapKey`). Unknown and duplicate fields are refused, so re-sealing never drops data.
extension VaultDocument {
    /// Parses a document, sealed, revealed, or a mix of the two.
    public init(json: [UInt8]) throws {
        try self.init(jsonValue: JSONValue(parsing: json, what: "the vault document"))
    }

    public init(jsonValue: JSONValue) throws {
        var reader = try JSONObjectReader(jsonValue, path: "")
        let version = try reader.int("version")
        self.version = version
        guard Self.supportedVersions.contains(version) else {
            throw VaultError.unsupportedDocumentVersion(version)
        }
        // v1 has none of the v2 fields: reading them only from v2 keeps a v1 document with a v2
        // field an error ("not a field of this schema") rather than silently half-upgraded.
        let v2 = version >= 2
        if v2 {
            revision = try reader.int("revision")
        }
        parentPubkey = try reader.publicKeyHex("parentPubkey")
        // Only a v2 rotation tombstone (with a successor) may leave the wrap key out.
        let isTombstone = v2 && reader.has("successor") && !reader.has("parentWrapKeyEncrypted") && !reader.has("parentWrapKey")
        parentWrapKey = isTombstone ? nil : try reader.protectedSecret(sealed: "parentWrapKeyEncrypted", revealed: "parentWrapKey") { text, path in
            guard text.utf8.count == 64, var bytes = Hex.decode(text) else {
                throw VaultError.wrapKeyNotHex(path)
            }
            return try SecretBytes(consuming: &bytes)
        }
        childProfiles = try reader.array("childProfiles").map { try ChildProfile(jsonValue: $0.value, path: $0.path, version: version) }
        devices = try reader.array("devices").map { try DeviceRecord(jsonValue: $0.value, path: $0.path, version: version) }
        groupMemberships = try reader.array("groupMemberships").map { try GroupMembership(jsonValue: $0.value, path: $0.path) }
        createdAt = try reader.timestamp("createdAt")
        updatedAt = try reader.timestamp("updatedAt")
        if v2 {
            keyHistory = try reader.array("keyHistory").map { try KeyHistoryEntry(jsonValue: $0.value, path: $0.path) }
            successor = try reader.optional("successor").map { try Successor(jsonValue: $0, path: reader.fieldPath("successor")) }
            deviceLimit = try reader.optionalInt("deviceLimit")
        }
        try reader.finish()
    }

    /// The document as JSON, each secret in the form it is in now. Revealed secrets pass through
    /// Swift strings here, which cannot be zeroed: write revealed JSON only where it must go.
    public func jsonValue() -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [("version", .int(version))]
        if version >= 2 { entries.append(("revision", .int(revision ?? 1))) }
        entries.append(("parentPubkey", .string(parentPubkey.hex)))
        if let parentWrapKey {
            entries.append(parentWrapKey.jsonEntry(sealed: "parentWrapKeyEncrypted", revealed: "parentWrapKey") { secret in
                secret.withUnsafeBytes { Hex.encode($0) }
            })
        }
        entries += [
            ("childProfiles", .array(childProfiles.map { $0.jsonValue() })),
            ("devices", .array(devices.map { $0.jsonValue() })),
            ("groupMemberships", .array(groupMemberships.map { $0.jsonValue() })),
            ("createdAt", .string(createdAt.rfc3339)),
            ("updatedAt", .string(updatedAt.rfc3339)),
        ]
        if version >= 2 {
            entries.append(("keyHistory", .array(keyHistory.map { $0.jsonValue() })))
            if let successor { entries.append(("successor", successor.jsonValue())) }
            if let deviceLimit { entries.append(("deviceLimit", .int(deviceLimit))) }
        }
        return .object(entries)
    }

    /// Pretty-printed UTF-8 JSON with a final newline.
    public func json() -> [UInt8] { jsonValue().serialized() }
}

extension ChildProfile {
    init(jsonValue: JSONValue, path: String, version: Int) throws {
        var reader = try JSONObjectReader(jsonValue, path: path)
        profileId = try reader.string("profileId")
        name = try reader.string("name")
        theme = try reader.string("theme")
        avatarData = try reader.optionalBase64("avatarData")
        mlsGroupIds = try reader.strings("mlsGroupIds")
        // From schema 3 a child may have no key (seed 001: children are local profiles): then
        // neither its key nor its npub is there; one without the other is refused.
        let keyless = version >= 3 && !reader.has("nsecEncrypted") && !reader.has("nsec")
        if keyless {
            guard !reader.has("npub") else { throw reader.invalid("npub", "is given for a child with no key (nsecEncrypted)") }
            nsec = nil
            npub = nil
            try reader.finish()
            return
        }
        nsec = try reader.protectedSecret(sealed: "nsecEncrypted", revealed: "nsec") { text, path in
            do {
                return try Array(text.utf8).withUnsafeBytes {
                    try NIP19.decodeKey($0, prefix: NIP19.secretKeyPrefix, what: path)
                }
            } catch let error as VaultError {
                throw VaultError.childNsecMalformed(error)
            }
        }
        let npubText = try reader.string("npub")
        do {
            npub = try PublicKey(npub: npubText)
        } catch let error as VaultError {
            throw VaultError.childNpubMalformed(reader.fieldPath("npub"), error)
        }
        try reader.finish()
    }

    func jsonValue() -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("profileId", .string(profileId)),
            ("name", .string(name)),
            ("theme", .string(theme)),
        ]
        if let avatarData { entries.append(("avatarData", .string(Data(avatarData).base64EncodedString()))) }
        entries.append(("mlsGroupIds", .array(mlsGroupIds.map(JSONValue.string))))
        if let nsec {
            entries.append(nsec.jsonEntry(sealed: "nsecEncrypted", revealed: "nsec") { secret in
                secret.withUnsafeBytes { String(decoding: NIP19.encode(prefix: NIP19.secretKeyPrefix, key: Array($0)), as: UTF8.self) }
            })
        }
        if let npub { entries.append(("npub", .string(npub.npub))) }
        return .object(entries)
    }
}

extension DeviceRecord {
    init(jsonValue: JSONValue, path: String, version: Int) throws {
        var reader = try JSONObjectReader(jsonValue, path: path)
        deviceId = try reader.string("deviceId")
        deviceName = try reader.string("deviceName")
        isPrimary = try reader.bool("isPrimary")
        subkeyPublicKey = try reader.lowercaseHexKey("subkeyPublicKey")
        addedAt = try reader.timestamp("addedAt")
        lastSeenAt = try reader.timestamp("lastSeenAt")
        let statusText = try reader.string("status")
        guard let status = DeviceStatus(rawValue: statusText) else {
            throw reader.invalid("status", "should be \"active\" or \"revoked\"")
        }
        self.status = status
        if version >= 2 {
            revokedAt = try reader.optional("revokedAt").map { _ in try reader.timestamp("revokedAt") }
            revocationReason = try reader.optionalString("revocationReason")
        }
        try reader.finish()
    }

    func jsonValue() -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("deviceId", .string(deviceId)),
            ("deviceName", .string(deviceName)),
            ("isPrimary", .bool(isPrimary)),
            ("subkeyPublicKey", .string(subkeyPublicKey)),
            ("addedAt", .string(addedAt.rfc3339)),
            ("lastSeenAt", .string(lastSeenAt.rfc3339)),
            ("status", .string(status.rawValue)),
        ]
        if let revokedAt { entries.append(("revokedAt", .string(revokedAt.rfc3339))) }
        if let revocationReason { entries.append(("revocationReason", .string(revocationReason))) }
        return .object(entries)
    }
}

extension GroupMembership {
    init(jsonValue: JSONValue, path: String) throws {
        var reader = try JSONObjectReader(jsonValue, path: path)
        mlsGroupId = try reader.string("mlsGroupId")
        groupName = try reader.string("groupName")
        memberPubkeys = try reader.strings("memberPubkeys")
        for (position, key) in memberPubkeys.enumerated() where !Hex.isLowercase(key, byteCount: 32) {
            throw VaultError.memberPubkeyNotHex(reader.fieldPath("memberPubkeys"), position: position)
        }
        childProfileId = try reader.optionalString("childProfileId")
        createdAt = try reader.timestamp("createdAt")
        try reader.finish()
    }

    func jsonValue() -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("mlsGroupId", .string(mlsGroupId)),
            ("groupName", .string(groupName)),
            ("memberPubkeys", .array(memberPubkeys.map(JSONValue.string))),
        ]
        if let childProfileId { entries.append(("childProfileId", .string(childProfileId))) }
        entries.append(("createdAt", .string(createdAt.rfc3339)))
        return .object(entries)
    }
}

extension KeyHistoryEntry {
    init(jsonValue: JSONValue, path: String) throws {
        var reader = try JSONObjectReader(jsonValue, path: path)
        parentPubkey = try reader.publicKeyHex("parentPubkey")
        retiredAt = try reader.timestamp("retiredAt")
        let reasonText = try reader.string("reason")
        guard let reason = Reason(rawValue: reasonText) else {
            throw reader.invalid("reason", "should be \"routine\" or \"compromise\"")
        }
        self.reason = reason
        try reader.finish()
    }

    func jsonValue() -> JSONValue {
        .object([("parentPubkey", .string(parentPubkey.hex)), ("retiredAt", .string(retiredAt.rfc3339)), ("reason", .string(reason.rawValue))])
    }
}

extension Successor {
    init(jsonValue: JSONValue, path: String) throws {
        var reader = try JSONObjectReader(jsonValue, path: path)
        parentPubkey = try reader.publicKeyHex("parentPubkey")
        vaultPath = try reader.string("vaultPath")
        rotatedAt = try reader.timestamp("rotatedAt")
        try reader.finish()
    }

    func jsonValue() -> JSONValue {
        .object([("parentPubkey", .string(parentPubkey.hex)), ("vaultPath", .string(vaultPath)), ("rotatedAt", .string(rotatedAt.rfc3339))])
    }
}

extension ProtectedSecret {
    /// `(sealedKey, base64)` or `(revealedKey, text)`.
    func jsonEntry(sealed: String, revealed: String, reveal: (SecretBytes) -> String) -> (key: String, value: JSONValue) {
        switch self {
        case .sealed(let blob): (sealed, .string(Data(blob).base64EncodedString()))
        case .revealed(let secret): (revealed, .string(reveal(secret)))
        }
    }
}

extension JSONObjectReader {
    /// The smallest sealed blob: a 24-byte nonce and a 16-byte tag around an empty plaintext.
    static let minimumSealedByteCount = XChaCha20Poly1305.nonceByteCount + XChaCha20Poly1305.tagByteCount

    /// A secret stored under exactly one of two names.
    mutating func protectedSecret(
        sealed sealedKey: String,
        revealed revealedKey: String,
        parseRevealed: (String, String) throws -> SecretBytes
    ) throws -> ProtectedSecret {
        switch (has(sealedKey), has(revealedKey)) {
        case (true, true):
            throw invalid(sealedKey, "and \(revealedKey) are both present; give one")
        case (false, true):
            return .revealed(try parseRevealed(try string(revealedKey), fieldPath(revealedKey)))
        default:
            guard let blob = try optionalBase64(sealedKey) else {
                throw invalid(sealedKey, "is missing (or give \(revealedKey) to seal)")
            }
            guard blob.count >= Self.minimumSealedByteCount else {
                throw invalid(sealedKey, "is too short to be sealed (nonce and tag alone take \(Self.minimumSealedByteCount) bytes)")
            }
            return .sealed(blob)
        }
    }

    package mutating func optionalBase64(_ key: String) throws -> [UInt8]? {
        guard let text = try optionalString(key) else { return nil }
        guard let data = Data(base64Encoded: text) else {
            throw invalid(key, "should be standard padded base64")
        }
        return Array(data)
    }

    mutating func lowercaseHexKey(_ key: String) throws -> String {
        let text = try string(key)
        guard Hex.isLowercase(text, byteCount: 32) else {
            throw invalid(key, "should be 64 lowercase hex characters")
        }
        return text
    }

    mutating func publicKeyHex(_ key: String) throws -> PublicKey {
        let text = try lowercaseHexKey(key)
        do {
            return try PublicKey(hex: text)
        } catch {
            throw invalid(key, "is not a valid secp256k1 x-only public key")
        }
    }
}

extension VaultError {
    /// A document version this build does not read.
    static func unsupportedDocumentVersion(_ version: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        let versions = "\(VaultDocument.supportedVersions.lowerBound) to \(VaultDocument.supportedVersions.upperBound)"
        return VaultError(.unsupportedVersion, "vault document version \(version) is not supported (this build reads versions \(versions))", file: file, line: line)
    }

    /// A revealed wrap key that is not 64 hex characters (its text is never quoted).
    static func wrapKeyNotHex(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(path) should be 64 hex characters (a 32-byte key)", file: file, line: line)
    }

    /// A child's revealed nsec that does not decode: the key error's reason (which names the
    /// field, never the key), as a fault of the document.
    static func childNsecMalformed(_ cause: VaultError, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, cause.reason, file: file, line: line)
    }

    /// A child's npub that does not decode, at `path`, with the key error's reason.
    static func childNpubMalformed(_ path: String, _ cause: VaultError, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(path): \(cause.reason)", file: file, line: line)
    }

    /// A group member's public key that is not 64 lowercase hex characters.
    static func memberPubkeyNotHex(_ arrayPath: String, position: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(arrayPath)[\(position)] should be 64 lowercase hex characters", file: file, line: line)
    }
}
