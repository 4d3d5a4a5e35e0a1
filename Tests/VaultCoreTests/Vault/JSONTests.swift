import Testing
@testable import VaultCore

@Suite struct JSONTests {
    func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

    @Test func roundTripsWithOrderAndEscapes() throws {
        let text = #"{"z":1,"a":[true,false,null,-0.5e3,"é\n\"\\\u0001 😀"],"m":{}}"#
        let value = try parse(text)
        #expect(String(decoding: value.serialized(pretty: false), as: UTF8.self) == #"{"z":1,"a":[true,false,null,-0.5e3,"é\n\"\\\u0001 😀"],"m":{}}"#)
        #expect(try parse(String(decoding: value.serialized(), as: UTF8.self)) == value)
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
    }

    /// Pretty output indents two spaces a level at every depth: within the indentation the
    /// writer copies (the parser's deepest nesting) and past it (a value built, not parsed).
    @Test(arguments: [1, 2, JSONValue.maximumDepth, JSONValue.maximumDepth + 1, 100])
    func prettyOutputIndentsTwoSpacesALevelAtAnyDepth(depth: Int) throws {
        var value = JSONValue.array([.int(depth), .null])
        for level in 1..<depth { value = level.isMultiple(of: 2) ? .array([value]) : .object([("k", value)]) }
        let lines = String(decoding: value.serialized(), as: UTF8.self).split(separator: "\n")
        let deepest = try #require(lines.first { $0.hasSuffix("\(depth),") })
        #expect(deepest == Substring(String(repeating: " ", count: 2 * depth) + "\(depth),"))
        for line in lines {
            let indent = line.prefix { $0 == " " }.count
            #expect(indent.isMultiple(of: 2) && indent <= 2 * depth && line.dropFirst(indent).first != " ")
        }
        if depth <= JSONValue.maximumDepth {
            #expect(try JSONValue(parsing: value.serialized()) == value)
        }
    }

    /// JSON for display (`reported()`) writes every character the display rule escapes as a
    /// `\u` escape, a pair past U+FFFF, and is the same value to a JSON reader; ASCII and
    /// every other character are the serializer's bytes (a hostile trial: `--json` reports
    /// passed U+2028, U+202E and zero-width characters raw to the terminal).
    @Test func reportedJSONEscapesWhatTheDisplayRuleEscapesAndReadsBackTheSame() throws {
        var generator = SystemRandomNumberGenerator()
        let hostile: [Unicode.Scalar] = ["\u{7f}", "\u{85}", "\u{ad}", "\u{200b}", "\u{200e}", "\u{2028}", "\u{2029}", "\u{202e}", "\u{2066}",
                                         "\u{feff}", "\u{3164}", "\u{e0041}", "\u{fe0f}", "\u{1d173}"]
        let plain: [Unicode.Scalar] = ["a", "é", "ß", "😀", "\u{4e2d}", "\u{301}", " ", "\"", "\\", "\n", "\u{1}"]
        for _ in 0..<200 {
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                text.append(Bool.random(using: &generator) ? hostile.randomElement(using: &generator)! : plain.randomElement(using: &generator)!)
            }
            let value = JSONValue.object([(String(text), .array([.string(String(text)), .int(1)]))])
            let shown = value.reported(pretty: Bool.random(using: &generator))
            #expect(try JSONValue(parsing: shown) == value)
            let scalars = String(decoding: shown, as: UTF8.self).unicodeScalars
            #expect(!scalars.contains(where: { DisplayRule.escapes($0) && $0.value >= 0x20 }), "\(String(decoding: shown, as: UTF8.self))")
        }
        let ascii = JSONValue.object([("name", .string("Kitchen iPad \"2\"\n"))])
        #expect(ascii.reported() == ascii.serialized())
        #expect(String(decoding: JSONValue.string("a\u{202e}b\u{e0041}é").reported(pretty: false), as: UTF8.self) == #""a\u202eb\udb40\udc41é""#)
        // Combining marks past the fourth on one letter, as text output escapes them.
        let stacked = JSONValue.string("Z" + String(repeating: "\u{305}", count: 6))
        #expect(String(decoding: stacked.reported(pretty: false), as: UTF8.self) == "\"Z" + String(repeating: "\u{305}", count: 4) + #"\u0305\u0305""#)
        #expect(try JSONValue(parsing: stacked.reported()) == stacked)
    }

    /// An object written in pieces, its one array handed an element at a time (a registry
    /// batch's devices), is the same bytes as the whole value serialized, pretty or compact,
    /// with no element, one, or more than a piece holds.
    @Test(arguments: [0, 1, 3, 2000]) func anObjectWrittenInPiecesIsTheWholeValuesBytes(count: Int) throws {
        let elements = (0..<count).map { JSONValue.object([("userDid", .string("did:plc:u\($0)")), ("deviceId", .string("d\($0)\n\u{1}"))]) }
        let before: [(key: String, value: JSONValue)] = [("batchId", .null), ("devices", .int(count)), ("nested", .object([("a", .array([.bool(true)]))]))]
        let after: [(key: String, value: JSONValue)] = [("refusals", .array([])), ("last", .string("é"))]
        for pretty in [true, false] {
            let whole = JSONValue.object(before + [("batchDevices", .array(elements))] + after).serialized(pretty: pretty)
            var pieces: [[UInt8]] = []
            try JSONValue.writeObject(before + [("batchDevices", .null)] + after, streaming: "batchDevices", pretty: pretty,
                                      elements: { element in for value in elements { try element(value) } }, to: { pieces.append($0) })
            #expect(Array(pieces.joined()) == whole)
            #expect(count < 1000 || pieces.count > 1, "a long array is written in more than one piece")
        }
    }

    @Test(arguments: [
        #"{"a":1,"a":2}"#, #"{"a":1,}"#, "[1,]", "01", "1.", "-", #""\ud83d""#, #""\x""#, "\"a\u{01}\"", "{} {}",
        "[" + String(repeating: "[", count: 70) + String(repeating: "]", count: 71), "tru", #"{"a" 1}"#, "\u{FF}",
    ])
    func rejectsInvalidJSON(_ text: String) {
        #expect(throws: VaultError(.malformedDocument, "")) { try parse(text) }
    }

    /// Repeated names are found by looking back in small objects and by a set in large ones:
    /// both ways refuse a repeat, early or late, and keep every distinct name.
    @Test func repeatedNamesAreRefusedInObjectsOfAnySize() throws {
        func object(_ names: [String]) -> String { "{" + names.map { #""\#($0)":0"# }.joined(separator: ",") + "}" }
        let many = (0..<40).map { "f\($0)" }
        for size in [2, JSONValue.namesCompared, JSONValue.namesCompared + 1, 40] {
            let names = Array(many.prefix(size))
            guard case .object(let entries) = try parse(object(names)) else { Issue.record("not an object"); continue }
            #expect(entries.map(\.key) == names)
            for (repeated, at) in [(0, size), (size - 1, size), (0, 1)] {
                var withRepeat = names
                withRepeat.insert(names[repeated], at: at)
                #expect(throws: VaultError(.malformedDocument, "")) { try parse(object(withRepeat)) }
            }
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: VaultError(.malformedDocument, "")) { try JSONValue(parsing: [0x22, 0xc3, 0x28, 0x22]) }
    }

    /// Strings without escapes are read in one piece, ASCII ones without the UTF-8 validator
    /// (issue 29): every kind of byte run still reads as before, and a bad one is still refused.
    @Test func stringsWithoutEscapesReadAsTheyAreAndBadUTF8IsStillRefused() throws {
        for text in ["", "plain ascii ~!", "é", "a😀b", "\u{7f}", "mixed é and ascii"] {
            let parsed = try JSONValue(parsing: [0x22] + Array(text.utf8) + [0x22])
            #expect(parsed == .string(text))
        }
        for bad: [UInt8] in [[0x80], [0x61, 0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x61, 0x62, 0xff]] {
            #expect(throws: VaultError(.malformedDocument, "")) { try JSONValue(parsing: [0x22] + bad + [0x22]) }
        }
    }
}
