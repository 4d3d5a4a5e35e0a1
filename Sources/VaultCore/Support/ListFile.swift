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
        var run = 0
        for entry in entries {
            let words = listWords(in: entry)
            run = words == 0 ? 0 : run + words
            if run >= recoveryWordsRun { return true }
        }
        return false
    }

    /// How many list words in a row are recovery words or a share, not device names.
    public static let recoveryWordsRun = 12

    /// How many words `entry` holds when it is nothing but words of BIP-39's or SLIP-0039's
    /// lists (one, or several, numbered or not); 0 when it holds anything else.
    public static func listWords(in entry: String) -> Int {
        var bytes = Array(entry.utf8)
        defer { bytes.zeroize() }
        return bytes.withUnsafeBytes { text -> Int in
            if KeyText.isOneListWord(text) { return 1 }
            return KeyText.isListWordsOnly(text) ? entry.split(whereSeparator: \.isWhitespace).count : 0
        }
    }
}
