/// What changed between two vaults of one household, record by record and field by field
/// (`vault-tool diff`). Secrets are compared but never shown.
public enum VaultDiff {
    public struct Change: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable { case added, removed, changed }
        /// `vault`, `device 'id'`, `child profile 'id'`, `group 'id'`, `key history 'hex'`.
        public let record: String
        public let kind: Kind
        /// The field, for a change inside a record.
        public let field: String?
        /// Display values; secret fields show as "(secret)".
        public let old: String?
        public let new: String?

        public var description: String {
            switch (kind, field) {
            case (.added, nil): "\(record): added"
            case (.removed, nil): "\(record): removed"
            case (_, let field?): "\(record): \(field): \(old ?? "(none)") → \(new ?? "(none)")"
            default: "\(record): changed"
            }
        }
    }

    /// Secret fields, revealed or sealed: a change is named, never shown.
    static let secretFields: Set<String> = ["nsec", "parentWrapKey", "nsecEncrypted", "parentWrapKeyEncrypted"]
    /// Arrays of records, and the field that identifies a record.
    static let recordArrays: [(field: String, id: String, name: String)] = [
        ("childProfiles", "profileId", "child profile"),
        ("devices", "deviceId", "device"),
        ("groupMemberships", "mlsGroupId", "group"),
        ("keyHistory", "parentPubkey", "key history"),
    ]

    /// Both documents must be revealed, so secrets can be compared; or, for a vault-key holder
    /// of schema 3 vaults, both sealed, their secrets compared as the sealed bytes (a secret
    /// re-sealed with the same value reads as changed: only the parent key can tell).
    public static func between(_ old: VaultDocument, _ new: VaultDocument) throws -> [Change] {
        let sealedBoth = old.version >= 3 && new.version >= 3 && old.isFullySealed && new.isFullySealed
        if !sealedBoth, !(old.isFullyRevealed && new.isFullyRevealed), old.version >= 3 || new.version >= 3 {
            // A vault-key holder's schema 3 copy is sealed and an older one revealed.
            throw VaultError.parentKeyNeeded("a diff between a schema version 3 vault and an older one")
        }
        guard sealedBoth || (old.isFullyRevealed && new.isFullyRevealed) else {
            throw VaultError.secretsNotRevealed("diff needs both documents' secrets revealed, to compare them")
        }
        let oldValue = old.jsonValue(), newValue = new.jsonValue()
        var changes: [Change] = []
        let arrays = Set(recordArrays.map(\.field))
        changes += compareFields(record: "vault", old: fields(oldValue).filter { !arrays.contains($0.key) }, new: fields(newValue).filter { !arrays.contains($0.key) })
        for (field, id, name) in recordArrays {
            let oldRecords = records(oldValue[field], id: id), newRecords = records(newValue[field], id: id)
            for (key, value) in oldRecords where !newRecords.contains(where: { $0.key == key }) {
                _ = value
                changes.append(Change(record: "\(name) '\(key)'", kind: .removed, field: nil, old: nil, new: nil))
            }
            for (key, value) in newRecords {
                let record = "\(name) '\(key)'"
                guard let before = oldRecords.first(where: { $0.key == key })?.value else {
                    changes.append(Change(record: record, kind: .added, field: nil, old: nil, new: nil))
                    continue
                }
                changes += compareFields(record: record, old: fields(before), new: fields(value))
            }
        }
        return changes
    }

    private static func compareFields(record: String, old: [(key: String, value: JSONValue)], new: [(key: String, value: JSONValue)]) -> [Change] {
        var keys = old.map(\.key)
        for key in new.map(\.key) where !keys.contains(key) { keys.append(key) }
        return keys.compactMap { key in
            let before = old.first { $0.key == key }?.value, after = new.first { $0.key == key }?.value
            guard before != after else { return nil }
            if secretFields.contains(key) {
                return Change(record: record, kind: .changed, field: key, old: before == nil ? nil : "(secret)", new: after == nil ? nil : "(secret, changed)")
            }
            if case .array(let a)? = before, case .array(let b)? = after {
                let added = b.filter { !a.contains($0) }.map(display), removed = a.filter { !b.contains($0) }.map(display)
                return Change(record: record, kind: .changed, field: key, old: removed.isEmpty ? nil : "−" + removed.joined(separator: ", −"),
                              new: added.isEmpty ? nil : "+" + added.joined(separator: ", +"))
            }
            return Change(record: record, kind: .changed, field: key, old: before.map(display), new: after.map(display))
        }
    }

    static func fields(_ value: JSONValue) -> [(key: String, value: JSONValue)] {
        if case .object(let entries) = value { entries } else { [] }
    }

    static func records(_ value: JSONValue?, id: String) -> [(key: String, value: JSONValue)] {
        guard case .array(let elements)? = value else { return [] }
        return elements.map { element in
            guard case .string(let key)? = element[id] else { return ("?", element) }
            return (key, element)
        }
    }

    static func display(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text.count == 64 && Hex.isLowercase(text, byteCount: 32) ? String(text.prefix(12)) + "…" : text
        case .number(let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .null: "null"
        default: String(decoding: value.serialized(pretty: false), as: UTF8.self)
        }
    }
}
