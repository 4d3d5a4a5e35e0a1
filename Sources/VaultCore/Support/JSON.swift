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

// MARK: - Reading

extension JSONValue {
    /// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 64
    /// How many fields an object may have before the parser keeps their names in a set to find
    /// a repeated one (below, it looks back through them).
    static let namesCompared = 16

    /// Parses one JSON text (UTF-8). Errors are ``VaultError/Code/malformedDocument`` with the
    /// byte offset; `what` names the input.
    public init(parsing bytes: [UInt8], what: String = "the JSON") throws {
        var parser = JSONParser(bytes: bytes, what: what)
        self = try parser.parseDocument()
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    let what: String
    var index = 0
    var depth = 0

    init(bytes: [UInt8], what: String) {
        self.bytes = bytes
        self.what = what
    }

    mutating func parseDocument() throws -> JSONValue {
        if bytes.starts(with: [0xef, 0xbb, 0xbf]) { index = 3 }  // tolerate a UTF-8 byte order mark
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the end of the JSON value") }
        return value
    }

    func failure(_ reason: String) -> VaultError {
        VaultError(.malformedDocument, "\(what) is not valid JSON: \(reason) at byte \(index)")
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0a, 0x0d: index += 1
            default: return
            }
        }
    }

    mutating func expect(_ literal: String, _ value: JSONValue) throws -> JSONValue {
        let chars = Array(literal.utf8)
        guard bytes.count - index >= chars.count, Array(bytes[index..<index + chars.count]) == chars else {
            throw failure("unexpected character")
        }
        index += chars.count
        return value
    }

    mutating func parseValue() throws -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    mutating func enter() throws {
        depth += 1
        guard depth <= JSONValue.maximumDepth else { throw failure("nesting deeper than \(JSONValue.maximumDepth) levels") }
    }

    mutating func parseObject() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var entries: [(key: String, value: JSONValue)] = []
        // Repeated names are found by looking back while the object is small, which is cheaper
        // than hashing every name (a registry import parses millions of small objects), and by
        // a set once it is large, so a hostile object of many fields stays linear.
        var seen = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(entries)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a field name") }
            let key = try parseString()
            if entries.count < JSONValue.namesCompared {
                guard !entries.contains(where: { $0.key == key }) else { throw failure("duplicate field \"\(key)\"") }
            } else {
                if seen.isEmpty { seen = Set(entries.map(\.key)) }
                guard seen.insert(key).inserted else { throw failure("duplicate field \"\(key)\"") }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            entries.append((key, try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(entries) }
            throw failure("expected ',' or '}'")
        }
    }

    mutating func parseArray() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw failure("expected ',' or ']'")
        }
    }

    mutating func parseNumber() throws -> JSONValue {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw failure("unexpected end of input") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw failure("expected a digit")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("expected a digit after '.'") }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("expected a digit in the exponent") }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    mutating func parseString() throws -> String {
        index += 1  // opening quote
        // Most strings have no escape: read them in one go (scripts/bench's profile of `open`).
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 {
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            index += 1
            guard let text = String(validating: bytes[start..<index - 1], as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
            return text
        }
        var out = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let char = bytes[index]
            index += 1
            switch char {
            case UInt8(ascii: "\""):
                guard let text = String(validating: out, as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw failure("unterminated string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0c)
                case UInt8(ascii: "n"): out.append(0x0a)
                case UInt8(ascii: "r"): out.append(0x0d)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): out.append(contentsOf: try parseUnicodeEscape())
                default: throw failure("invalid escape sequence")
                }
            case 0x00..<0x20:
                throw failure("a control character inside a string")
            default:
                out.append(char)
            }
        }
    }

    mutating func hex4() throws -> UInt32 {
        guard bytes.count - index >= 4, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw failure("invalid \\u escape")
        }
        index += 4
        return value
    }

    mutating func parseUnicodeEscape() throws -> [UInt8] {
        var scalar = try hex4()
        if (0xd800..<0xdc00).contains(scalar) {
            guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("unpaired surrogate in \\u escape")
            }
            index += 2
            let low = try hex4()
            guard (0xdc00..<0xe000).contains(low) else { throw failure("unpaired surrogate in \\u escape") }
            scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
        } else if (0xdc00..<0xe000).contains(scalar) {
            throw failure("unpaired surrogate in \\u escape")
        }
        return Array(String(Character(Unicode.Scalar(scalar)!)).utf8)
    }
}

// MARK: - Writing

extension JSONValue {
    /// UTF-8 JSON. Pretty output indents by two spaces and ends with a newline; compact output
    /// has no whitespace at all. Object keys keep their order.
    public func serialized(pretty: Bool = true) -> [UInt8] {
        var out = [UInt8]()
        write(to: &out, pretty: pretty, indent: 0)
        if pretty { out.append(0x0a) }
        return out
    }

    private func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
        func newline(_ level: Int) {
            guard pretty else { return }
            out.append(0x0a)
            for _ in 0..<level * 2 { out.append(0x20) }
        }
        switch self {
        case .null: out.append(contentsOf: Array("null".utf8))
        case .bool(let value): out.append(contentsOf: Array((value ? "true" : "false").utf8))
        case .number(let text): out.append(contentsOf: Array(text.utf8))
        case .string(let text): Self.writeString(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                element.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if !elements.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let entries):
            out.append(UInt8(ascii: "{"))
            for (position, entry) in entries.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                Self.writeString(entry.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(0x20) }
                entry.value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if !entries.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeString(utf8: $0, to: &out) }
    }

    /// A string given as its UTF-8 bytes, quoted and escaped as ``serialized(pretty:)`` writes
    /// strings: for JSON built from bytes that are not a String (a registry batch's operations).
    package static func writeString<Bytes: Collection<UInt8>>(utf8 bytes: Bytes, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5c, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5c, 0x5c])
            case 0x0a: out.append(contentsOf: [0x5c, UInt8(ascii: "n")])
            case 0x0d: out.append(contentsOf: [0x5c, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5c, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5c, UInt8(ascii: "b")])
            case 0x0c: out.append(contentsOf: [0x5c, UInt8(ascii: "f")])
            case 0x00..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

// MARK: - Canonical form

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

// MARK: - Typed access with exact error paths

/// One JSON object being read into a model type. Every accessor names the failing field by its
/// full path (`devices[2].status`), and ``finish()`` refuses fields nobody asked for.
package struct JSONObjectReader {
    package let path: String
    private let entries: [(key: String, value: JSONValue)]
    /// Which entries an accessor asked for, by position (no hashing of names: see parseObject).
    private var consumed: [Bool]

    package init(_ value: JSONValue, path: String) throws {
        guard case .object(let entries) = value else {
            throw VaultError(.malformedDocument, "\(path.isEmpty ? "the document" : path) should be a JSON object")
        }
        self.path = path
        self.entries = entries
        consumed = Array(repeating: false, count: entries.count)
    }

    package func fieldPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    package func invalid(_ key: String, _ reason: String) -> VaultError {
        VaultError(.malformedDocument, "\(fieldPath(key)) \(reason)")
    }

    package mutating func optional(_ key: String) -> JSONValue? {
        guard let position = entries.firstIndex(where: { $0.key == key }) else { return nil }
        consumed[position] = true
        let value = entries[position].value
        return value == .null ? nil : value
    }

    package mutating func required(_ key: String) throws -> JSONValue {
        guard let value = optional(key) else { throw invalid(key, "is missing") }
        return value
    }

    package mutating func has(_ key: String) -> Bool { entries.contains { $0.key == key } }

    package mutating func string(_ key: String) throws -> String {
        guard case .string(let text) = try required(key) else { throw invalid(key, "should be a string") }
        return text
    }

    package mutating func optionalString(_ key: String) throws -> String? {
        guard let value = optional(key) else { return nil }
        guard case .string(let text) = value else { throw invalid(key, "should be a string") }
        return text
    }

    package mutating func bool(_ key: String) throws -> Bool {
        guard case .bool(let flag) = try required(key) else { throw invalid(key, "should be true or false") }
        return flag
    }

    package mutating func int(_ key: String) throws -> Int {
        guard case .number(let text) = try required(key), let number = Int(text) else {
            throw invalid(key, "should be a whole number")
        }
        return number
    }

    package mutating func optionalInt(_ key: String) throws -> Int? {
        guard let value = optional(key) else { return nil }
        guard case .number(let text) = value, let number = Int(text) else { throw invalid(key, "should be a whole number") }
        return number
    }

    package mutating func timestamp(_ key: String) throws -> Timestamp {
        guard let time = Timestamp(rfc3339: try string(key)) else {
            throw invalid(key, "should be an RFC 3339 time such as 2025-11-19T10:00:00Z")
        }
        return time
    }

    package mutating func array(_ key: String) throws -> [(path: String, value: JSONValue)] {
        guard case .array(let elements) = try required(key) else { throw invalid(key, "should be an array") }
        // Concatenation, not interpolation: interpolating an Int costs dynamic casts, and this
        // runs for every element of every array (scripts/bench's profile of `open`).
        let prefix = fieldPath(key) + "["
        return elements.enumerated().map { (prefix + String($0.offset) + "]", $0.element) }
    }

    package mutating func strings(_ key: String) throws -> [String] {
        guard case .array(let elements) = try required(key) else { throw invalid(key, "should be an array") }
        return try elements.enumerated().map { position, element in
            guard case .string(let text) = element else {
                throw VaultError(.malformedDocument, "\(fieldPath(key))[\(position)] should be a string")
            }
            return text
        }
    }

    /// Fails on any field that no accessor asked for: nothing unknown is silently dropped.
    package func finish() throws {
        if let unknown = consumed.firstIndex(of: false) {
            throw invalid(entries[unknown].key, "is not a field of this schema")
        }
    }
}
