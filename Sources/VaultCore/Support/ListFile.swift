/// The list files the tools read (`--devices-file`, `--signature-keys-file`): one entry a line,
/// white space around it ignored, blank lines and lines starting with `#` skipped.
public enum ListFile {
    /// The entry a line holds; nil for a blank line or a comment.
    public static func entry(_ line: ArraySlice<UInt8>) -> String? {
        // A BOM (U+FEFF, what Notepad starts a file with) is no part of the first entry: left
        // in, a words file so saved was read as other text, and its first word quoted.
        var text = String(decoding: line, as: UTF8.self).trimmingWhiteSpace()
        while text.unicodeScalars.first == "\u{FEFF}" { text = String(text.unicodeScalars.dropFirst()).trimmingWhiteSpace() }
        let entry = text
        return entry.isEmpty || entry.hasPrefix("#") ? nil : entry
    }

    /// Whether a list's entries hold 12 or more words of BIP-39's or SLIP-0039's lists, one or a
    /// few an entry, numbered or bulleted or not, wherever they stand among the others:
    /// recovery words or a share given as the list (a words file, its words one a line). Each
    /// entry alone is a word, a name a device may have; together they are the family's key,
    /// and a report of the entries not found printed all 24 (a hostile trial).
    public static func holdsRecoveryWords(_ entries: some Sequence<String>) -> Bool {
        var run = WordRun()
        return entries.contains { run.add($0) == .recoveryWords }
    }

    /// Entries read in order, counting their list words (``holdsRecoveryWords(_:)``): for a
    /// reader that uses each entry as it comes, and holds back those that may yet turn out to
    /// be recovery words (at most eleven).
    public struct WordRun {
        private var words = 0

        public init() {}

        public enum Entry: Equatable { case other, listWords, recoveryWords }

        /// What the entry is: no list words (a number or a bullet alone among them too: held
        /// back, a list of them would be held whole), list words, or the entry with which the
        /// list holds recovery words.
        public mutating func add(_ entry: String) -> Entry {
            guard let count = Self.listWords(in: entry), count > 0 else { return .other }
            words += count
            return words >= 12 ? .recoveryWords : .listWords
        }

        /// How many list words `entry` holds when it is nothing but such words after a number or
        /// a bullet (`3.`, `(3)`, `- `, `* `), 0 when it is only a number or a bullet; nil
        /// when it holds anything else.
        package static func listWords(in entry: String) -> Int? {
            // Printable ASCII (every id a registry holds) is read as bytes: splitting by
            // Character and asking Unicode whether each is white space was a fifth of a
            // revoke's time with a list of 100,000 ids (perf, docs/performance.md).
            if let answer = entry.utf8.withContiguousStorageIfAvailable(asciiListWords), let count = answer {
                return count
            }
            // Past ASCII, as a reader reads it: invisible format characters dropped (a soft
            // hyphen or a zero-width space inside a word, a BOM), and NFKC's folding (full-width
            // digits and letters, other spaces): a hostile trial's `１. jump` and `ju\u{ad}mp`
            // were quoted in a refusal.
            var visible = Array(String(String.UnicodeScalarView(entry.unicodeScalars.filter { $0.properties.generalCategory != .format })).utf8)
            defer { visible.zeroize() }
            guard var folded = try? visible.withUnsafeBytes(UnicodeNormalization.nfkc) else { return listWordsReadByCharacter(in: entry) }
            defer { folded.zeroize() }
            if let answer = folded.withUnsafeBufferPointer(asciiListWords), let count = answer { return count }
            return listWordsReadByCharacter(in: String(decoding: folded, as: UTF8.self))
        }

        /// ``listWords(in:)`` of any entry, by Character (what the ASCII bytes' reading is held to).
        package static func listWordsReadByCharacter(in entry: String) -> Int? {
            // `#` parts a list's USER#DEVICE: words joined by it (`jump#abandon`) are words each.
            let tokens = entry.split(whereSeparator: { $0.isWhitespace || $0 == "#" }).filter { !$0.allSatisfy(numbering.contains) }
            var count = 0
            for token in tokens {
                // A number glued to its word (`1.jump`, `(1)jump`) is the word's; a longer run
                // of digits and dashes before letters is an id's (`00000000-…-000000000ADD`:
                // a list of sequential UUIDs read as recovery words, a hostile trial).
                guard token.prefix(while: numbering.contains).count <= 5 else { return nil }
                var bytes = Array(token.drop(while: numbering.contains).utf8)
                defer { bytes.zeroize() }
                guard bytes.withUnsafeBytes({ KeyText.isOneListWord($0) }) else { return nil }
                count += 1
            }
            return count
        }

        /// What may number or bullet a word.
        private static let numbering = Set("0123456789.)(-*#•:[]")

        /// ``listWords(in:)`` of an entry of ASCII bytes, the same rules byte by byte: `.some(nil)`
        /// when it holds anything else, nil when it is not ASCII (read by Character then).
        private static func asciiListWords(_ bytes: UnsafeBufferPointer<UInt8>) -> Int?? {
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0d).contains(byte) || byte == UInt8(ascii: "#") }
            func isNumbering(_ byte: UInt8) -> Bool {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: ")"), UInt8(ascii: "("), UInt8(ascii: "-"),
                     UInt8(ascii: "*"), UInt8(ascii: "#"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"): true
                default: false
                }
            }
            var count = 0, index = 0
            while index < bytes.count {
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                let start = index
                while index < bytes.count, !isSpace(bytes[index]) { index += 1 }
                guard index > start else { break }
                var wordStart = start
                while wordStart < index, isNumbering(bytes[wordStart]) { wordStart += 1 }
                if wordStart == index { continue }  // a number or a bullet alone
                guard wordStart - start <= 5,
                      KeyText.isOneListWord(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[wordStart..<index])) else { return .some(nil) }
                count += 1
            }
            return count
        }
    }
}
