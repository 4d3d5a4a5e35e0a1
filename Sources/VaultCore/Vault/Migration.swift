/// Moving a vault document between schema versions, one step at a time (issue 4). Each step is a
/// plain function on a revealed document; the chain applies them in order, up or down, and
/// reports every change, so `--dry-run` and the real run say the same thing.
public enum Migration {
    /// What a migration changed, or would change.
    public struct Report: Sendable, Equatable {
        public var from: Int
        public var to: Int
        /// Changes that keep every value (new fields with derived values, re-encryption).
        public var changes: [String] = []
        /// Values a downgrade cannot carry. A migration with losses is refused unless allowed.
        public var losses: [String] = []
    }

    /// Runs the chain from the document's version to `target`. Secrets must be revealed (the
    /// associated data of sealed fields changes between versions); the result is revealed too.
    /// A downgrade that would drop data throws ``VaultError/Code/refused`` listing it, unless
    /// `allowLossy`.
    public static func migrate(_ document: VaultDocument, to target: Int, allowLossy: Bool = false) throws -> (VaultDocument, Report) {
        try checkTarget(target)
        guard document.isFullyRevealed else {
            throw VaultError.secretsNotRevealed("migration needs the document's secrets revealed, to re-encrypt them for the new version")
        }
        var report = Report(from: document.version, to: target)
        var current = document
        while current.version < target {
            current = try step(up: current, report: &report)
        }
        while current.version > target {
            current = try step(down: current, report: &report)
        }
        if !report.losses.isEmpty, !allowLossy {
            throw VaultError.lossyDowngrade(target: target, losses: report.losses)
        }
        return (current, report)
    }

    /// Whether writing `target` needs the parent key: from schema 3 the secrets are sealed under
    /// a key only it derives (docs/vault-format.md §9.4). The one rule every migration asks,
    /// before it reads anything: one vault, a batch's lines, a bucket run.
    public static func needsParentKey(_ target: Int) -> Bool {
        target >= 3 && VaultDocument.supportedVersions.contains(target)
    }

    /// Refuses a target version this build cannot write. Batches call it before they make a
    /// journal or a folder, so a mistyped `--to` costs nothing.
    public static func checkTarget(_ target: Int) throws {
        guard VaultDocument.supportedVersions.contains(target) else {
            throw VaultError.noSuchSchemaVersion(target)
        }
    }

    private static func step(up document: VaultDocument, report: inout Report) throws -> VaultDocument {
        switch document.version {
        case 1: return upgrade1to2(document, report: &report)
        case 2: return upgrade2to3(document, report: &report)
        default: throw VaultError.noMigrationStep(from: document.version, .up)
        }
    }

    private static func step(down document: VaultDocument, report: inout Report) throws -> VaultDocument {
        switch document.version {
        case 2: return try downgrade2to1(document, report: &report)
        case 3: return downgrade3to2(document, report: &report)
        default: throw VaultError.noMigrationStep(from: document.version, .down)
        }
    }

    /// 1 → 2: every value kept; revision 1; revoked devices get revokedAt = the vault's updatedAt
    /// (v1 never recorded when); an empty key history; secrets re-sealed with v2's binding.
    static func upgrade1to2(_ document: VaultDocument, report: inout Report) -> VaultDocument {
        var upgraded = document
        upgraded.version = 2
        upgraded.revision = 1
        upgraded.keyHistory = []
        report.changes.append("version 1 → 2; revision set to 1; keyHistory added (empty)")
        for index in upgraded.devices.indices where upgraded.devices[index].status == .revoked {
            upgraded.devices[index].revokedAt = document.updatedAt
            report.changes.append("device '\(upgraded.devices[index].deviceId)': revokedAt set to the vault's updatedAt \(document.updatedAt)")
        }
        report.changes.append("secrets re-encrypted with v2 associated data (\(document.childProfiles.count + 1) fields)")
        return upgraded
    }

    /// 2 → 3: every value kept (the revision too, so 2 → 3 → 2 gives back the same values); the
    /// secrets re-sealed under the secrets key with v3's binding (docs/vault-format.md §9.4).
    static func upgrade2to3(_ document: VaultDocument, report: inout Report) -> VaultDocument {
        var upgraded = document
        upgraded.version = 3
        let fields = (document.parentWrapKey == nil ? 0 : 1) + document.childProfiles.filter(\.hasKey).count
        report.changes.append("version 2 → 3; secrets re-encrypted under the secrets key, which the vault key does not open (\(fields) field\(fields == 1 ? "" : "s"))")
        return upgraded
    }

    /// 3 → 2: a child with no key of its own cannot be carried (v2 requires one): the profile is
    /// dropped and reported as a loss, and a group that named it names no child; everything else
    /// is kept, the secrets re-sealed under the vault key.
    static func downgrade3to2(_ document: VaultDocument, report: inout Report) -> VaultDocument {
        var downgraded = document
        downgraded.version = 2
        report.changes.append("version 3 → 2; secrets re-encrypted under the vault key, which support holds")
        let keyless = Set(document.childProfiles.filter { !$0.hasKey }.map(\.profileId))
        for child in document.childProfiles where !child.hasKey {
            report.losses.append("child profile '\(child.profileId)' (\(child.name)) has no key of its own, which schema 2 requires: it would be dropped")
        }
        downgraded.childProfiles.removeAll { !$0.hasKey }
        for index in downgraded.groupMemberships.indices {
            if let child = downgraded.groupMemberships[index].childProfileId, keyless.contains(child) {
                downgraded.groupMemberships[index].childProfileId = nil
                report.changes.append("group '\(downgraded.groupMemberships[index].mlsGroupId)': childProfileId '\(child)' removed with its profile")
            }
        }
        return downgraded
    }

    /// 2 → 1: what v1 cannot carry is dropped and reported as a loss, except what 1 → 2 would
    /// derive again (revision 1, revokedAt equal to updatedAt), so 1 → 2 → 1 loses nothing.
    static func downgrade2to1(_ document: VaultDocument, report: inout Report) throws -> VaultDocument {
        guard document.parentWrapKey != nil else {
            throw VaultError.tombstoneInVersion1()
        }
        var downgraded = document
        downgraded.version = 1
        if let revision = document.revision, revision != 1 {
            report.changes.append("revision \(revision) dropped (v1 has no revision; the next upgrade starts again at 1)")
        }
        downgraded.revision = nil
        report.changes.append("version 2 → 1; secrets re-encrypted without v2 associated data")
        for entry in document.keyHistory {
            report.losses.append("keyHistory entry for \(entry.parentPubkey.hex.prefix(12))… (retired \(entry.retiredAt), \(entry.reason.rawValue))")
        }
        if let successor = document.successor {
            report.losses.append("successor \(successor.vaultPath)")
        }
        if let limit = document.deviceLimit {
            report.losses.append("deviceLimit \(limit)")
        }
        for index in downgraded.devices.indices {
            let device = downgraded.devices[index]
            if let revokedAt = device.revokedAt, revokedAt != document.updatedAt {
                report.losses.append("device '\(device.deviceId)': revokedAt \(revokedAt)")
            }
            if let reason = device.revocationReason {
                report.losses.append("device '\(device.deviceId)': revocationReason \"\(reason)\"")
            }
            downgraded.devices[index].revokedAt = nil
            downgraded.devices[index].revocationReason = nil
        }
        downgraded.keyHistory = []
        downgraded.successor = nil
        downgraded.deviceLimit = nil
        return downgraded
    }
}

extension VaultDocument {
    /// Whether every secret field is in the clear.
    public var isFullyRevealed: Bool {
        (parentWrapKey?.isRevealed ?? true) && childProfiles.allSatisfy { $0.nsec?.isRevealed ?? true }
    }
}

extension VaultError {
    /// Which way a migration step goes.
    enum MigrationDirection: String { case up, down }

    /// A migration target that is not a schema version this build knows.
    static func noSuchSchemaVersion(_ target: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        let versions = VaultDocument.supportedVersions
        return VaultError(.unsupportedVersion, "there is no schema version \(target) (this build knows \(versions.lowerBound) to \(versions.upperBound))",
                          file: file, line: line)
    }

    /// No migration step from `version` in `direction`.
    static func noMigrationStep(from version: Int, _ direction: MigrationDirection, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unsupportedVersion, "no migration from version \(version) \(direction.rawValue)", file: file, line: line)
    }
}
