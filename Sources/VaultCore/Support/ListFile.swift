/// The list files the tools read (`--devices-file`, `--signature-keys-file`): one entry a line,
/// white space around it ignored, blank lines and lines starting with `#` skipped.
public enum ListFile {
    /// The entry a line holds; nil for a blank line or a comment.
    public static func entry(_ line: ArraySlice<UInt8>) -> String? {
        let entry = String(decoding: line, as: UTF8.self).trimmingWhiteSpace()
        return entry.isEmpty || entry.hasPrefix("#") ? nil : entry
    }

    /// Whether a list's entries, in order, hold 12 or more words of BIP-39's or SLIP-0039's
    /// lists in a row, one or a few an entry: recovery words or a share given as the list (a
    /// words file, or its words one a line). Each entry alone is a word, a name a device may
    /// have; together they are the family's key, and a report of the entries not found printed
    /// all 24 (a hostile trial).
    public static func holdsRecoveryWords(_ entries: some Sequence<String>) -> Bool {
        var run = WordRun()
        return entries.contains { run.add($0) == .recoveryWords }
    }

    /// Entries read in order, counting the list words in a row (``holdsRecoveryWords(_:)``):
    /// for a reader that uses each entry as it comes, and holds back those that may yet turn
    /// out to be recovery words.
    public struct WordRun {
        private var words = 0

        public init() {}

        public enum Entry: Equatable { case other, listWords, recoveryWords }

        /// What the entry is: not list words (the run starts again), list words (the run goes
        /// on), or the entry with which the run is recovery words or a share.
        public mutating func add(_ entry: String) -> Entry {
            let count = Self.listWords(in: entry)
            words = count == 0 ? 0 : words + count
            return count == 0 ? .other : words >= 12 ? .recoveryWords : .listWords
        }

        /// How many list words `entry` holds when it is nothing but words of BIP-39's or
        /// SLIP-0039's lists (one, or several, numbered or not); 0 when it holds anything else.
        private static func listWords(in entry: String) -> Int {
            var bytes = Array(entry.utf8)
            defer { bytes.zeroize() }
            return bytes.withUnsafeBytes { text -> Int in
                if KeyText.isOneListWord(text) { return 1 }
                guard KeyText.isListWordsOnly(text) else { return 0 }
                // Numbers ("3.", "3)") are not words.
                return entry.split(whereSeparator: \.isWhitespace).filter { $0.contains(where: \.isLetter) }.count
            }
        }
    }
}
