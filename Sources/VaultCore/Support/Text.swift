import Glibc

// The few text operations the suite took from Foundation's NSString, without Foundation (whose
// NSString brings ICU's 34 MB into every tool). Each matches what it replaces exactly; the tests
// compare them with Foundation's over every Unicode scalar.

extension StringProtocol {
    /// Without blanks at either end: Foundation's `CharacterSet.whitespaces` (spaces, tab and
    /// U+200B ZERO WIDTH SPACE), scalar by scalar as NSString trims.
    package func trimmingBlanks() -> String {
        trimmingScalars { $0.properties.isWhitespace && !isLineBreak($0) || $0.value == 0x200B }
    }

    /// Without white space or line breaks at either end: Foundation's
    /// `CharacterSet.whitespacesAndNewlines` (Unicode's White_Space and U+200B).
    package func trimmingWhiteSpace() -> String {
        trimmingScalars { $0.properties.isWhitespace || $0.value == 0x200B }
    }

    private func trimmingScalars(_ trimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !trimmed($0) }), let last = scalars.lastIndex(where: { !trimmed($0) }) else { return "" }
        // The kept scalars' bytes in one copy (UTF8View's indices are not rounded to characters,
        // as String's are): appended a scalar at a time, they were most of the time a
        // registry spent reading a 10,000-line --devices-file.
        return String(decoding: utf8[first..<scalars.index(after: last)], as: UTF8.self)
    }
}

/// The line breaks of Unicode's White_Space: LF, VT, FF, CR, NEL, LINE and PARAGRAPH SEPARATOR.
private func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
    (0x0A...0x0D).contains(scalar.value) || scalar.value == 0x85 || scalar.value == 0x2028 || scalar.value == 0x2029
}

/// `value` (0 or more) in decimal with at least `width` digits, zeros in front (`%0*d`).
package func zeroPadded(_ value: Int, width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

extension Double {
    /// The number with `decimals` digits after the point, rounded as printf's `%.Nf` rounds
    /// (and `String(format:)`, which it replaces): C's own formatting.
    package func fixed(decimals: Int) -> String {
        withVaList([Int32(decimals), self]) { arguments in
            var buffer = [CChar](repeating: 0, count: 32)
            let needed = Int(vsnprintf(&buffer, buffer.count, "%.*f", arguments))
            if needed >= buffer.count {
                buffer = [CChar](repeating: 0, count: needed + 1)
                withVaList([Int32(decimals), self]) { _ = vsnprintf(&buffer, buffer.count, "%.*f", $0) }
            }
            return String(cString: buffer)
        }
    }
}

extension Unicode.Scalar {
    /// A control character, a line or paragraph separator, or an invisible format character
    /// (zero-width spaces and joiners, bidirectional controls, the byte order mark): nothing a
    /// field read from a code or typed for one holds (issue 44).
    package var isControlOrInvisible: Bool {
        value < 0x20 || (0x7f...0x9f).contains(value)
            || [.lineSeparator, .paragraphSeparator, .format].contains(properties.generalCategory)
            // Variation selectors, fillers and the like draw nothing: "Kitchen iPad" with one
            // after it reads as the name it is not.
            || drawsNothing
    }

    /// Unicode's default ignorable code points (zero-width spaces and joiners, variation
    /// selectors, the byte order mark), and the letters that are blank (Hangul fillers, the
    /// Braille blank): what a reader of a name never sees.
    package var drawsNothing: Bool {
        properties.isDefaultIgnorableCodePoint || [0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800].contains(value)
    }
}

/// The characters a person is never shown as themselves (issue 44): control characters,
/// bidirectional controls, line and paragraph separators, invisible format characters (zero-
/// width spaces and joiners, the byte order mark: Unicode's Cf), default-ignorable ones and
/// letters that draw nothing. A name holding one could drive the terminal, reorder what a person
/// reads (U+202E turns "gpj.exe" around), start a line of its own or pass for another name. The
/// one rule: text output escapes them (CLISupport's `displaySafe`), JSON output writes them as
/// `\uXXXX` (``JSONValue/reported(pretty:)``).
public enum DisplayRule {
    public static func escapes(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) || isBidiControl(scalar.value)
            || [.lineSeparator, .paragraphSeparator, .format].contains(scalar.properties.generalCategory)
            || scalar.properties.isDefaultIgnorableCodePoint || isBlankLetter(scalar.value)
            // A space that is not the space: "iPad\u{a0}1" beside "iPad 1" in a list of devices
            // (a support agent's trial: two active devices that read alike, one revoked).
            || (scalar.properties.generalCategory == .spaceSeparator && scalar.value != 0x20)
    }

    /// Which of `text`'s characters are shown as `\u{…}`: those ``escapes(_:)`` names, and a
    /// combining mark past the fourth on one letter (a few are a language's accents, dozens a
    /// name that spills over the lines around it).
    public static func escapedScalars(_ text: String) -> [Bool] {
        var marks = 0
        return text.unicodeScalars.map { scalar in
            marks = [.nonspacingMark, .enclosingMark].contains(scalar.properties.generalCategory) ? marks + 1 : 0
            return escapes(scalar) || marks > 4
        }
    }

    /// Whether `text` holds what an escaped character is shown as (`\u{`): a name or id typed
    /// so would read as another one holding that character. The renderer escapes each value
    /// and then each message again, which is harmless only while an escape is never text.
    /// Read in NFKC and any case too (a trial: `＼u{202e}`, `\U{202e}` and `\u｛202e}` read alike).
    public static func imitatesEscape(_ text: String) -> Bool {
        func holdsEscape(_ bytes: some Sequence<UInt8>) -> Bool {
            var previous: (UInt8, UInt8) = (0, 0)
            for byte in bytes {
                if previous == (0x5c, 0x75), byte == 0x7b { return true }
                previous = (previous.1, byte)
            }
            return false
        }
        return holdsEscape(text.utf8) || holdsEscape(compatibilityFolded(text))
    }

    /// Why a name ``imitatesEscape(_:)`` is refused, in every refusal that says so.
    public static let imitatesEscapeReason = "holds \\u{, which every listing shows for an escaped character"

    /// `text` in NFKC, case folded: "𝐢𝐏" as "ip", "＼" as "\\" (as names are compared).
    private static func compatibilityFolded(_ text: String) -> [UInt8] {
        (try? Array(text.utf8).withUnsafeBytes(UnicodeNormalization.caseFoldedNFKC)) ?? Array(text.lowercased().utf8)
    }

    /// The scripts whose letters pass for each other's ("а" and "a", "і" and "i", "ο" and
    /// "o"), named in one word of `text` (what stands between spaces, dashes, apostrophes and
    /// slashes: a mark, a digit or a full stop would otherwise part "iP.аd"), when a word mixes two or
    /// more of them: the mixed-script check of Unicode's security mechanisms (UTS #39, section
    /// 5), for the scripts most of its confusables with Latin are in. A name whose words are
    /// each in one script ("Кухня", "Küche", "Мама iPad") mixes none. Nil when none is mixed.
    public static func mixedScripts(_ text: String) -> [String]? {
        var word: Set<Int> = []
        // Read in NFKC: "𝐢𝐏аd" (mathematical bold letters and a Cyrillic а) is "iPаd" to the eye.
        for scalar in String(decoding: compatibilityFolded(text), as: UTF8.self).unicodeScalars {
            // Words part at spaces, dashes, apostrophes and slashes ("Маша-iPad", "Саша's iPhone").
            guard !scalar.properties.isWhitespace, scalar.properties.generalCategory != .dashPunctuation, !["'", "\u{2019}", "/"].contains(scalar) else {
                if word.count > 1 { break }
                word = []
                continue
            }
            if let script = confusableScript(scalar.value) { word.insert(script) }
        }
        guard word.count > 1 else { return nil }
        return word.sorted().map { ["Latin", "Greek", "Cyrillic", "Coptic", "Armenian", "Cherokee", "Lisu"][$0] }
    }

    /// By the Unicode blocks of their letters, the scripts UTS #39's confusables pass for Latin
    /// from: 0 Latin, 1 Greek, 2 Cyrillic, 3 Coptic, 4 Armenian, 5 Cherokee, 6 Lisu; nil for any other.
    private static func confusableScript(_ value: UInt32) -> Int? {
        switch value {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2AF, 0x1D00...0x1DBF, 0x1E00...0x1EFF, 0x2C60...0x2C7F,
             0xA720...0xA7FF, 0xAB30...0xAB6F, 0xFF21...0xFF3A, 0xFF41...0xFF5A: 0
        case 0x3E2...0x3EF, 0x2C80...0x2CFF: 3
        case 0x370...0x3FF, 0x1F00...0x1FFF: 1
        case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F: 2
        case 0x531...0x58F, 0xFB13...0xFB17: 4
        case 0x13A0...0x13FF, 0xAB70...0xABBF: 5
        case 0xA4D0...0xA4FF: 6
        default: nil
        }
    }

    /// Letters that draw nothing (the Hangul fillers, the Braille blank): a name of them reads
    /// as empty, or as another name with them in it.
    private static func isBlankLetter(_ value: UInt32) -> Bool {
        [0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800].contains(value)
    }

    /// The explicit bidirectional formatting characters (Unicode UAX #9, section 2).
    private static func isBidiControl(_ value: UInt32) -> Bool {
        (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) || value == 0x200E || value == 0x200F || value == 0x061C
    }
}
