/// The rules `vault-tool check` applies (docs/vault-format.md §6). Each finding names the
/// record and the rule, so a support engineer can go straight to it.
public enum VaultRule: String, Sendable, CaseIterable {
    case primaryDevice = "primary-device"
    case uniqueDeviceID = "unique-device-id"
    case uniqueProfileID = "unique-profile-id"
    case uniqueGroupID = "unique-group-id"
    case deviceSubkey = "device-subkey"
    case childKey = "child-key"
    case wrapKey = "wrap-key"
    case groupChildReference = "group-child-reference"
    case childGroupReference = "child-group-reference"
    case revokedMember = "revoked-member"
    case timestamps = "timestamps"
    // v2
    case revision = "revision"
    case revocationFields = "revocation-fields"
    case deviceLimit = "device-limit"
    case successor = "successor"
    // Every schema
    case secretInText = "secret-in-text"
}

public struct VaultFinding: Sendable, Equatable, CustomStringConvertible {
    public let rule: VaultRule
    /// The record, as a person would look for it: `device 'ipad-2'`, `child profile 'p1'`.
    public let record: String
    public let message: String

    public var description: String { "\(record): \(rule.rawValue): \(message)" }
}

public struct VaultCheckReport: Sendable {
    public let findings: [VaultFinding]
    /// Rules that could not run with the key given, and why.
    public let skipped: [(rule: VaultRule, reason: String)]

    public var isClean: Bool { findings.isEmpty }

    /// Both reports' findings and skipped rules.
    public static func + (left: VaultCheckReport, right: VaultCheckReport) -> VaultCheckReport {
        VaultCheckReport(findings: left.findings + right.findings, skipped: left.skipped + right.skipped)
    }
}

public enum VaultCheck {
    public static func run(_ document: VaultDocument, access: VaultAccess) throws -> VaultCheckReport {
        var findings: [VaultFinding] = []
        var skipped: [(rule: VaultRule, reason: String)] = []
        func report(_ rule: VaultRule, _ record: String, _ message: String) {
            findings.append(VaultFinding(rule: rule, record: record, message: message))
        }

        // Exactly one primary among active devices; a tombstone (v2 successor) has none at all.
        let activePrimaries = document.devices.filter { $0.status == .active && $0.isPrimary }
        if activePrimaries.count != 1, !document.isRotationTombstone {
            let message = activePrimaries.isEmpty
                ? "no active device is primary (exactly one must be)"
                : "\(activePrimaries.count) active devices are primary (\(activePrimaries.map { "'\($0.deviceId)'" }.joined(separator: ", "))); exactly one must be"
            report(.primaryDevice, "devices", message)
        }

        for (rule, kind, ids) in [
            (VaultRule.uniqueDeviceID, "device", document.devices.map(\.deviceId)),
            (.uniqueProfileID, "child profile", document.childProfiles.map(\.profileId)),
            (.uniqueGroupID, "group", document.groupMemberships.map(\.mlsGroupId)),
        ] {
            for id in duplicates(ids) {
                report(rule, "\(kind) '\(id)'", "appears \(ids.filter { $0 == id }.count) times")
            }
        }
        // Device ids that differ only in case are one id to every command that names a device
        // (by its id in any case): neither can be picked (a trial: the whole id "matches 2
        // devices; give the whole id"); and one UUID in two spellings (braces, no hyphens) is one
        // device to a reader, as `device add` refuses it (a review). Their subkeys differ.
        let bySpelling = Dictionary(grouping: Set(document.devices.map(\.deviceId)), by: VaultDevices.deviceIDKey)
        for key in bySpelling.keys.sorted() {
            guard let spellings = bySpelling[key]?.sorted(), spellings.count > 1 else { continue }
            report(.uniqueDeviceID, "device '\(spellings[0])'", "differs only in case or spelling from \(spellings.dropFirst().map { "'\($0)'" }.joined(separator: ", ")): one id to a reader, two devices to the vault")
        }

        if let parent = access.parentKey {
            for device in document.devices {
                let expected = try Derivation.deviceSubkey(for: parent, deviceID: device.deviceId).publicKey.hex
                if device.subkeyPublicKey != expected {
                    let (stated, derived) = Hex.shortened(device.subkeyPublicKey, expected)
                    report(.deviceSubkey, "device '\(device.deviceId)'", "subkeyPublicKey is \(stated), but the parent key derives \(derived) for this device id")
                }
            }
        } else {
            skipped.append((.deviceSubkey, "device subkeys derive from the parent key; a vault key alone cannot check them"))
        }

        // The secret fields open under the vault key up to schema 2, under the secrets key from
        // 3, which the vault key alone cannot derive: then they are not opened, and said so.
        let fieldKey = try access.fieldKey(version: document.version)
        let keyName = document.version >= 3 ? "secrets key" : "vault key"
        if fieldKey == nil {
            skipped.append((.childKey, "children's keys are sealed under the secrets key, which only the parent key derives"))
            skipped.append((.wrapKey, "the wrap key is sealed under the secrets key, which only the parent key derives"))
        }
        for child in document.childProfiles {
            guard let fieldKey, let nsec = child.nsec, let npub = child.npub else { continue }
            let record = "child profile '\(child.profileId)'"
            do {
                let secret = try nsec.reveal(fieldKey, field: .childNsec(profileId: child.profileId), version: document.version)
                let key = try SecretKey(secret: secret)
                if key.publicKey != npub {
                    report(.childKey, record, "npub does not match the public key of the child's nsec")
                }
            } catch let error as VaultError {
                report(.childKey, record, error.code == .authenticationFailed ? "nsecEncrypted does not open with the \(keyName)" : error.reason)
            }
        }
        do {
            if let wrapKey = document.parentWrapKey {
                if let fieldKey { _ = try wrapKey.reveal(fieldKey, field: .wrapKey, version: document.version) }
            } else if document.successor == nil {
                report(.wrapKey, "vault", "has no parentWrapKeyEncrypted (only a rotation tombstone may leave it out)")
            }
        } catch let error as VaultError {
            report(.wrapKey, "vault", error.code == .authenticationFailed ? "parentWrapKeyEncrypted does not open with the \(keyName)" : error.reason)
        }

        let profileIDs = Set(document.childProfiles.map(\.profileId))
        let groupIDs = Set(document.groupMemberships.map(\.mlsGroupId))
        for group in document.groupMemberships {
            if let childID = group.childProfileId, !profileIDs.contains(childID) {
                report(.groupChildReference, "group '\(group.mlsGroupId)'", "childProfileId '\(childID)' is not a child profile of this vault")
            }
        }
        for child in document.childProfiles {
            for groupID in child.mlsGroupIds where !groupIDs.contains(groupID) {
                report(.childGroupReference, "child profile '\(child.profileId)'", "mlsGroupIds names '\(groupID)', which is not a group of this vault")
            }
        }

        if !document.isRotationTombstone { checkRevokedMembers(document, report: report) }

        if document.updatedAt < document.createdAt {
            report(.timestamps, "vault", "updatedAt \(document.updatedAt) is before createdAt \(document.createdAt)")
        }
        if document.version >= 2 {
            checkVersion2(document, report: report)
        }
        return VaultCheckReport(findings: findings, skipped: skipped)
    }

    /// The check's rule of what the run holds (``VaultRule/secretInText``): a vault written by
    /// another tool may name a device with the parent key (a hostile trial: `check` called it
    /// fine); listings withhold it, and this says where. Asked by the command that checks one
    /// household (`vault-tool check`), whose run holds that household's keys alone: the keys a
    /// process holds are the whole run's, and a fleet's check or a merge (or a test process)
    /// holds others besides, which no text of this vault is about.
    /// A vault key that opens no secret field (schema 3) reads the texts against the keys it
    /// holds only, and says so (a trial: such a check said "ok" of a name holding a piece of a
    /// child's key, which the parent key's check named).
    public static func secretsInText(_ document: VaultDocument, access: VaultAccess) -> VaultCheckReport {
        let fieldsHeld = document.holdSecrets(with: access)
        let findings = document.textsHoldingHeldSecrets().map {
            VaultFinding(rule: .secretInText, record: $0, message: "holds a key this run holds, or a piece of one (not shown)")
        }
        let skipped = fieldsHeld ? [] : [(rule: VaultRule.secretInText, reason: "read against the vault key alone: the children's keys and the wrap key need the parent key")]
        return VaultCheckReport(findings: findings, skipped: skipped)
    }

    /// A revoked device has left every group (issue 37): its subkey in a group, or held by an
    /// active device under another id, is a device the family cut off that still reads along.
    /// (A rotation tombstone, where every device is revoked and the groups record where the old
    /// subkeys were, is not checked.)
    private static func checkRevokedMembers(_ document: VaultDocument, report: (VaultRule, String, String) -> Void) {
        let active = document.devices.filter { $0.status == .active }
        var revoked: [String: DeviceRecord] = [:]
        for device in document.devices where device.status == .revoked && revoked[device.subkeyPublicKey] == nil {
            revoked[device.subkeyPublicKey] = device
        }
        for device in active {
            if let gone = revoked[device.subkeyPublicKey] {
                report(.revokedMember, "device '\(device.deviceId)'", "is active with the subkey of revoked device '\(gone.deviceId)'")
            }
        }
        let activeKeys = Set(active.map(\.subkeyPublicKey))
        for group in document.groupMemberships {
            for member in group.memberPubkeys where !activeKeys.contains(member) {
                if let device = revoked[member] {
                    report(.revokedMember, "group '\(group.mlsGroupId)'", "memberPubkeys holds the subkey of device '\(device.deviceId)' (\(device.deviceName)), which is revoked")
                }
            }
        }
    }

    /// The rules schema v2 adds (docs/vault-format.md §8.3).
    private static func checkVersion2(_ document: VaultDocument, report: (VaultRule, String, String) -> Void) {
        if let revision = document.revision, revision < 1 {
            report(.revision, "vault", "revision is \(revision); it starts at 1")
        }
        for device in document.devices {
            let record = "device '\(device.deviceId)'"
            switch (device.status, device.revokedAt) {
            case (.revoked, nil): report(.revocationFields, record, "is revoked but has no revokedAt")
            case (.active, .some): report(.revocationFields, record, "is active but has a revokedAt")
            default: break
            }
            if device.status == .active, device.revocationReason != nil {
                report(.revocationFields, record, "is active but has a revocationReason")
            }
        }
        let active = document.devices.filter { $0.status == .active }.count
        if let limit = document.deviceLimit, active > limit {
            report(.deviceLimit, "devices", "\(active) active devices, more than the deviceLimit of \(limit)")
        }
        if document.successor != nil, active > 0 {
            report(.successor, "vault", "has a successor (a rotation tombstone) but still \(active) active device\(active == 1 ? "" : "s")")
        }
    }

    /// Values that occur more than once, in order of first appearance.
    private static func duplicates(_ values: [String]) -> [String] {
        var seen = Set<String>(), reported = Set<String>(), out: [String] = []
        for value in values where !seen.insert(value).inserted && reported.insert(value).inserted {
            out.append(value)
        }
        return out
    }
}

extension VaultDocument {
    /// The vault a rotation leaves at the old path: a successor, and no active device. Exempt
    /// from `primary-device` and `revoked-member` (docs/vault-format.md §8.3).
    var isRotationTombstone: Bool { successor != nil && !devices.contains { $0.status == .active } }
}
