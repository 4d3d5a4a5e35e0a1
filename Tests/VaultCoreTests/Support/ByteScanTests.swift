import Testing
@testable import VaultCore

/// The word-at-a-time scans find what a byte-at-a-time reading finds: every byte value at every
/// place around the eight-byte words, among plain bytes and among bytes past ASCII, and random
/// text of every length up to a few words (ByteScan).
@Suite struct ByteScanTests {
    private static func stringRunByBytes(_ bytes: [UInt8], from start: Int) -> (end: Int, nonASCII: Bool) {
        var index = start
        while index < bytes.count, bytes[index] != 0x22, bytes[index] != 0x5c, bytes[index] >= 0x20 { index += 1 }
        return (index, bytes[start..<index].contains { $0 >= 0x80 })
    }

    private static func firstPastASCIIByBytes(_ bytes: [UInt8], from start: Int) -> Int {
        bytes[start...].firstIndex { $0 >= 0x7f } ?? bytes.count
    }

    private static func check(_ bytes: [UInt8], from start: Int) {
        let run = bytes.withUnsafeBytes { ByteScan.stringRun($0, from: start) }
        let expected = stringRunByBytes(bytes, from: start)
        #expect(run.end == expected.end && run.nonASCII == expected.nonASCII, "stringRun of \(bytes) from \(start)")
        #expect(bytes.withUnsafeBytes { ByteScan.firstPastASCII($0, from: start) } == firstPastASCIIByBytes(bytes, from: start),
                "firstPastASCII of \(bytes) from \(start)")
    }

    @Test func everyByteAtEveryPlaceIsFound() {
        for filler in [UInt8(ascii: "a"), 0x7e, 0xc3, 0xff, 0x20, 0x80] {
            for place in 0..<19 {
                for value in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: filler, count: 19)
                    bytes[place] = value
                    for start in [0, 1, 7, 8] where start <= bytes.count { Self.check(bytes, from: start) }
                }
            }
        }
    }

    @Test func lowercaseHexIsEveryByteADigitOrAToF() {
        let isHex: (UInt8) -> Bool = { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        for length in [1, 7, 8, 9, 16, 64, 65] {
            for place in 0..<length {
                for value in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "f"), count: length)
                    bytes[place] = value
                    #expect(bytes.withUnsafeBytes(ByteScan.isLowercaseHex) == isHex(value), "\(value) at \(place) of \(length)")
                }
            }
        }
        #expect([UInt8]().withUnsafeBytes(ByteScan.isLowercaseHex))
        #expect(Hex.isLowercase(String(repeating: "0123456789abcdef", count: 4), byteCount: 32))
        #expect(!Hex.isLowercase(String(repeating: "0123456789abcdeF", count: 4), byteCount: 32))
        #expect(!Hex.isLowercase(String(repeating: "0", count: 63), byteCount: 32))
    }

    @Test func randomTextOfEveryLength() {
        var generator = SystemRandomNumberGenerator()
        // Mostly plain text, with the bytes that stop a scan now and then.
        let rare: [UInt8] = [0x22, 0x5c, 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xa9, 0xff, 0x20, 0x21, 0x5b, 0x5d]
        for length in 0..<80 {
            for _ in 0..<200 {
                let bytes = (0..<length).map { _ in
                    Int.random(in: 0..<12, using: &generator) == 0 ? rare.randomElement(using: &generator)!
                        : UInt8.random(in: 0x23...0x5b, using: &generator)
                }
                Self.check(bytes, from: length == 0 ? 0 : Int.random(in: 0...length, using: &generator))
            }
        }
    }

    /// The parser and the writer that use them read and write strings as before: every escape,
    /// a character past ASCII at a word's edge, a string ending at one.
    @Test func stringsReadAndWrittenAroundTheWords() throws {
        let texts = ["", "a", "1234567", "12345678", "123456789", "abcdefg\u{e9}", "abcdefgh\u{e9}", "quote\"in", "back\\slash",
                     "line\nbreak", "tab\there", "\u{1}\u{1f}", "\u{7f}del", String(repeating: "f", count: 64), "zo\u{eb} \u{1f600}"]
        for text in texts {
            var written: [UInt8] = []
            JSONValue.writeString(text, to: &written)
            #expect(try JSONValue(parsing: written) == .string(text), "\(text.debugDescription)")
            #expect(JSONValue.string(text).serialized(pretty: false) == written, "\(text.debugDescription)")
        }
        #expect(throws: VaultError.self) { try JSONValue(parsing: Array("\"12345678\u{1}\"".utf8)) }
        #expect(throws: VaultError.self) { try JSONValue(parsing: [0x22, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xff, 0x22]) }
    }
}
