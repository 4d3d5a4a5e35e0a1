import VaultCore

/// What people ask to be printed on a sheet (a label, a holder's name, the app's name, an
/// account): printed as it is, so nothing in it may be a character a reader does not see as
/// itself. A line break printed an extra line that looked like the page's own, U+202E printed
/// "evil" as "live", ESC a box (a hostile trial). Every sheet's renderer checks its content
/// here before drawing anything.
enum PrintedText {
    /// Checks each text a sheet prints as given, then all of them read together
    /// (``RecordedText/checkTogether(_:)``: words or a key spread over a label, a holder's
    /// name and the app's name are on one page all the same).
    static func check(_ texts: [(text: String?, what: String)]) throws {
        for (text, what) in texts { try check(text, what: what) }
        try RecordedText.checkTogether(texts.map { ($0.text, $0.what) })
    }

    private static func check(_ text: String?, what: String) throws {
        guard let text else { return }
        if text.unicodeScalars.contains(where: { $0.isControlOrInvisible || DisplayRule.escapes($0) }) { throw VaultError.unprintableText(what) }
        // Nor a key, recovery words or a share in any spelling, nor a piece of a key the run
        // holds: what a sheet prints is kept on paper for good and read by whoever holds it,
        // as a record is. A share sheet's label or holder holding the key, or its words, gave
        // every holder the whole key (two trials: `split --label "Fam <hex>"`, `--holder
        // "<the 24 words>"`, exit 0); a code sheet's would print it beside a code.
        try RecordedText.check(text, field: what)
    }
}

extension VaultError.Code {
    /// Text to print holding a control, invisible or reordering character.
    public static let unprintableText = VaultError.Code(name: "unprintableText", category: .usage)
}

extension VaultError {
    static func unprintableText(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unprintableText, "\(what) holds a control, invisible or reordering character, which a sheet would print as something else; nothing was written",
                   hint: "give it as plain text on one line", file: file, line: line)
    }
}
