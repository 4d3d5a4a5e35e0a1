/// The identity vault document, schema v1: the seed's `IdentityVault` (seed 000, §1.1), with the
/// same camelCase field names. docs/vault-format.md §4 is the normative description.
public struct VaultDocument: Sendable, Equatable {
    /// Schema version; equals byte 9 of the envelope header.
    public var version: Int
    public var parentPubkey: PublicKey
    /// The parent's 32-byte media wrap key.
    public var parentWrapKey: ProtectedSecret
    public var childProfiles: [ChildProfile]
    public var devices: [DeviceRecord]
    public var groupMemberships: [GroupMembership]
    public var createdAt: Timestamp
    public var updatedAt: Timestamp

    public init(
        version: Int, parentPubkey: PublicKey, parentWrapKey: ProtectedSecret,
        childProfiles: [ChildProfile], devices: [DeviceRecord], groupMemberships: [GroupMembership],
        createdAt: Timestamp, updatedAt: Timestamp
    ) {
        self.version = version
        self.parentPubkey = parentPubkey
        self.parentWrapKey = parentWrapKey
        self.childProfiles = childProfiles
        self.devices = devices
        self.groupMemberships = groupMemberships
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The schema versions this build reads and writes.
    public static let supportedVersions: ClosedRange<Int> = 1...1
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
    /// The child's 32-byte secret key.
    public var nsec: ProtectedSecret
    public var npub: PublicKey

    public init(profileId: String, name: String, theme: String, avatarData: [UInt8]?, mlsGroupIds: [String], nsec: ProtectedSecret, npub: PublicKey) {
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

    public init(deviceId: String, deviceName: String, isPrimary: Bool, subkeyPublicKey: String, addedAt: Timestamp, lastSeenAt: Timestamp, status: DeviceStatus) {
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
