// The canonical form (RFC 8785) signatures are made over.

extension JSONValue {
    /// RFC 8785 (JCS) canonical JSON: no whitespace, object keys sorted by their UTF-16 code
    /// units, strings escaped minimally. Numbers are written as they were read, so a document
    /// hashed this way must keep to integers (the rotation plan does).
    public func canonicalSerialized() -> [UInt8] {
        sortedKeys().serialized(pretty: false)
    }

    private func sortedKeys() -> JSONValue {
        switch self {
        case .array(let elements): .array(elements.map { $0.sortedKeys() })
        case .object(let entries):
            .object(entries.map { ($0.key, $0.value.sortedKeys()) }.sorted { Array($0.key.utf16).lexicographicallyPrecedes(Array($1.key.utf16)) })
        default: self
        }
    }
}
