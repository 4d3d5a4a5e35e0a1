/// A JSON value that keeps object keys in order and numbers as their text.
///
/// Our own small RFC 8259 reader and writer rather than Foundation's coders: documents must be
/// rejected on unknown or duplicate fields (nothing silently dropped on re-sealing), errors must
/// name the exact field, output must be byte-stable in the seed's field order for golden files,
/// and the rotation plan needs a canonical form.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's text as written, so integers survive exactly.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(l), .bool(r)): l == r
        case let (.number(l), .number(r)): l == r
        case let (.string(l), .string(r)): l == r
        case let (.array(l), .array(r)): l == r
        case let (.object(l), .object(r)): l.count == r.count && zip(l, r).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    /// The value of `key` in an object, if this is one and it has the key.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }
}
