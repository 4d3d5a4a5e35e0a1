// The rest of a device's life in the vault (seed 000: Flow 2 "Add Device via QR" steps 14 and
// 18, "Any device can be promoted to primary", "Device limit enforcement"): added from what the
// device-link flow gives, promoted, renamed, and the household's limit set. Revocation is
// VaultRevocation; devices are named here as it names them.

/// One change to a vault's devices.
public enum DeviceChange: Sendable, Equatable {
    /// A linked device: its id and name as the new device chose them.
    case add(id: String, name: String)
    /// Any active device becomes the primary; the old primary stays active.
    case promote(String)
    case rename(String, to: String)
    /// At most this many active devices; nil clears the limit.
    case limit(Int?)

    /// The command's name, as notes and the log's `change` tag say it.
    public var name: String {
        switch self {
        case .add: "add"
        case .promote: "promote"
        case .rename: "rename"
        case .limit: "limit"
        }
    }
}

public enum VaultDevices {
    /// The highest device limit: a household of more devices than this is not a family.
    public static let maximumLimit = 1_000

    /// A limit as typed (`vault-tool device limit 4`, `none`): the number, or nil for none. A
    /// number of digits past any limit is said to be one (it was called "not a number").
    public static func limit(typed text: String) throws -> Int? {
        if text.lowercased() == "none" { return nil }
        if let value = Int(text) { return value }
        let digits = text.hasPrefix("-") || text.hasPrefix("+") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { throw VaultError.deviceLimitNotANumber(text) }
        throw VaultError.deviceLimitOutOfRange(text)
    }

    /// The longest device name or id kept (a name is shown on every device's settings screen).
    public static let maximumLength = 100

    /// What a change does.
    public struct Outcome: Sendable {
        public let document: VaultDocument
        /// The app's MLS operations (`mls.add` of the new device to each of the household's
        /// groups), in the JSON Lines form of revocation's removals.
        public let operations: [JSONValue]
        /// For people and the log: "added Sam's iPad (6F1C2B7E…)".
        public let summary: String
        /// The device it is about, when it is about one.
        public let deviceID: String?
        /// Nothing to do: the vault already is as asked (a change run again).
        public let unchanged: Bool
    }

    /// The vault after `change`. `parent` (the parent key) is needed to add a device, whose
    /// subkey derives from it. Refusals are ``VaultError``s with the codes below; names are
    /// matched as revocation matches them.
    public static func apply(_ change: DeviceChange, to document: VaultDocument, parent: SecretKey?, now: Timestamp) throws -> Outcome {
        var changed = document
        let active = document.devices.filter { $0.status == .active }
        switch change {
        case .add(let id, let name):
            try checkText(id, field: "the device id")
            try checkText(name, field: "the device name")
            guard let parent else { throw VaultError.parentKeyNeededToAddDevice() }
            let subkey = try Derivation.deviceSubkey(for: parent, deviceID: id).publicKey.hex
            // The device as the vault has it (any case, or a UUID in any spelling): run again,
            // an add finishes whatever spelling the first run took (a review: an id in braces an
            // older build added was refused when run again, its operations lost).
            let existing = document.devices.first { $0.deviceId.lowercased() == id.lowercased() }
                ?? document.devices.first { sameDeviceID($0.deviceId, id) }
            if existing == nil {
                // The app writes a UUID one way (8-4-4-4-12): another spelling of one is another
                // id to the subkey, and the same device to anyone reading it (a trial: an
                // existing id in braces or without hyphens was added beside it). And a new id
                // is ASCII, as the app's are: a character past it can read as one of ASCII (a
                // review: U+2010, U+2043, U+30FC for '-'), which makes an id read as another.
                if let written = uuidAsTheAppWrites(id), written.lowercased() != id.lowercased() {
                    throw VaultError.deviceTextInvalid("the device id", "is a UUID written otherwise than the app writes one: \(written)")
                }
                guard id.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
                    throw VaultError.deviceTextInvalid("the device id", "holds a space or a character past ASCII, which can read as another (a dash as '-'); the app's ids are UUIDs")
                }
            }
            if let existing {
                // Run again after it was written: the same device, nothing to do.
                guard existing.status == .active, existing.deviceName == name, existing.subkeyPublicKey == subkey else { throw VaultError.deviceExists(id, name: name, existing: existing) }
                // Its additions again, for the groups that hold it: a run whose operations were
                // lost after its vault was written is finished by running it again.
                let operations = document.groupMemberships.filter { $0.memberPubkeys.contains(subkey) }.map { Self.addition(group: $0.mlsGroupId, member: subkey, device: id) }
                return Outcome(document: document, operations: operations, summary: "\(name) (\(id)) is already in the vault", deviceID: id, unchanged: true)
            }
            if let same = active.first(where: { VaultRevocation.folded($0.deviceName) == VaultRevocation.folded(name) }) {
                throw VaultError.deviceNameTaken(name, by: same)
            }
            if let limit = document.deviceLimit, active.count >= limit { throw VaultError.deviceLimitReached(limit, active: active.count) }
            changed.devices.append(DeviceRecord(deviceId: id, deviceName: name, isPrimary: !active.contains { $0.isPrimary }, subkeyPublicKey: subkey,
                                                addedAt: now, lastSeenAt: now, status: .active))
            try refuseNewAmbiguity(before: document.devices, after: changed.devices)
            // Every group the household's devices are in gets the new device (seed 000, Flow 2
            // step 14: "Add new device to ALL groups via addMembers").
            let household = Set(active.map(\.subkeyPublicKey))
            var operations: [JSONValue] = []
            for index in changed.groupMemberships.indices where changed.groupMemberships[index].memberPubkeys.contains(where: household.contains) {
                guard !changed.groupMemberships[index].memberPubkeys.contains(subkey) else { continue }
                changed.groupMemberships[index].memberPubkeys.append(subkey)
                operations.append(Self.addition(group: changed.groupMemberships[index].mlsGroupId, member: subkey, device: id))
            }
            return try finished(changed, now: now, operations: operations, summary: "added \(name) (\(id))", deviceID: id)
        case .promote(let typed):
            let device = try selected(typed, in: document)
            guard device.status == .active else { throw VaultError.deviceNotActive(device.deviceId, doing: "promoted") }
            guard !device.isPrimary else {
                return Outcome(document: document, operations: [], summary: "\(RecordedText.named(device.deviceName)) (\(RecordedText.named(device.deviceId))) is already the primary", deviceID: device.deviceId, unchanged: true)
            }
            for index in changed.devices.indices { changed.devices[index].isPrimary = changed.devices[index].deviceId == device.deviceId }
            return try finished(changed, now: now, operations: [], summary: "promoted \(RecordedText.named(device.deviceName)) (\(RecordedText.named(device.deviceId))) to primary", deviceID: device.deviceId)
        case .rename(let typed, let name):
            try checkText(name, field: "the new name")
            let device: DeviceRecord
            do {
                device = try selected(typed, in: document)
            } catch let error as VaultError where error.code == .deviceNotNamed {
                // The same rename run again names a device by the name it no longer has (a
                // tired operator's up-arrow): the device that has the new name says so. Still a
                // refusal: the old name alone cannot show it was this device (a mistyped old name
                // and another device's name would read the same: a hostile review). Run again by
                // its id or its new name, the rename changes nothing (exit 0).
                guard let renamed = document.devices.first(where: { VaultRevocation.folded($0.deviceName) == VaultRevocation.folded(name) }) else { throw error }
                throw error.withContext(hint: "the device \(QuotedInput(renamed.deviceId)) is already named \(QuotedInput(renamed.deviceName)): if this rename ran before, it is done (run it by the device's id to see nothing change)")
            }
            guard device.deviceName != name else {
                return Outcome(document: document, operations: [], summary: "\(RecordedText.named(device.deviceId)) is already named \(name)", deviceID: device.deviceId, unchanged: true)
            }
            // A revoked device keeps its name, which `add` refuses to a new device: renamed, the
            // name went to a new device, and the same revocation run again revoked that one (a
            // trial: "Bedroom iPad" revoked, renamed, a new "Bedroom iPad" added, revoked).
            guard device.status == .active else { throw VaultError.revokedDeviceRenamed(device.deviceId) }
            if let same = active.first(where: { $0.deviceId != device.deviceId && VaultRevocation.folded($0.deviceName) == VaultRevocation.folded(name) }) {
                throw VaultError.deviceNameTaken(name, by: same)
            }
            let index = changed.devices.firstIndex { $0.deviceId == device.deviceId }!
            changed.devices[index].deviceName = name
            try refuseNewAmbiguity(before: document.devices, after: changed.devices)
            return try finished(changed, now: now, operations: [], summary: "renamed \(RecordedText.named(device.deviceName)) (\(RecordedText.named(device.deviceId))) to \(name)", deviceID: device.deviceId)
        case .limit(let limit):
            guard document.version >= 2 else {
                // Clearing asks for what a schema 1 vault already is (a trial: exit 64).
                guard limit != nil else {
                    return Outcome(document: document, operations: [], summary: "a schema 1 vault holds no device limit: there is none to clear", deviceID: nil, unchanged: true)
                }
                throw VaultError.deviceLimitNeedsSchema2()
            }
            if let limit {
                guard (1...maximumLimit).contains(limit) else { throw VaultError.deviceLimitInvalid(limit) }
                guard limit >= active.count else { throw VaultError.deviceLimitBelowActive(limit, active: active.count) }
            }
            guard limit != document.deviceLimit else {
                return Outcome(document: document, operations: [], summary: "the device limit is already \(limit.map(String.init) ?? "none")", deviceID: nil, unchanged: true)
            }
            changed.deviceLimit = limit
            return try finished(changed, now: now, operations: [],
                                summary: limit.map { "set the device limit to \($0)" } ?? "cleared the device limit", deviceID: nil)
        }
    }

    /// One `mls.add`, in the form of revocation's `mls.remove`.
    static func addition(group: String, member: String, device: String) -> JSONValue {
        .object([("op", .string("mls.add")), ("group", .string(group)), ("member", .string(member)), ("deviceId", .string(device))])
    }

    private static func finished(_ document: VaultDocument, now: Timestamp, operations: [JSONValue], summary: String, deviceID: String?) throws -> Outcome {
        var changed = document
        try changed.raiseRevision()
        changed.updatedAt = max(changed.updatedAt, now)
        return Outcome(document: changed, operations: operations, summary: summary, deviceID: deviceID, unchanged: false)
    }

    /// Support names devices by id, id prefix or whole name (``VaultRevocation/matching(_:in:)``):
    /// a change after which a device's id or name would select another device too (an id that
    /// is another's name, a name that is another's id or its first letters, a name another
    /// device answers to) is refused, so every device stays one that can be revoked by name.
    static func refuseNewAmbiguity(before: [DeviceRecord], after: [DeviceRecord]) throws {
        let (afterLookup, beforeLookup) = (DeviceLookup(after), DeviceLookup(before))
        for device in after {
            for typed in [device.deviceId, device.deviceName] {
                let now = afterLookup.matching(typed)
                guard now.count > 1, beforeLookup.matching(typed).count < now.count else { continue }
                throw VaultError.deviceWouldBeAmbiguous(typed, devices: now.map(\.deviceId))
            }
        }
    }

    /// The one device `typed` names, as revocation names devices; refused otherwise, with the
    /// candidates or the closest devices.
    static func selected(_ typed: String, in document: VaultDocument) throws -> DeviceRecord {
        try VaultRevocation.refuseBlank(typed)
        switch VaultRevocation.selection(typed, in: document.devices) {
        case .device(let device): return device
        case .refused(let refusal): throw VaultError.deviceNotNamed(refusal.reason)
        case nil:
            throw VaultError.deviceNotNamed(VaultRevocation.Refusal.unknownDevices([QuotedInput(typed)]).reason
                + "; closest: " + VaultRevocation.closestDevices(to: typed, in: document.devices).joined(separator: ", "))
        }
    }

    /// A device id whose subkey is derived and shown with it (`derive`): never one that reads
    /// as a key, words or a share, nor one holding a piece of a key the run holds, which would
    /// be printed back (hostile trials: `--device-id d-‹12 hex digits of the parent key›` was).
    public static func checkDerivedID(_ id: String) throws {
        // A whole one: a few list words ("family room") are an id like another.
        guard QuotedInput(id).fingerprint == nil, !HeldSecrets.appear(in: Array(id.utf8)) else {
            throw VaultError.deviceTextInvalid("a device id", "reads as a key, recovery words or a share, or holds a piece of a key this run holds (not shown); a device's id is the app's (a UUID)")
        }
    }

    /// Whether two device ids name one device to a reader: the same in any case, or the same
    /// UUID in any spelling (``uuidAsTheAppWrites(_:)``). `check`'s unique-device-id and `add`
    /// ask this.
    public static func sameDeviceID(_ one: String, _ other: String) -> Bool {
        deviceIDKey(one) == deviceIDKey(other)
    }

    /// What ``sameDeviceID(_:_:)`` compares.
    static func deviceIDKey(_ id: String) -> String { (uuidAsTheAppWrites(id) ?? id).lowercased() }

    /// `id` as the app's `UUID().uuidString` writes it (upper case, 8-4-4-4-12) when it is a
    /// UUID in any spelling PostgreSQL's uuid reads (any case, braces, `urn:uuid:`, hyphens
    /// after any group of four digits or none); nil for an id that is none.
    static func uuidAsTheAppWrites(_ id: String) -> String? {
        // Braces, `urn:uuid:` and spaces around, in any order (a review: `{urn:uuid:…}` and
        // `{ … }` read as the UUID, and were taken as another id).
        var text = Substring(id), before = ""
        while before != String(text) {
            before = String(text)
            text = text.drop { $0.isWhitespace }
            while text.last?.isWhitespace == true { text = text.dropLast() }
            if text.lowercased().hasPrefix("urn:uuid:") { text = text.dropFirst("urn:uuid:".count) }
            if text.hasPrefix("{"), text.hasSuffix("}"), text.count >= 2 { text = text.dropFirst().dropLast() }
        }
        let digits = text.filter { $0 != "-" }
        guard digits.count == 32, digits.allSatisfy(\.isHexDigit), digits.allSatisfy(\.isASCII), !text.hasPrefix("-"), !text.hasSuffix("-"), !text.contains("--") else { return nil }
        let upper = Array(digits.uppercased())
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(upper[$0]) }.joined(separator: "-")
    }

    /// A name or id as the app shows it: not empty, not padded, not too long, and nothing that
    /// is not text (a control or invisible character would forge a line of every listing).
    static func checkText(_ text: String, field: String) throws {
        guard !text.isEmpty, text.trimmingBlanks() == text else { throw VaultError.deviceTextInvalid(field, "is empty or begins or ends with a space or an invisible character") }
        guard text.count <= maximumLength else { throw VaultError.deviceTextInvalid(field, "is longer than \(maximumLength) characters") }
        guard !text.unicodeScalars.contains(where: \.isControlOrInvisible) else { throw VaultError.deviceTextInvalid(field, "holds a control or invisible character") }
        // Nor what a listing would show escaped (five combining marks on a letter): a name
        // that can be read is one that can be typed back.
        let shownEscaped = zip(text.unicodeScalars, DisplayRule.escapedScalars(text)).contains { scalar, escaped in escaped && !scalar.properties.isWhitespace }
        guard !shownEscaped else { throw VaultError.deviceTextInvalid(field, "holds characters a listing shows escaped (more than four marks on a letter)") }
        // A trial: "Kitchen iPаd" (a Cyrillic а) was added beside "Kitchen iPad", two active
        // devices that read alike, and `--device "Kitchen iPad"` picked one without a word.
        if let scripts = DisplayRule.mixedScripts(text) {
            throw VaultError.deviceTextInvalid(field, "mixes \(scripts.joined(separator: " and ")) letters in one word, which then reads as a name it is not")
        }
        // A trial: "Kitchen iPad\u{202e}" typed so was listed as the device holding U+202E.
        guard !DisplayRule.imitatesEscape(text) else { throw VaultError.deviceTextInvalid(field, DisplayRule.imitatesEscapeReason) }
        try RecordedText.check(text, field: field)
    }
}

extension VaultError.Code {
    /// A device id already in the vault, as another device or revoked.
    public static let deviceExists = VaultError.Code(name: "deviceExists", category: .refused)
    /// Another active device has that name: names pick devices, so two would be ambiguous.
    public static let deviceNameTaken = VaultError.Code(name: "deviceNameTaken", category: .refused)
    /// A name to select a device by that is empty, or only spaces and invisible characters.
    public static let deviceNameBlank = VaultError.Code(name: "deviceNameBlank", category: .usage)
    /// The household is at its device limit.
    public static let deviceLimitReached = VaultError.Code(name: "deviceLimitReached", category: .refused)
    /// A limit that is no number of devices (below one, above the most), or a vault that holds none.
    public static let deviceLimitInvalid = VaultError.Code(name: "deviceLimitInvalid", category: .usage)
    /// A limit below today's active devices: refused as adding past the limit is (exit 4),
    /// since the household's state, not the option's form, is what stands in the way.
    public static let deviceLimitBelowActive = VaultError.Code(name: "deviceLimitBelowActive", category: .refused)
    /// A device named that is not one device.
    public static let deviceNotNamed = VaultError.Code(name: "deviceNotNamed", category: .refused)
    /// A revoked device promoted.
    public static let deviceNotActive = VaultError.Code(name: "deviceNotActive", category: .refused)
    /// A device name or id that is not text a device list may show.
    public static let deviceTextInvalid = VaultError.Code(name: "deviceTextInvalid", category: .usage)
    /// Adding a device without the parent key, from which its subkey derives.
    public static let parentKeyNeededToAddDevice = VaultError.Code(name: "parentKeyNeededToAddDevice", category: .usage)
}

extension VaultError {
    /// `existing` is the device the vault has under that id (any case): what differs is said.
    static func deviceExists(_ id: String, name: String, existing: DeviceRecord, file: String = #fileID, line: UInt = #line) -> VaultError {
        let differs = existing.status != .active ? "it is revoked"
            : existing.deviceId != id ? "as \(QuotedInput(existing.deviceId)), its id spelt otherwise"
            : existing.deviceName != name ? "named \(QuotedInput(existing.deviceName))"
            : "with a subkey of another parent key"
        return VaultError(.deviceExists, "the vault already has a device \(QuotedInput(id)) (\(differs)); a device id is never used twice",
                          hint: "the new device makes a new id when it is linked again", file: file, line: line)
    }

    /// The typed name answers to `device`'s (the same letters, case or width aside).
    static func deviceNameTaken(_ name: String, by device: DeviceRecord, file: String = #fileID, line: UInt = #line) -> VaultError {
        let named = device.deviceName == name ? "is already named \(QuotedInput(name))" : "is named \(QuotedInput(device.deviceName)), which \(QuotedInput(name)) would also name"
        return VaultError(.deviceNameTaken, "the active device \(QuotedInput(device.deviceId)) \(named): two devices of one name could not be told apart",
                          hint: "give another name, or rename that device first", file: file, line: line)
    }

    static func deviceWouldBeAmbiguous(_ typed: String, devices: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceNameTaken, "\(QuotedInput(typed)) would then name \(devices.count) devices (\(devices.map { QuotedInput($0).description }.joined(separator: ", "))): support could not revoke one of them by it; nothing was written",
                   hint: "give a name and id no other device has, nor begins with", file: file, line: line)
    }

    static func deviceLimitReached(_ limit: Int, active: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceLimitReached, "the household has \(active) active devices, its limit of \(limit); nothing was written",
                   hint: "revoke a device first, or raise the limit: vault-tool device limit --key-file PARENT.nsec --in-place VAULT N", file: file, line: line)
    }

    static func deviceLimitInvalid(_ limit: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceLimitInvalid, "a device limit of \(limit): give 1 to \(VaultDevices.maximumLimit), or 'none'", file: file, line: line)
    }

    static func deviceLimitNotANumber(_ typed: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceLimitInvalid, "the limit \(QuotedInput(typed)) is not a number or 'none'; give 1 to \(VaultDevices.maximumLimit), or 'none'", file: file, line: line)
    }

    /// A limit of more digits than any number the vault holds.
    static func deviceLimitOutOfRange(_ typed: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceLimitInvalid, "a device limit of \(QuotedInput(typed)) is out of range: give 1 to \(VaultDevices.maximumLimit), or 'none'", file: file, line: line)
    }

    static func deviceLimitNeedsSchema2(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceLimitInvalid, "a schema 1 vault holds no device limit",
                   hint: "migrate it first: vault-tool migrate --key-file PARENT.nsec --to 2 --in-place VAULT", file: file, line: line)
    }

    static func deviceLimitBelowActive(_ limit: Int, active: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceLimitBelowActive, "a limit of \(limit) is below the household's \(active) active devices; nothing was written",
                   hint: "revoke devices first, or give \(active) or more", file: file, line: line)
    }

    /// A device name typed that is empty, or only spaces and characters that show as nothing
    /// (``VaultRevocation/folded(_:)``): an unset shell variable names no device, not even one
    /// left without a name. `listing` is the command that lists the names.
    public static func deviceNameBlank(listing: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceNameBlank, "the device name is empty or only spaces and invisible characters (an unset shell variable?); it names no device, not even one the app left without a name; nothing was changed",
                   hint: "give the device's name, or its id: see them with \(listing)", file: file, line: line)
    }

    static func deviceNotNamed(_ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceNotNamed, reason, hint: "name one device: its id, 4 characters of it or more, or its whole name", file: file, line: line)
    }

    static func deviceNotActive(_ id: String, doing: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceNotActive, "the device \(QuotedInput(id)) is revoked and cannot be \(doing)", file: file, line: line)
    }

    static func revokedDeviceRenamed(_ id: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceNotActive, "the device \(QuotedInput(id)) is revoked and keeps its name: a revocation by that name, run again, must find it and no other device; nothing was written",
                   hint: "a new device for it takes another name (device add --name)", file: file, line: line)
    }

    static func deviceTextInvalid(_ field: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.deviceTextInvalid, "\(field) \(problem)", file: file, line: line)
    }

    static func parentKeyNeededToAddDevice(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.parentKeyNeededToAddDevice, "adding a device needs the parent key: its subkey derives from it",
                   hint: "give --key-file PARENT.nsec", file: file, line: line)
    }
}
