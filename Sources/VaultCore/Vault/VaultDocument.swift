/// The identity vault document: schema v1 is the seed's `IdentityVault` (seed 000, §1.1), with the
/// same camelCase field names; v2 adds the fields marked "v2". docs/vault-format.md §4 and §8
/// are the normative description.
public struct VaultDocument: Sendable, Equatable {
    /// Schema version; equals byte 9 of the envelope header.
    public var version: Int
    /// v2: raised by one on every write; `--expect-revision` compares against it. Nil in v1.
    public var revision: Int?

    /// The revision after `revision`, as every write of a v2 vault raises it
    /// (docs/vault-format.md §8.1); refused at the largest revision rather than overflowing.
    /// A negative revision (a document edited by hand) is refused too: sealed, it became a vault
    /// `check` refuses, and each write raised it towards 0 (a hostile trial).
    public static func revision(after revision: Int) throws -> Int {
        guard revision < Int.max else {
            throw VaultError.outOfRange("the vault's revision \(revision)", "smaller than \(Int.max) to be raised by a write")
        }
        guard revision >= 0 else { throw VaultError.outOfRange("the vault's revision \(revision)", "1 or more (it starts at 1)") }
        return revision + 1
    }

    /// Raises a v2 vault's revision by one, as every write does; a v1 vault has none.
    public mutating func raiseRevision() throws {
        if let revision { self.revision = try Self.revision(after: revision) }
    }
    public var parentPubkey: PublicKey
    /// The parent's 32-byte media wrap key. Absent only in a v2 rotation tombstone, which
    /// holds no secret at all.
    public var parentWrapKey: ProtectedSecret?
    public var childProfiles: [ChildProfile]
    public var devices: [DeviceRecord]
    public var groupMemberships: [GroupMembership]
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    /// v2: parent keys this household used before, newest last (filled by key rotation).
    public var keyHistory: [KeyHistoryEntry] = []
    /// v2: only in the tombstone a rotation leaves at the old path.
    public var successor: Successor?
    /// v2: the most active devices allowed.
    public var deviceLimit: Int?

    public init(
        version: Int, parentPubkey: PublicKey, parentWrapKey: ProtectedSecret?,
        childProfiles: [ChildProfile], devices: [DeviceRecord], groupMemberships: [GroupMembership],
        createdAt: Timestamp, updatedAt: Timestamp, revision: Int? = nil
    ) {
        self.version = version
        self.revision = revision
        self.parentPubkey = parentPubkey
        self.parentWrapKey = parentWrapKey
        self.childProfiles = childProfiles
        self.devices = devices
        self.groupMemberships = groupMemberships
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The schema versions this build reads and writes.
    public static let supportedVersions: ClosedRange<Int> = 1...3

    /// No document of any version is shorter: the fields every version requires, written as
    /// compactly as JSON allows, with the two whose length is fixed (the 64-hex parent key and
    /// the sealed wrap key, base64 of 24 + 32 + 16 bytes) at that length. The vault format
    /// records no length, so a census uses this to tell a cut-off file from a vault.
    public static let minimumByteCount = #"{"version":1,"parentPubkey":"","parentWrapKeyEncrypted":""}"#.utf8.count + 64 + 96
    /// The version new documents and migrations aim at by default.
    public static let currentVersion = 2
}

/// v2: a parent key the household no longer uses.
public struct KeyHistoryEntry: Sendable, Equatable {
    public enum Reason: String, Sendable, CaseIterable { case routine, compromise }
    public var parentPubkey: PublicKey
    public var retiredAt: Timestamp
    public var reason: Reason

    public init(parentPubkey: PublicKey, retiredAt: Timestamp, reason: Reason) {
        self.parentPubkey = parentPubkey
        self.retiredAt = retiredAt
        self.reason = reason
    }
}

/// v2: where a rotated household lives now.
public struct Successor: Sendable, Equatable {
    public var parentPubkey: PublicKey
    public var vaultPath: String
    public var rotatedAt: Timestamp

    public init(parentPubkey: PublicKey, vaultPath: String, rotatedAt: Timestamp) {
        self.parentPubkey = parentPubkey
        self.vaultPath = vaultPath
        self.rotatedAt = rotatedAt
    }
}

/// A secret field of the document: sealed as stored (`…Encrypted`, base64 of nonce ‖
/// ciphertext ‖ tag under the vault key), or revealed for editing and support.
public enum ProtectedSecret: Sendable, Equatable {
    case sealed([UInt8])
    case revealed(SecretBytes)

    public var isRevealed: Bool {
        if case .revealed = self { true } else { false }
    }
}

public struct ChildProfile: Sendable, Equatable {
    public var profileId: String
    public var name: String
    public var theme: String
    public var avatarData: [UInt8]?
    public var mlsGroupIds: [String]
    /// The child's 32-byte secret key; nil for a child with no key of its own, which schema 3
    /// allows (seed 001: children are local profiles), nil exactly when `npub` is.
    public var nsec: ProtectedSecret?
    public var npub: PublicKey?

    /// Whether the child has a key of its own.
    public var hasKey: Bool { nsec != nil }

    public init(profileId: String, name: String, theme: String, avatarData: [UInt8]?, mlsGroupIds: [String], nsec: ProtectedSecret?, npub: PublicKey?) {
        self.profileId = profileId
        self.name = name
        self.theme = theme
        self.avatarData = avatarData
        self.mlsGroupIds = mlsGroupIds
        self.nsec = nsec
        self.npub = npub
    }
}

public enum DeviceStatus: String, Sendable, Equatable, CaseIterable {
    case active, revoked
}

public struct DeviceRecord: Sendable, Equatable {
    public var deviceId: String
    public var deviceName: String
    public var isPrimary: Bool
    /// 64 lowercase hex; `check` compares it with the derivation from the parent key.
    public var subkeyPublicKey: String
    public var addedAt: Timestamp
    public var lastSeenAt: Timestamp
    public var status: DeviceStatus
    /// v2: when the device was revoked; present exactly when `status` is revoked.
    public var revokedAt: Timestamp?
    /// v2: why, optionally.
    public var revocationReason: String?

    public init(deviceId: String, deviceName: String, isPrimary: Bool, subkeyPublicKey: String, addedAt: Timestamp, lastSeenAt: Timestamp,
                status: DeviceStatus, revokedAt: Timestamp? = nil, revocationReason: String? = nil) {
        self.revokedAt = revokedAt
        self.revocationReason = revocationReason
        self.deviceId = deviceId
        self.deviceName = deviceName
        self.isPrimary = isPrimary
        self.subkeyPublicKey = subkeyPublicKey
        self.addedAt = addedAt
        self.lastSeenAt = lastSeenAt
        self.status = status
    }
}

public struct GroupMembership: Sendable, Equatable {
    public var mlsGroupId: String
    public var groupName: String
    /// 64 lowercase hex each: device subkeys of this household and keys of other households.
    public var memberPubkeys: [String]
    public var childProfileId: String?
    public var createdAt: Timestamp

    public init(mlsGroupId: String, groupName: String, memberPubkeys: [String], childProfileId: String?, createdAt: Timestamp) {
        self.mlsGroupId = mlsGroupId
        self.groupName = groupName
        self.memberPubkeys = memberPubkeys
        self.childProfileId = childProfileId
        self.createdAt = createdAt
    }
}
