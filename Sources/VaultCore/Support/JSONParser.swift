// Reading our strict JSON: one parser, bounded by its input.

extension JSONValue {
    /// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 64
    /// How many fields an object may have before the parser keeps their names in a set to find
    /// a repeated one (below, it looks back through them).
    static let namesCompared = 16

    /// Parses one JSON text (UTF-8). Errors are ``VaultError/Code/malformedDocument`` with the
    /// byte offset; `what` names the input. `quotingNames` false: an error never quotes the
    /// input's text (a repeated field's name), for an input that carries a key, which is not
    /// known until it is parsed (a hostile review: a device link's repeated field named by 40 of
    /// its key's hex digits).
    public init(parsing bytes: [UInt8], what: String = "the JSON", quotingNames: Bool = true) throws {
        self = try bytes.withUnsafeBufferPointer { try JSONValue(parsing: UnsafeRawBufferPointer($0), what: what, quotingNames: quotingNames) }
    }

    /// The same, of bytes where they are: a vault's plaintext is parsed in the protected memory
    /// it was decrypted into, not from a copy in the heap that nothing zeroes.
    public init(parsing bytes: UnsafeRawBufferPointer, what: String = "the JSON", quotingNames: Bool = true) throws {
        var parser = JSONParser(bytes: bytes.assumingMemoryBound(to: UInt8.self), what: what, quotingNames: quotingNames)
        self = try parser.parseDocument()
    }
}

private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let what: String
    let quotingNames: Bool
    var index = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, what: String, quotingNames: Bool) {
        self.bytes = bytes
        self.what = what
        self.quotingNames = quotingNames
    }

    /// A repeated field, named when the input's text may be quoted.
    func duplicate(_ key: String) -> VaultError {
        failure(quotingNames ? "duplicate field \"\(key)\"" : "duplicate field")
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
                guard !entries.contains(where: { $0.key == key }) else { throw duplicate(key) }
            } else {
                if seen.isEmpty { seen = Set(entries.map(\.key)) }
                guard seen.insert(key).inserted else { throw duplicate(key) }
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
        return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    mutating func parseString() throws -> String {
        index += 1  // opening quote
        // Most strings have no escape: read them in one go (scripts/bench's profile of `open`).
        let start = index
        let run = ByteScan.stringRun(UnsafeRawBufferPointer(bytes), from: start)
        index = run.end
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            index += 1
            // ASCII is valid UTF-8 as it is: copied without the generic validation, which was a
            // tenth of a batch migration's parse (issue 29).
            if !run.nonASCII {
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
            }
            guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
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
