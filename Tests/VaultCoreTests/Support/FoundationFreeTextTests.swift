import Foundation
import Testing
@testable import VaultCore

/// The text operations that replaced Foundation's NSString ones (issue 39: no ICU in any tool)
/// give what Foundation gives, checked against Foundation itself (the tests may link it).
@Suite struct FoundationFreeTextTests {
    /// Every Unicode scalar: trimmed away alone exactly when Foundation's set holds it.
    @Test func trimmingMatchesFoundationsSetsOnEveryScalar() {
        var differences: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(Character(scalar))
            if text.trimmingBlanks().isEmpty != CharacterSet.whitespaces.contains(scalar) { differences.append("blank U+\(String(value, radix: 16))") }
            if text.trimmingWhiteSpace().isEmpty != CharacterSet.whitespacesAndNewlines.contains(scalar) { differences.append("white U+\(String(value, radix: 16))") }
        }
        #expect(differences.isEmpty, "\(differences.prefix(20))")
    }

    /// Seeded strings of white space, combining marks, letters and emoji: the same result as
    /// Foundation's trimmingCharacters, scalar for scalar.
    @Test func trimmingMatchesFoundationOnRandomStrings() {
        let alphabet: [Unicode.Scalar] = [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{1680}", "\u{2003}", "\u{200B}",
                                          "\u{2028}", "\u{2029}", "\u{202F}", "\u{3000}", "\u{FEFF}", "\u{301}", "\u{20DD}", "a", "é", "#", "=",
                                          "\u{1F600}", "\u{1F3FB}", "\u{200D}"]
        var random = SeededGenerator(source: SeededRandom(seed: 39))
        for _ in 0..<3000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...8, using: &random) { scalars.append(alphabet.randomElement(using: &random)!) }
            let text = String(scalars)
            #expect(text.trimmingBlanks().unicodeScalars.elementsEqual(text.trimmingCharacters(in: .whitespaces).unicodeScalars), "\(text.debugDescription)")
            #expect(text.trimmingWhiteSpace().unicodeScalars.elementsEqual(text.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars),
                    "\(text.debugDescription)")
        }
    }

    @Test func fixedDecimalsMatchStringFormat() {
        var random = SeededGenerator(source: SeededRandom(seed: 7))
        let edges: [Double] = [0, -0.0, 0.05, 0.15, 0.25, 0.35, 2.675, 1.005, 9.95, 99.95, 0.049999, 1e20, 123456789.125, -1.25, .infinity, -.infinity, .nan]
        let values = edges + (0..<5000).map { _ in Double.random(in: 0..<1000, using: &random) } + (0..<2000).map { _ in Double(Int.random(in: 0..<100_000, using: &random)) / 1000 }
        for value in values {
            #expect(value.fixed(decimals: 1) == String(format: "%.1f", value))
            #expect(value.fixed(decimals: 2) == String(format: "%.2f", value))
        }
        #expect(1e300.fixed(decimals: 2) == String(format: "%.2f", 1e300), "past the first buffer")
    }

    @Test func zeroPaddedMatchesStringFormat() {
        for value in [0, 1, 9, 10, 99, 100, 999, 1000, 2026, 12345] {
            #expect(zeroPadded(value, width: 4) == String(format: "%04d", value))
            #expect(zeroPadded(value, width: 2) == String(format: "%02d", value))
        }
    }

    /// libunistring's NFKC against Foundation's, on seeded strings of scalars assigned by Unicode
    /// 14 (libunistring 1.0's tables; ICU's are newer): compatibility forms, combining marks in
    /// every order, the longest expansions. Hangul is left to the next test: Foundation leaves
    /// some conjoining jamo uncomposed where Unicode composes them.
    @Test func nfkcMatchesFoundationOnRandomStrings() throws {
        let focused: [ClosedRange<UInt32>] = [0x00...0x24F, 0x300...0x36F, 0x1E00...0x1EFF, 0x2000...0x24FF, 0x3000...0x33FF,
                                              0xF900...0xFAFF, 0xFB00...0xFDFF, 0xFE30...0xFFEF, 0x1D400...0x1D7FF, 0x1F100...0x1F2FF]
        var random = SeededGenerator(source: SeededRandom(seed: 49))
        func scalar() -> Unicode.Scalar {
            while true {
                let value = Bool.random(using: &random) ? UInt32.random(in: focused.randomElement(using: &random)!, using: &random)
                                                         : UInt32.random(in: 0...0x2FFFF, using: &random)
                let hangul: [ClosedRange<UInt32>] = [0x1100...0x11FF, 0x3130...0x318F, 0xA960...0xA97F, 0xAC00...0xD7FF, 0xFFA0...0xFFDC]
                guard !hangul.contains(where: { $0.contains(value) }), let scalar = Unicode.Scalar(value), let age = scalar.properties.age, age.major < 14 || (age.major == 14 && age.minor == 0) else { continue }
                return scalar
            }
        }
        for _ in 0..<4000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...12, using: &random) { scalars.append(scalar()) }
            let text = String(scalars)
            let ours = try Array(text.utf8).withUnsafeBytes { try UnicodeNormalization.nfkc($0) }
            #expect(ours == Array(text.precomposedStringWithCompatibilityMapping.utf8), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    /// Hangul as Unicode composes it (and Python's unicodedata, the interop test's reference):
    /// a leading and a vowel jamo are one syllable, an LV syllable and a trailing jamo too, and
    /// compatibility jamo are conjoining ones first. Foundation left the first two apart.
    @Test func nfkcComposesHangulAsUnicodeDoes() throws {
        func nfkc(_ text: String) throws -> String { String(decoding: try Array(text.utf8).withUnsafeBytes { try UnicodeNormalization.nfkc($0) }, as: UTF8.self) }
        #expect(try nfkc("\u{110F}\u{1173}").unicodeScalars.map(\.value) == [0xD06C])
        #expect(try nfkc("\u{CC28}\u{11C0}").unicodeScalars.map(\.value) == [0xCC41])
        #expect(try nfkc("\u{314B}\u{3161}").unicodeScalars.map(\.value) == [0xD06C])
        #expect(try nfkc("\u{FFBB}\u{FFDA}").unicodeScalars.map(\.value) == [0xD06C])
    }

    /// Invalid UTF-8 is repaired as String(decoding:) repairs it, then normalised; the
    /// longest expansion (U+FDFA, 18 letters) outgrows the first buffer.
    @Test func nfkcOfInvalidAndExpandingText() throws {
        func nfkc(_ bytes: [UInt8]) throws -> [UInt8] { try bytes.withUnsafeBytes { try UnicodeNormalization.nfkc($0) } }
        for bytes: [UInt8] in [[0xff, 0x41], [0xe2, 0x84], [0xc3, 0x28, 0xef, 0xac, 0x81], [0xed, 0xa0, 0x80]] {
            #expect(try nfkc(bytes) == Array(String(decoding: bytes, as: UTF8.self).precomposedStringWithCompatibilityMapping.utf8))
        }
        let long = String(repeating: "\u{FDFA}", count: 40)
        #expect(try nfkc(Array(long.utf8)) == Array(long.precomposedStringWithCompatibilityMapping.utf8))
        #expect(try nfkc([]) == [])
        #expect(try nfkc(Array("ﬁ①Ａ".utf8)) == Array("fi1A".utf8))
    }

    /// libunistring's failure (ENOMEM, the one it has once the input is valid UTF-8, which
    /// cannot be provoked without starving the whole test process) is its own code, naming the
    /// library, not a file's `io`.
    @Test func aNormalizationFailureIsLibunistrings() {
        let error = VaultError.normalizationFailed(ENOMEM)
        #expect(error.code == .libraryFailure && error.code.category == .operational)
        #expect(error.reason == "libunistring could not normalise the passphrase (NFKC): cannot allocate memory")
    }
}
