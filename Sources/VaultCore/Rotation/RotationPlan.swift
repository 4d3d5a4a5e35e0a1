/// A reviewed, signed plan to move a household to a new parent key (issue 5; seed 000's
/// "Migrate to new parent keypair"). It holds no secret. `planId` is the SHA-256 of the plan body
/// (everything but `planId` and `signatures`) in RFC 8785 canonical JSON; `signatures.old` and
/// `signatures.new` are BIP-340 signatures over the 32 bytes of `planId` by the old key
/// (authority) and the new key (proof of possession). docs/rotation-plan.md states the format.
public struct RotationPlan: Sendable, Equatable {
    /// 2: device subkeys are `oldSubkeyPublicKey`/`newSubkeyPublicKey`, as the vault document
    /// names them (version 1 said `…Pubkey`). A version 1 plan is refused, not misread.
    public static let currentVersion = 2

    public enum Mode: String, Sendable, CaseIterable { case routine, compromise }
    public enum DeviceAction: String, Sendable { case relink, retire }
    public enum KeyAction: String, Sendable { case keep, replace }

    /// A household's public identity as the plan records it.
    public struct Identity: Sendable, Equatable {
        public let publicKey: PublicKey
        public var householdID: HouseholdID { Household(parentPublicKey: publicKey).id }
        public var vaultPath: String { householdID.vaultPath }

        func jsonValue() -> JSONValue {
            .object([("npub", .string(publicKey.npub)), ("pubkey", .string(publicKey.hex)),
                     ("householdId", .string(householdID.hex)), ("vaultPath", .string(vaultPath))])
        }
    }

    public struct Source: Sendable, Equatable {
        public var schemaVersion: Int
        /// A v1 vault is migrated to v2 in memory to make the plan; the plan says so.
        public var migratedInMemory: Bool
        /// The vault's revision (a v1 vault counts as 0).
        public var revision: Int
        /// SHA-256 of the vault file, lowercase hex: a changed vault makes the plan stale.
        public var sha256: String
    }

    public struct Device: Sendable, Equatable {
        public var deviceId: String
        public var deviceName: String
        public var status: DeviceStatus
        public var oldSubkeyPublicKey: String
        public var newSubkeyPublicKey: String
        public var action: DeviceAction
    }

    public struct Group: Sendable, Equatable {
        public var mlsGroupId: String
        public var groupName: String
        /// This household's old device subkeys in the group.
        public var remove: [String]
        /// The new subkeys of the active devices.
        public var add: [String]
    }

    public struct Child: Sendable, Equatable {
        public var profileId: String
        public var name: String
        public var npub: String
        public var action: KeyAction
    }

    public struct Step: Sendable, Equatable {
        public var id: String
        public var text: String
    }

    public var planVersion = RotationPlan.currentVersion
    public var mode: Mode
    public var reason: String?
    public var createdAt: Timestamp
    public var old: Identity
    public var new: Identity
    public var source: Source
    public var devices: [Device]
    public var groups: [Group]
    public var children: [Child]
    public var wrapKey: KeyAction
    public var wrapKeyWarning: String?
    public var steps: [Step]
    /// (old, new), each 64 bytes; nil until signed.
    public var signatures: (old: [UInt8], new: [UInt8])?

    public init(mode: Mode, reason: String?, createdAt: Timestamp, old: Identity, new: Identity, source: Source, devices: [Device],
                groups: [Group], children: [Child], wrapKey: KeyAction, wrapKeyWarning: String?, steps: [Step]) {
        self.mode = mode
        self.reason = reason
        self.createdAt = createdAt
        self.old = old
        self.new = new
        self.source = source
        self.devices = devices
        self.groups = groups
        self.children = children
        self.wrapKey = wrapKey
        self.wrapKeyWarning = wrapKeyWarning
        self.steps = steps
    }

    public static func == (lhs: RotationPlan, rhs: RotationPlan) -> Bool {
        lhs.jsonValue() == rhs.jsonValue()
    }

    // MARK: Identity and signatures

    /// SHA-256 of the canonical body.
    public var planID: [UInt8] { SHA256.hash(bodyJSON().canonicalSerialized()) }

    /// Signs with both keys; each must be the plan's.
    public mutating func sign(oldKey: SecretKey, newKey: SecretKey) throws {
        guard oldKey.publicKey == old.publicKey, newKey.publicKey == new.publicKey else {
            throw VaultError.notThePlansKeys()
        }
        let id = planID
        signatures = (try oldKey.signature(for: id), try newKey.signature(for: id))
    }

    /// Both signatures must verify over this body's planId.
    public func verifySignatures() throws {
        guard let signatures else { throw VaultError.planNotSigned() }
        let id = planID
        guard old.publicKey.isValidSignature(signatures.old, for: id) else {
            throw VaultError.planSignatureInvalid(.old)
        }
        guard new.publicKey.isValidSignature(signatures.new, for: id) else {
            throw VaultError.planSignatureInvalid(.new)
        }
    }

    // MARK: JSON

    /// The signed body: every field but `planId` and `signatures`.
    public func bodyJSON() -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("planVersion", .int(planVersion)),
            ("mode", .string(mode.rawValue)),
        ]
        if let reason { entries.append(("reason", .string(reason))) }
        entries += [
            ("createdAt", .string(createdAt.rfc3339)),
            ("household", .object([("old", old.jsonValue()), ("new", new.jsonValue())])),
            ("source", .object([("schemaVersion", .int(source.schemaVersion)), ("migratedInMemory", .bool(source.migratedInMemory)),
                                ("revision", .int(source.revision)), ("sha256", .string(source.sha256))])),
            ("devices", .array(devices.map { device in
                .object([("deviceId", .string(device.deviceId)), ("deviceName", .string(device.deviceName)), ("status", .string(device.status.rawValue)),
                         ("oldSubkeyPublicKey", .string(device.oldSubkeyPublicKey)), ("newSubkeyPublicKey", .string(device.newSubkeyPublicKey)),
                         ("action", .string(device.action.rawValue))])
            })),
            ("groups", .array(groups.map { group in
                .object([("mlsGroupId", .string(group.mlsGroupId)), ("groupName", .string(group.groupName)),
                         ("remove", .array(group.remove.map(JSONValue.string))), ("add", .array(group.add.map(JSONValue.string)))])
            })),
            ("children", .array(children.map { child in
                .object([("profileId", .string(child.profileId)), ("name", .string(child.name)), ("npub", .string(child.npub)),
                         ("action", .string(child.action.rawValue))])
            })),
            ("wrapKey", .object([("action", .string(wrapKey.rawValue))] + (wrapKeyWarning.map { [("warning", JSONValue.string($0))] } ?? []))),
            ("steps", .array(steps.map { .object([("id", .string($0.id)), ("text", .string($0.text))]) })),
        ]
        return .object(entries)
    }

    /// The whole plan as written to PLAN.json: planId first, signatures last.
    public func jsonValue() -> JSONValue {
        guard case .object(var entries) = bodyJSON() else { return .null }
        entries.insert(("planId", .string(Hex.encode(planID))), at: 1)
        if let signatures {
            entries.append(("signatures", .object([("old", .string(Hex.encode(signatures.old))), ("new", .string(Hex.encode(signatures.new)))])))
        }
        return .object(entries)
    }

    /// Reads PLAN.json strictly, and checks that its planId is its body's. Signatures are
    /// checked separately by ``verifySignatures()``. A plan that does not even parse is reported
    /// as failing verification: for a signed document, damaged and forged are the same verdict.
    public init(json: [UInt8]) throws {
        do {
            try self.init(parsing: json)
        } catch let error as VaultError where error.code == .malformedDocument {
            throw VaultError.planDamaged(error)
        }
    }

    private init(parsing json: [UInt8]) throws {
        let value = try JSONValue(parsing: json, what: "the plan")
        // Integrity before interpretation: the stated planId must be the hash of the body as
        // written, before any field is read, so a changed version number is caught as a change.
        guard case .object(let entries) = value, case .string(let statedID)? = value["planId"] else {
            throw VaultError.planWithoutID()
        }
        let body = JSONValue.object(entries.filter { $0.key != "planId" && $0.key != "signatures" })
        guard statedID == Hex.encode(SHA256.hash(body.canonicalSerialized())) else {
            throw VaultError.planIDMismatch()
        }
        var reader = try JSONObjectReader(value, path: "")
        planVersion = try reader.int("planVersion")
        guard planVersion == Self.currentVersion else {
            throw VaultError.unsupportedPlanVersion(planVersion)
        }
        _ = try reader.string("planId")
        mode = try reader.enumeration("mode", Mode.self)
        reason = try reader.optionalString("reason")
        createdAt = try reader.timestamp("createdAt")
        var household = try JSONObjectReader(reader.required("household"), path: "household")
        old = Identity(publicKey: try household.identity("old"))
        new = Identity(publicKey: try household.identity("new"))
        try household.finish()
        var sourceReader = try JSONObjectReader(reader.required("source"), path: "source")
        source = Source(schemaVersion: try sourceReader.int("schemaVersion"), migratedInMemory: try sourceReader.bool("migratedInMemory"),
                        revision: try sourceReader.int("revision"), sha256: try sourceReader.lowercaseHexKey("sha256"))
        try sourceReader.finish()
        devices = try reader.array("devices").map { element in
            var device = try JSONObjectReader(element.value, path: element.path)
            let value = Device(deviceId: try device.string("deviceId"), deviceName: try device.string("deviceName"),
                               status: try device.enumeration("status", DeviceStatus.self),
                               oldSubkeyPublicKey: try device.lowercaseHexKey("oldSubkeyPublicKey"), newSubkeyPublicKey: try device.lowercaseHexKey("newSubkeyPublicKey"),
                               action: try device.enumeration("action", DeviceAction.self))
            try device.finish()
            return value
        }
        groups = try reader.array("groups").map { element in
            var group = try JSONObjectReader(element.value, path: element.path)
            let value = Group(mlsGroupId: try group.string("mlsGroupId"), groupName: try group.string("groupName"),
                              remove: try group.strings("remove"), add: try group.strings("add"))
            try group.finish()
            return value
        }
        children = try reader.array("children").map { element in
            var child = try JSONObjectReader(element.value, path: element.path)
            let value = Child(profileId: try child.string("profileId"), name: try child.string("name"), npub: try child.string("npub"),
                              action: try child.enumeration("action", KeyAction.self))
            try child.finish()
            return value
        }
        var wrap = try JSONObjectReader(reader.required("wrapKey"), path: "wrapKey")
        wrapKey = try wrap.enumeration("action", KeyAction.self)
        wrapKeyWarning = try wrap.optionalString("warning")
        try wrap.finish()
        steps = try reader.array("steps").map { element in
            var step = try JSONObjectReader(element.value, path: element.path)
            let value = Step(id: try step.string("id"), text: try step.string("text"))
            try step.finish()
            return value
        }
        if let signatureValue = reader.optional("signatures") {
            var signatureReader = try JSONObjectReader(signatureValue, path: "signatures")
            let oldSignature = try signatureReader.string("old"), newSignature = try signatureReader.string("new")
            try signatureReader.finish()
            // Lowercase only, as written: a signature in another spelling is a changed plan.
            guard Hex.isLowercase(oldSignature, byteCount: 64), Hex.isLowercase(newSignature, byteCount: 64),
                  let o = Hex.decode(oldSignature), let n = Hex.decode(newSignature) else {
                throw VaultError.malformedPlanSignatures()
            }
            signatures = (o, n)
        }
        try reader.finish()
        guard statedID == Hex.encode(planID) else {
            throw VaultError.planNotCanonical()
        }
    }
}

extension JSONObjectReader {
    mutating func enumeration<Value: RawRepresentable>(_ key: String, _ type: Value.Type) throws -> Value where Value.RawValue == String {
        let text = try string(key)
        guard let value = Value(rawValue: text) else { throw invalid(key, "has an unknown value") }
        return value
    }

    mutating func identity(_ key: String) throws -> PublicKey {
        var reader = try JSONObjectReader(required(key), path: fieldPath(key))
        let publicKey = try reader.publicKeyHex("pubkey")
        let npub = try reader.string("npub"), householdID = try reader.string("householdId"), vaultPath = try reader.string("vaultPath")
        try reader.finish()
        let household = Household(parentPublicKey: publicKey)
        guard npub == publicKey.npub, householdID == household.id.hex, vaultPath == household.vaultPath else {
            throw invalid(key, "has an npub, household id or vault path that does not follow from its pubkey")
        }
        return publicKey
    }
}

extension VaultError {
    /// The keys given to sign a plan are not the two it names.
    static func notThePlansKeys(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyMismatch, "the keys are not the plan's old and new keys", file: file, line: line)
    }

    /// A plan without signatures, where both are needed.
    static func planNotSigned(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badSignature, "the plan is not signed", file: file, line: line)
    }

    /// One of a plan's two signatures does not verify over its planId.
    static func planSignatureInvalid(_ which: PlanKey, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badSignature, "the \(which.rawValue) key's signature does not verify: the plan was changed, or not signed by the \(which.rawValue) key",
                   file: file, line: line)
    }

    /// A plan that does not parse: for a signed document, damaged and forged are one verdict.
    static func planDamaged(_ cause: VaultError, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badSignature, "the plan is damaged or was changed: \(cause.reason)", file: file, line: line)
    }

    /// A plan with no planId to check its body against.
    static func planWithoutID(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "the plan has no planId", file: file, line: line)
    }

    /// The stated planId is not the hash of the body as written.
    static func planIDMismatch(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badSignature, "the plan was changed after it was made: its planId does not match its contents", file: file, line: line)
    }

    /// A plan version this build does not read; an older one can be made again.
    static func unsupportedPlanVersion(_ version: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unsupportedVersion, "plan version \(version) is not supported (this build reads version \(RotationPlan.currentVersion))",
                   hint: version < RotationPlan.currentVersion ? "the plan was made by an earlier build: make it again from the vault with this one" : nil,
                   file: file, line: line)
    }

    /// Signatures not written as 128 lowercase hex characters each.
    static func malformedPlanSignatures(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "signatures should be 128 lowercase hex characters each", file: file, line: line)
    }

    /// A plan whose fields, read and written again, do not give the body they came from.
    static func planNotCanonical(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "the plan's fields do not write back to the body they were read from", file: file, line: line)
    }
}
