import VaultCore

/// What people ask to be printed on a sheet (a label, a holder's name, the app's name, an
/// account): printed as it is, so nothing in it may be a character a reader does not see as
/// itself. A line break printed an extra line that looked like the page's own, U+202E printed
/// "evil" as "live", ESC a box (a hostile trial). Every sheet's renderer checks its content
/// here before drawing anything.
enum PrintedText {
    static func check(_ text: String?, what: String) throws {
        guard let text else { return }
        if text.unicodeScalars.contains(where: { $0.isControlOrInvisible || DisplayRule.escapes($0) }) { throw VaultError.unprintableText(what) }
        // Nor a key the run holds, or a piece of one (the parent key, the vault key it gives):
        // a share sheet's label or holder holding it gave every holder the whole key (a trial:
        // `split --label "Fam <hex>"`, exit 0), and a code sheet's would print it beside a code.
        try RecordedText.check(text, field: what, mayBeKey: true)
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
