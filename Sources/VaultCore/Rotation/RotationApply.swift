/// Carrying out a plan (`rotation-planner apply`): the new vault under the new key and the
/// tombstone under the old one, and the operations the app must perform.
public enum RotationApplier {
    public struct Outcome: Sendable {
        public let newVault: [UInt8]
        public let newVaultPath: String
        public let tombstone: [UInt8]
        public let tombstonePath: String
        /// JSON Lines operations for the app, in the plan's order.
        public let operations: [JSONValue]
        /// The two documents, revealed, for comparing with what an earlier apply wrote.
        public let newDocument: VaultDocument
        public let tombstoneDocument: VaultDocument
    }

    /// Whether `newVault` and `tombstone` are what applying `plan` to `vault` produces, so that a
    /// second apply can say "already applied" and change nothing instead of replacing the first
    /// run's vault (issue 16). Fresh secrets a compromise rotation or a replaced wrap key makes
    /// are random, so those fields are taken from what is there; everything else must be equal.
    public static func wasApplied(_ plan: RotationPlan, vault bytes: [UInt8], newVault: [UInt8], tombstone: [UInt8],
                                  oldKey: SecretKey, newKey: SecretKey) throws -> Bool {
        let expected = try apply(plan, vault: bytes, oldKey: oldKey, newKey: newKey)
        guard try newDocument(in: newVault, matching: expected, plan: plan, newKey: newKey) != nil,
              let foundTombstone = try? Vault.open(tombstone, with: .parentKey(oldKey)).document.revealed(with: .parentKey(oldKey))
        else { return false }
        return expected.tombstoneDocument == foundTombstone
    }

    /// The rest of a run cut off after it published the new vault (a kill, a closed pipe, a full
    /// disk): when `newVault` is what applying `plan` produces, the tombstone and the operations
    /// are made again to match it (in a compromise rotation, with the child keys it holds), so
    /// the same command finishes the rotation instead of refusing it. Nil when `newVault` is
    /// anything else.
    public static func resume(_ plan: RotationPlan, vault bytes: [UInt8], newVault: [UInt8], oldKey: SecretKey, newKey: SecretKey) throws -> Outcome? {
        let expected = try apply(plan, vault: bytes, oldKey: oldKey, newKey: newKey)
        guard let found = try newDocument(in: newVault, matching: expected, plan: plan, newKey: newKey) else { return nil }
        let newNpubs = Dictionary(found.childProfiles.compactMap { child in child.npub.map { (child.profileId, $0.npub) } }, uniquingKeysWith: { first, _ in first })
        let operations = expected.operations.map { operation -> JSONValue in
            guard case .object(let fields) = operation, fields.first?.value == .string("child.rekey"),
                  let profile = fields.first(where: { $0.key == "profileId" }), case .string(let id) = profile.value, let npub = newNpubs[id]
            else { return operation }
            return .object(fields.map { $0.key == "newNpub" ? (key: $0.key, value: .string(npub)) : $0 })
        }
        return Outcome(newVault: newVault, newVaultPath: expected.newVaultPath, tombstone: expected.tombstone, tombstonePath: expected.tombstonePath,
                       operations: operations, newDocument: found, tombstoneDocument: expected.tombstoneDocument)
    }

    /// The document of `newVault` when it is the one `expected` describes, its random secrets
    /// (a compromise rotation's child keys, a replaced wrap key) aside; nil otherwise.
    private static func newDocument(in newVault: [UInt8], matching expected: Outcome, plan: RotationPlan, newKey: SecretKey) throws -> VaultDocument? {
        guard let found = try? Vault.open(newVault, with: .parentKey(newKey)).document.revealed(with: .parentKey(newKey)) else { return nil }
        var meant = expected.newDocument
        if plan.wrapKey == .replace { meant.parentWrapKey = found.parentWrapKey }
        if plan.mode == .compromise, meant.childProfiles.count == found.childProfiles.count {
            for index in meant.childProfiles.indices where meant.childProfiles[index].profileId == found.childProfiles[index].profileId {
                meant.childProfiles[index].nsec = found.childProfiles[index].nsec
                meant.childProfiles[index].npub = found.childProfiles[index].npub
            }
        }
        return meant == found ? found : nil
    }

    /// Checks everything first (signatures, keys, the vault being the plan's source) and fails
    /// before producing anything. The rotation time is the plan's `createdAt`, so applying the
    /// same plan twice gives the same contents (apart from nonces and, in compromise mode, the
    /// fresh child keys).
    public static func apply(_ plan: RotationPlan, vault bytes: [UInt8], oldKey: SecretKey, newKey: SecretKey,
                             random: some RandomSource = SystemRandom()) throws -> Outcome {
        try plan.verifySignatures()
        guard oldKey.publicKey == plan.old.publicKey else {
            throw VaultError.notThePlansKey(.old, plan.old.publicKey)
        }
        guard newKey.publicKey == plan.new.publicKey else {
            throw VaultError.notThePlansKey(.new, plan.new.publicKey)
        }
        guard Hex.encode(SHA256.hash(bytes)) == plan.source.sha256 else {
            throw VaultError.planForAnotherVault()
        }
        let opened = try Vault.open(bytes, with: .parentKey(oldKey))
        guard (opened.document.revision ?? 0) == plan.source.revision else {
            throw VaultError.vaultChangedSincePlan(revision: opened.document.revision ?? 0, planned: plan.source.revision)
        }
        // At least schema 2 (key history, a successor); a schema 3 vault stays at 3.
        let (current, _) = try Migration.migrate(opened.document.revealed(with: .parentKey(oldKey)), to: max(2, opened.document.version))
        let time = plan.createdAt
        var operations: [JSONValue] = []

        // The new vault.
        var successor = current
        successor.parentPubkey = newKey.publicKey
        successor.revision = 1
        successor.updatedAt = time
        successor.successor = nil
        successor.keyHistory.append(KeyHistoryEntry(parentPubkey: oldKey.publicKey, retiredAt: time, reason: plan.mode == .routine ? .routine : .compromise))
        if plan.wrapKey == .replace { successor.parentWrapKey = .revealed(try random.secret(32)) }
        successor.devices = []
        for device in current.devices where device.status == .active {
            guard let planned = plan.devices.first(where: { $0.deviceId == device.deviceId }), planned.action == .relink else {
                throw VaultError.planMissesDevice(device.deviceId)
            }
            var relinked = device
            relinked.subkeyPublicKey = try Derivation.deviceSubkey(for: newKey, deviceID: device.deviceId).publicKey.hex
            guard relinked.subkeyPublicKey == planned.newSubkeyPublicKey else {
                throw VaultError.plannedSubkeyNotDerived(device.deviceId)
            }
            successor.devices.append(relinked)
            operations.append(.object([("op", .string("device.relink")), ("deviceId", .string(device.deviceId)), ("deviceName", .string(device.deviceName)),
                                       ("oldSubkeyPublicKey", .string(device.subkeyPublicKey)), ("newSubkeyPublicKey", .string(relinked.subkeyPublicKey))]))
        }
        let deviceBySubkey = Dictionary(plan.devices.flatMap { [($0.oldSubkeyPublicKey, $0.deviceId), ($0.newSubkeyPublicKey, $0.deviceId)] }, uniquingKeysWith: { first, _ in first })
        var removals: [JSONValue] = []
        for index in successor.groupMemberships.indices {
            let group = successor.groupMemberships[index]
            guard let planned = plan.groups.first(where: { $0.mlsGroupId == group.mlsGroupId }) else {
                throw VaultError.planMissesGroup(group.mlsGroupId)
            }
            var members = group.memberPubkeys.filter { !planned.remove.contains($0) }
            for key in planned.add where !members.contains(key) {
                members.append(key)
                operations.append(.object([("op", .string("mls.add")), ("group", .string(group.mlsGroupId)), ("member", .string(key)),
                                           ("deviceId", .string(deviceBySubkey[key] ?? ""))]))
            }
            for key in planned.remove {
                removals.append(.object([("op", .string("mls.remove")), ("group", .string(group.mlsGroupId)), ("member", .string(key)),
                                         ("deviceId", .string(deviceBySubkey[key] ?? ""))]))
            }
            successor.groupMemberships[index].memberPubkeys = members
        }
        operations += removals
        if plan.mode == .compromise {
            // A child with no key of its own (schema 3) has none to replace.
            for index in successor.childProfiles.indices {
                guard let oldNpub = successor.childProfiles[index].npub else { continue }
                let key = try SecretKey.generate(using: random)
                successor.childProfiles[index].nsec = .revealed(try key.withUnsafeBytes { try SecretBytes(copying: $0) })
                successor.childProfiles[index].npub = key.publicKey
                operations.append(.object([("op", .string("child.rekey")), ("profileId", .string(successor.childProfiles[index].profileId)),
                                           ("oldNpub", .string(oldNpub.npub)), ("newNpub", .string(key.publicKey.npub))]))
            }
        }

        // The tombstone at the old path: every device revoked, a pointer onward, no secrets.
        var tombstone = current
        tombstone.revision = try VaultDocument.revision(after: current.revision ?? 0)
        tombstone.updatedAt = time
        tombstone.parentWrapKey = nil
        tombstone.childProfiles = []
        tombstone.deviceLimit = nil
        tombstone.successor = Successor(parentPubkey: newKey.publicKey, vaultPath: plan.new.vaultPath, rotatedAt: time)
        for index in tombstone.devices.indices {
            tombstone.devices[index].isPrimary = false
            if tombstone.devices[index].status == .active {
                tombstone.devices[index].status = .revoked
                tombstone.devices[index].revokedAt = time
                tombstone.devices[index].revocationReason = RotationPlanner.tombstoneReason
            }
        }
        for index in tombstone.groupMemberships.indices { tombstone.groupMemberships[index].childProfileId = nil }

        return Outcome(
            newVault: try Vault.sealVerified(successor, access: .parentKey(newKey), random: random), newVaultPath: plan.new.vaultPath,
            tombstone: try Vault.sealVerified(tombstone, access: .parentKey(oldKey), random: random), tombstonePath: plan.old.vaultPath,
            operations: operations, newDocument: successor, tombstoneDocument: tombstone
        )
    }
}

/// Checking a rotation after the fact (`rotation-planner verify`).
public enum RotationVerifier {
    public struct Check: Sendable, Equatable {
        public let name: String
        public let passed: Bool
        public let detail: String
    }

    public static func verify(tombstone tombstoneBytes: [UInt8], newVault newBytes: [UInt8], oldKey: SecretKey, newKey: SecretKey) throws -> [Check] {
        let tombstone = try Vault.open(tombstoneBytes, with: .parentKey(oldKey)).document
        let successor = try Vault.open(newBytes, with: .parentKey(newKey)).document
        var checks: [Check] = []
        func check(_ name: String, _ passed: Bool, _ detail: String) { checks.append(Check(name: name, passed: passed, detail: detail)) }

        let newHousehold = Household(parentPublicKey: newKey.publicKey)
        check("tombstone-points-to-new-vault",
              tombstone.successor?.parentPubkey == newKey.publicKey && tombstone.successor?.vaultPath == newHousehold.vaultPath,
              "the tombstone's successor is \(tombstone.successor.map { "\($0.vaultPath) (\($0.parentPubkey.npub))" } ?? "missing")")
        let secrets = (tombstone.parentWrapKey == nil ? 0 : 1) + tombstone.childProfiles.count
        check("tombstone-holds-no-secret", secrets == 0, secrets == 0 ? "no wrap key, no child keys" : "\(secrets) secret fields remain")
        check("tombstone-devices-revoked", tombstone.devices.allSatisfy { $0.status == .revoked },
              "\(tombstone.devices.filter { $0.status == .active }.count) devices still active in the tombstone")

        let relinked = tombstone.devices.filter { $0.revocationReason == RotationPlanner.tombstoneReason }
        var missing: [String] = []
        for device in relinked {
            let expected = try Derivation.deviceSubkey(for: newKey, deviceID: device.deviceId).publicKey.hex
            if !successor.devices.contains(where: { $0.deviceId == device.deviceId && $0.status == .active && $0.subkeyPublicKey == expected }) {
                missing.append(device.deviceId)
            }
        }
        check("devices-relinked", missing.isEmpty,
              missing.isEmpty ? "\(relinked.count) devices active in the new vault with the new key's subkeys" : "not relinked correctly: \(missing.joined(separator: ", "))")

        let oldSubkeys = Set(tombstone.devices.map(\.subkeyPublicKey))
        var lost: [String] = []
        for group in tombstone.groupMemberships {
            let others = group.memberPubkeys.filter { !oldSubkeys.contains($0) }
            let now = successor.groupMemberships.first { $0.mlsGroupId == group.mlsGroupId }?.memberPubkeys ?? []
            for key in others where !now.contains(key) { lost.append("\(group.mlsGroupId): \(key.prefix(12))…") }
        }
        check("groups-kept-other-members", lost.isEmpty, lost.isEmpty ? "\(tombstone.groupMemberships.count) groups keep every other household's member" : "lost: \(lost.joined(separator: "; "))")
        check("key-history", successor.keyHistory.contains { $0.parentPubkey == oldKey.publicKey }, "the new vault's key history names the old key")
        return checks
    }
}

extension VaultError.Code {
    /// A rotation's new key is its old key.
    public static let newKeyIsOldKey = VaultError.Code(name: "newKeyIsOldKey", category: .refused)
    /// A key given to apply a plan is not the key the plan names.
    public static let notThePlansKey = VaultError.Code(name: "notThePlansKey", category: .refused)
    /// The vault is not the one the plan was made from (its bytes differ).
    public static let planForAnotherVault = VaultError.Code(name: "planForAnotherVault", category: .refused)
    /// The vault's revision moved since the plan was made.
    public static let vaultChangedSincePlan = VaultError.Code(name: "vaultChangedSincePlan", category: .refused)
    /// An active device of the vault is not relinked by the plan.
    public static let planMissesDevice = VaultError.Code(name: "planMissesDevice", category: .refused)
    /// A group of the vault is not in the plan.
    public static let planMissesGroup = VaultError.Code(name: "planMissesGroup", category: .refused)
}

extension VaultError {
    /// Which of a plan's two keys a key file was given as.
    public enum PlanKey: String, Sendable { case old, new }

    static func newKeyIsOldKey(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.newKeyIsOldKey, "the new key is the old key; a rotation needs a new key", file: file, line: line)
    }

    static func notThePlansKey(_ which: PlanKey, _ expected: PublicKey, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notThePlansKey, "the \(which.rawValue) key file is not the plan's \(which.rawValue) key (\(expected.npub))", file: file, line: line)
    }

    static func planForAnotherVault(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.planForAnotherVault, "the vault is not the one the plan was made from (its SHA-256 differs): the plan is stale or for another household",
                   hint: "make a new plan from the current vault", file: file, line: line)
    }

    static func vaultChangedSincePlan(revision: Int, planned: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.vaultChangedSincePlan, "the vault is at revision \(revision), the plan was made at \(planned)", file: file, line: line)
    }

    static func planMissesDevice(_ deviceId: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.planMissesDevice, "device '\(deviceId)' is active but the plan does not relink it", file: file, line: line)
    }

    static func planMissesGroup(_ groupId: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.planMissesGroup, "group '\(groupId)' is not in the plan", file: file, line: line)
    }

    /// The subkey the plan lists for a device is not the one the new key derives for it: the plan
    /// was changed, or made with another key.
    static func plannedSubkeyNotDerived(_ deviceId: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badSignature, "the plan's new subkey for device '\(deviceId)' is not the new key's derivation", file: file, line: line)
    }
}
