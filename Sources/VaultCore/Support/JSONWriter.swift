// Writing JSON: our one serialization, pretty or compact.

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
            // Spaces copied from a static string (no reference counting): a space at a time, or a
            // repeated element, was a check and an append each (a profile of the 480 KB `open`).
            let width = level * 2
            if width <= Self.spaces.utf8CodeUnitCount {
                Self.spaces.withUTF8Buffer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<width])) }
            } else {
                for _ in 0..<width { out.append(0x20) }
            }
        }
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): out.append(contentsOf: text.utf8)
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

    /// An object written in pieces to `emit`, the value of its entry `streamedKey` an array whose
    /// elements `elements` hands its argument one at a time (that entry's own value is not
    /// read): JSON as large as a registry's batch, never held whole. The bytes are those
    /// ``serialized(pretty:)`` writes for the whole object.
    public static func writeObject(_ entries: [(key: String, value: JSONValue)], streaming streamedKey: String, pretty: Bool = true,
                                   elements: ((JSONValue) throws -> Void) throws -> Void, to emit: ([UInt8]) throws -> Void) throws {
        try withoutActuallyEscaping(emit) { try writeObject(entries, streaming: streamedKey, pretty: pretty, elements: elements, escapingEmit: $0) }
    }

    /// ``writeObject(_:streaming:pretty:elements:to:)`` as a report: what ``reported(pretty:)``
    /// does to a whole value (no string holding a key, invisible characters escaped) done to
    /// each piece, so a report too large to hold is held to the same rule.
    public static func writeReport(_ entries: [(key: String, value: JSONValue)], streaming streamedKey: String, pretty: Bool = true,
                                   elements: ((JSONValue) throws -> Void) throws -> Void, to emit: ([UInt8]) throws -> Void) throws {
        try withoutActuallyEscaping(elements) { elements in
            try writeObject(entries.map { (key: withheld($0.key), value: $0.value.withholdingKeys()) }, streaming: streamedKey, pretty: pretty,
                            elements: { element in try withoutActuallyEscaping(element) { element in try elements { try element($0.withholdingKeys()) } } },
                            to: { try emit(escapingInvisibles($0)) })
        }
    }

    private static func writeObject(_ entries: [(key: String, value: JSONValue)], streaming streamedKey: String, pretty: Bool,
                                    elements: ((JSONValue) throws -> Void) throws -> Void, escapingEmit emit: @escaping ([UInt8]) throws -> Void) throws {
        var out: [UInt8] = []
        func newline(_ level: Int) {
            guard pretty else { return }
            out.append(0x0a)
            for _ in 0..<level * 2 { out.append(0x20) }
        }
        out.append(UInt8(ascii: "{"))
        for (position, entry) in entries.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            newline(1)
            writeString(entry.key, to: &out)
            out.append(UInt8(ascii: ":"))
            if pretty { out.append(0x20) }
            guard entry.key == streamedKey else {
                entry.value.write(to: &out, pretty: pretty, indent: 1)
                continue
            }
            out.append(UInt8(ascii: "["))
            var count = 0
            try elements { element in
                if count > 0 { out.append(UInt8(ascii: ",")) }
                newline(2)
                element.write(to: &out, pretty: pretty, indent: 2)
                count += 1
                if out.count >= 1 << 16 {
                    try emit(out)
                    out.removeAll(keepingCapacity: true)
                }
            }
            if count > 0 { newline(1) }
            out.append(UInt8(ascii: "]"))
        }
        if !entries.isEmpty { newline(0) }
        out.append(UInt8(ascii: "}"))
        if pretty { out.append(0x0a) }
        try emit(out)
    }

    /// JSON for a person or a script to read (a report, operations, a revealed document): the
    /// bytes ``serialized(pretty:)`` writes, with every character ``DisplayRule`` escapes written
    /// as `\uXXXX` (a hostile trial: `--json` reports passed U+2028, U+202E and zero-width
    /// characters raw to the terminal where the text report escaped them). The same value to any
    /// JSON reader; what is signed or hashed (a plan, a household log's events, the registry's
    /// chain, a sealed document) stays ``serialized(pretty:)``'s, as its format says.
    ///
    /// A report shows no key: a string that holds an `nsec1…` or `ncryptsec1…` (a file or a
    /// device named by the key it holds) is written as what stands for a withheld quote
    /// (``QuotedInput``), as the text report's renderer shows it (a hostile trial: `census
    /// --json`, `check --json` and `diff --json` printed what their text withheld). Output that
    /// is a secret by design (a sheet's layout) is ``revealed(pretty:)``.
    public func reported(pretty: Bool = true) -> [UInt8] { JSONValue.escapingInvisibles(withholdingKeys().serialized(pretty: pretty)) }

    /// As ``reported(pretty:)`` but keeping every key: for an output that is the secret the
    /// user asked for, written where they said.
    public func revealed(pretty: Bool = true) -> [UInt8] { JSONValue.escapingInvisibles(serialized(pretty: pretty)) }

    /// MLS operations as JSON Lines, for the app to apply: each id as it is (an id the report
    /// rule withholds would be an operation on a group or device that is not there, which a
    /// trial found written with exit 0), invisible characters escaped. The one writer of every
    /// `--ops` file a command makes from operations.
    public static func operationLines(_ operations: [JSONValue]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(operations.count * 120)
        for operation in operations { bytes += operation.revealed(pretty: false) + [0x0a] }
        return bytes
    }

    /// The value with each string (and object key) that holds a bech32 key replaced.
    func withholdingKeys() -> JSONValue {
        let withheld = Self.withheld
        switch self {
        case .null, .bool, .number: return self
        case .string(let text): return .string(withheld(text))
        case .array(let elements): return .array(elements.map { $0.withholdingKeys() })
        case .object(let entries): return .object(entries.map { (key: withheld($0.key), value: $0.value.withholdingKeys()) })
        }
    }

    /// `text`, or what stands for it when it holds a bech32 key, or a key this run holds or a
    /// piece of one (``HeldSecrets``; a trial: a device named with the parent key's hex was
    /// reported so).
    private static func withheld(_ text: String) -> String {
        let holds = KeyText.holdsBech32Key(reading: text) || text.utf8.count >= HeldSecrets.shortestPiece && HeldSecrets.match(in: text.utf8) != nil
        return holds ? QuotedInput(text).description : text
    }

    /// JSON text with every character ``DisplayRule`` escapes written as `\uXXXX` (a pair of
    /// them past U+FFFF), and combining marks past the fourth on one letter as text output
    /// escapes them: such a character can only stand inside a string, where the escape means
    /// the same character. For JSON already written (a registry's stored operations).
    public static func escapingInvisibles(_ json: [UInt8]) -> [UInt8] {
        // Most output is ASCII without DEL: returned as it is.
        guard json.withUnsafeBytes({ ByteScan.firstPastASCII($0, from: 0) }) < json.count else { return json }
        var out: [UInt8] = []
        out.reserveCapacity(json.count + 32)
        func escape(_ unit: UInt32) {
            out.append(contentsOf: [0x5c, UInt8(ascii: "u")])
            for shift in stride(from: 12, through: 0, by: -4) { out.append(hexDigits[Int((unit >> UInt32(shift)) & 0xf)]) }
        }
        // What is kept is copied a run at a time: a character at a time was half again the time
        // of writing a large document.
        var copied = 0, index = 0, marks = 0
        while index < json.count {
            let lead = json[index]
            guard lead >= 0x7f else {
                marks = 0
                index = json.withUnsafeBytes { ByteScan.firstPastASCII($0, from: index + 1) }
                continue
            }
            let length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
            guard index + length <= json.count else { break }
            var value = length == 1 ? UInt32(lead) : UInt32(lead) & (0xff >> (length + 1))
            var valid = lead == 0x7f || length > 1
            for offset in stride(from: 1, to: length, by: 1) {
                let continuation = json[index + offset]
                valid = valid && continuation & 0xc0 == 0x80
                value = value << 6 | UInt32(continuation & 0x3f)
            }
            if valid, let scalar = Unicode.Scalar(value) {
                let isMark = [.nonspacingMark, .enclosingMark].contains(scalar.properties.generalCategory)
                marks = isMark ? marks + 1 : 0
                if DisplayRule.escapes(scalar) || marks > 4 {
                    out.append(contentsOf: json[copied..<index])
                    if value > 0xffff {
                        escape(0xd800 + ((value - 0x10000) >> 10))
                        escape(0xdc00 + ((value - 0x10000) & 0x3ff))
                    } else {
                        escape(value)
                    }
                    copied = index + length
                }
            } else {
                marks = 0
            }
            index += length
        }
        out.append(contentsOf: json[copied...])
        return out
    }

    /// A piece of JSON text handed on as ``escapingInvisibles(_:)`` writes it (a stream of
    /// stored operations, a piece at a time).
    public static func escapingInvisibles(_ piece: UnsafeRawBufferPointer, to sink: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard ByteScan.firstPastASCII(piece, from: 0) < piece.count else { return try sink(piece) }
        try escapingInvisibles(Array(piece)).withUnsafeBytes { try sink($0) }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    /// Indentation enough for the parser's deepest nesting (``maximumDepth``, two a level).
    private static let spaces: StaticString = "                                                                                                                                  "

    /// A string quoted and escaped as ``serialized(pretty:)`` writes it, appended to `out`: for
    /// JSON written a piece at a time without a value for each piece.
    package static func writeString(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeString(utf8: UnsafeRawBufferPointer($0), to: &out) }
    }

    /// A string given as its UTF-8 bytes, quoted and escaped as ``serialized(pretty:)`` writes
    /// strings: for JSON built from bytes that are not a String (a registry batch's operations).
    /// Bytes in a buffer, not any collection: a generic one is not specialized across the
    /// layers, and its bytes went one by one through protocol witnesses (a tenth of a large
    /// revocation's instructions).
    package static func writeString(utf8 bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if ByteScan.stringRun(bytes, from: 0).end == bytes.count {
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
