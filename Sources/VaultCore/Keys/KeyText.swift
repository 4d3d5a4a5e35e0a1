/// What counts as a key in a file an output would replace (docs/conventions.md, "Nothing
/// lost"): what the suite's own key files hold, an `nsec1…` or `ncryptsec1…` (grouped or not),
/// 64 hex characters (a parent, vault or master key), or 12 or more words all from BIP-39's or
/// SLIP-0039's lists (recovery words, a share), numbered or not. The rule over bytes; reading
/// the file is VaultFiles' (`KeyHoldingFile`).
package enum KeyText {
    /// Whether `text` is a key as the suite's key files hold one; compared in place (`text` is
    /// protected memory), copying nothing out.
    package static func holdsKey(_ text: UnsafeRawBufferPointer) -> Bool {
        // Keys are printed and typed in groups of four ("nsec 1qyz …"): compared without spaces.
        var length = 0
        guard let compact = try? SecretBytes(count: text.count, initialize: { buffer in
            for byte in text where !isSeparator(byte) {
                buffer[length] = byte
                length += 1
            }
        }) else { return false }
        let isKey = compact.withUnsafeBytes { all -> Bool in
            let key = UnsafeRawBufferPointer(rebasing: all.prefix(length))
            if key.count == 64, key.allSatisfy(isHexDigit) { return true }
            return startsFolded(key, "nsec1") || startsFolded(key, "ncryptsec1")
        }
        return isKey || allListWords(text)
    }

    /// White space, a comma, and any byte of a non-ASCII character (a no-break space, a byte
    /// order mark): list words and keys are ASCII, so such a byte only ever separates them.
    private static func isSeparator(_ byte: UInt8) -> Bool { [0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c, 0x2c].contains(byte) || byte >= 0x80 }

    /// Twelve or more list words, read as the word readers read them: whole or by their first
    /// four letters or more, numbers ("1.", "12)") aside, and only on lines that hold nothing
    /// else, so a sheet's title typed above a share ("Family key share 1 of 3") is passed over.
    private static func allListWords(_ text: UnsafeRawBufferPointer) -> Bool {
        var words = 0, lineWords = 0, lineHasOther = false
        var start: Int?
        for index in 0...text.count {
            let byte: UInt8? = index < text.count ? text[index] : nil
            if let byte, !isSeparator(byte) {
                if start == nil { start = index }
                continue
            }
            if let first = start {
                start = nil
                let token = UnsafeRawBufferPointer(rebasing: text[first..<index])
                if !token.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2e || $0 == 0x29 || $0 == 0x3a }) {
                    if isListWord(token) { lineWords += 1 } else { lineHasOther = true }
                }
            }
            if byte == nil || byte == 0x0a || byte == 0x0d {
                if !lineHasOther { words += lineWords }
                lineWords = 0
                lineHasOther = false
            }
        }
        return words >= 12
    }

    private static func isListWord(_ token: UnsafeRawBufferPointer) -> Bool {
        if let whole = pack(token), listWords.contains(whole) { return true }
        guard token.count >= 4, let prefix = pack(UnsafeRawBufferPointer(rebasing: token.prefix(4))) else { return false }
        return listPrefixes.contains(prefix)
    }

    /// A token of at most eight ASCII letters, lower-cased, in one number: list words are
    /// three to eight letters, so a token is compared without copying it out of protected memory.
    private static func pack(_ token: UnsafeRawBufferPointer) -> UInt64? {
        guard (1...8).contains(token.count) else { return nil }
        var packed: UInt64 = UInt64(token.count)
        for byte in token {
            let lower = byte | 0x20
            guard (0x61...0x7a).contains(lower) else { return nil }
            packed = packed << 8 | UInt64(lower)
        }
        return packed
    }

    private static let listWords: Set<UInt64> = Set((BIP39.englishWords + SLIP39.words).compactMap { word in
        Array(word.utf8).withUnsafeBytes { pack($0) }
    })

    /// The first four letters of every list word (each list's words are told apart by them).
    private static let listPrefixes: Set<UInt64> = Set((BIP39.englishWords + SLIP39.words).compactMap { word in
        Array(word.utf8.prefix(4)).withUnsafeBytes { pack($0) }
    })

    private static func startsFolded(_ text: UnsafeRawBufferPointer, _ prefix: String) -> Bool {
        text.count >= prefix.utf8.count && zip(text, prefix.utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    private static func isHexDigit(_ char: UInt8) -> Bool {
        (0x30...0x39).contains(char) || (0x61...0x66).contains(char | 0x20)
    }
}
