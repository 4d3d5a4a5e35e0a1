/// Text a record keeps for good: a household log event's tags and sentence, a registry batch's
/// operator, a revocation's reason, a grant's label. Such records are append-only, signed and
/// shown to everyone who reads them, so a key typed into one can never be taken back (issue 44:
/// `--label`, `--reason` and `--operator` recorded an nsec and printed it). Every record's
/// writer passes its text here, so a field added tomorrow is held to the same rule.
public enum RecordedText {
    /// Refuses `text`, recorded as `field`, when it holds a key, recovery words or a share in
    /// any spelling the suite reads (``KeyText``) or any secret this run holds
    /// (``HeldSecrets``). `mayBeKey`: a field that is a key by design (a grant's public key, an
    /// event id), held only to the second rule, since 64 hex digits read as a key there.
    public static func check(_ text: String, field: String, mayBeKey: Bool = false) throws {
        var bytes = Array(text.utf8)
        defer { bytes.zeroize() }
        if HeldSecrets.appear(in: bytes) { throw VaultError.secretInRecord(field) }
        guard !mayBeKey else { return }
        // As written, and as read in NFKC with punctuation between words taken for spaces
        // (full-width letters, words joined by '_' or ','): KeyText reads keys and words
        // between spaces and lines.
        var spaced = (try? bytes.withUnsafeBytes(UnicodeNormalization.nfkc)) ?? bytes
        defer { spaced.zeroize() }
        for index in spaced.indices where [0x5f, 0x2c, 0x3b, 0x7c, 0x2f, 0x2e, 0x2b].contains(spaced[index]) { spaced[index] = 0x20 }
        // A record is read by everyone for good: 64 hex digits glued to other text count too
        // (`--reason "stolen <hex>"`, `--id dev-<hex>`), as in a quote of what was typed.
        if KeyText.holdsKeyOrHexRun(readingThrough: bytes) || spaced.withUnsafeBytes({ KeyText.holdsKey($0) }) {
            throw VaultError.secretInRecord(field)
        }
    }

    /// Refuses the texts one record (or one printed sheet) keeps when, read together, they hold
    /// a secret this run holds that none holds alone (``HeldSecrets``: a piece of its hex, its
    /// recovery words): a trial's share sheet held the key's words 1–11, 12–22 and 23–24 in its
    /// label, a holder's name and the app's name, exit 0. Only the run's own secrets: twelve
    /// list words over many short texts (a family's holders named Mom, Dad, Rose, Grace…) are
    /// no phrase. Each text is checked on its own first, by its caller, so a refusal names the
    /// field when one alone holds it; the fields named are those given.
    public static func checkTogether(_ texts: [(text: String?, field: String)]) throws {
        var given: [String] = [], fields: [String] = []
        for (text, field) in texts {
            guard let text, !text.isEmpty else { continue }
            given.append(text)
            if !fields.contains(field) { fields.append(field) }
        }
        guard given.count > 1 else { return }
        try check(given.joined(separator: "\n"), field: "\(fields.joined(separator: ", ")), read together,", mayBeKey: true)
    }

    /// A name or id the vault already holds, as a record's sentence names it: itself, or, when
    /// the record may not keep it (it reads as a key, words or a share), what stands for it. A
    /// stolen iPad named so by its thief must still be revoked: the change is recorded, the
    /// name is not (a hostile trial: its revocation was refused, exit 64, by the parent too).
    public static func named(_ text: String, what: String = "a name") -> String {
        (try? check(text, field: "")) == nil ? "(\(what) not recorded: it reads as a key, recovery words or a share)" : text
    }

    /// A device id the vault holds, as a record's tag names it: itself, or, when it is a whole
    /// key, words or a share, the first eight hex digits of its SHA-256 (a tag is kept for good
    /// and must not keep the secret; the digits still tell two such ids apart).
    public static func recordedID(_ id: String) -> String {
        guard let fingerprint = QuotedInput(id).fingerprint else { return id }
        return "(not recorded: SHA-256 \(fingerprint)…)"
    }

    /// The bounded length of free text in a record (a label, a reason, an operator's name).
    public static let maximumCharacters = 1_000

    /// Refuses free text longer than ``maximumCharacters`` or holding a secret.
    public static func checkFreeText(_ text: String, field: String) throws {
        guard text.count <= maximumCharacters else { throw VaultError.recordedTextTooLong(field, maximum: maximumCharacters, actual: text.count) }
        try check(text, field: field)
    }

    /// Why `text` cannot name someone or something in a record (who ran a batch, the batch, who
    /// a grant is for), or nil when it can: a record's "by" must read as someone (trials:
    /// `--operator ""`, a zero-width space or a combining mark alone was logged, and `log grant
    /// --label ""` showed "()"). Something a person reads, not only spaces, invisible characters
    /// and marks; no control or line-breaking character, which would drive or break the
    /// terminal showing the record.
    public static func nameProblem(_ text: String) -> String? {
        let breaking: [Unicode.GeneralCategory] = [.control, .lineSeparator, .paragraphSeparator]
        if text.unicodeScalars.contains(where: { breaking.contains($0.properties.generalCategory) }) {
            return "contains a control or line-breaking character"
        }
        // Seen as nothing, or as an empty box: marks alone, a private-use, unassigned or
        // noncharacter code point (a review: U+E000 was logged as who ran a batch).
        let nothing: [Unicode.GeneralCategory] = [.nonspacingMark, .spacingMark, .enclosingMark, .privateUse, .unassigned, .surrogate]
        guard text.unicodeScalars.contains(where: {
            !DisplayRule.escapes($0) && !$0.properties.isWhitespace && !$0.drawsNothing && !nothing.contains($0.properties.generalCategory)
        }) else {
            return "is empty or only spaces, marks and invisible characters"
        }
        // A name is written as people write one: no space at either end, none doubled (a review:
        // a label padded with 90 spaces pushed the grant's real scope off the line).
        let blanks = text.unicodeScalars.map(\.properties.isWhitespace)
        if blanks.first == true || blanks.last == true || zip(blanks, blanks.dropFirst()).contains(where: { $0 && $1 }) {
            return "begins or ends with a space, or doubles one"
        }
        // A name shown between brackets cannot close them: its own pair up (a review: a label
        // "Support Co) revoke, merge, device until 2099… (" read as the grant's scope).
        var open: [Character] = []
        for character in text {
            let closers: [Character: Character] = ["(": ")", "[": "]", "{": "}"]
            if let closer = closers[character] { open.append(closer) }
            if [")", "]", "}"].contains(character) {
                guard open.popLast() == character else { return "has a bracket that closes none it opened" }
            }
        }
        guard open.isEmpty else { return "has a bracket it does not close" }
        // Nor what a listing shows for an escaped character (`\u{202e}` typed out).
        guard !DisplayRule.imitatesEscape(text) else { return DisplayRule.imitatesEscapeReason }
        return nil
    }

    /// Refuses a name (``nameProblem(_:)``), then as free text (``checkFreeText(_:field:)``).
    public static func checkName(_ text: String, field: String) throws {
        if let problem = nameProblem(text) { throw VaultError.recordedNameBlank(field, problem) }
        try checkFreeText(text, field: field)
    }
}

extension VaultError.Code {
    /// Text for a kept record holds a key, words, a share or a secret the run holds.
    public static let secretInRecord = VaultError.Code(name: "secretInRecord", category: .usage)
    /// Free text for a kept record is longer than a record keeps.
    public static let recordedTextTooLong = VaultError.Code(name: "recordedTextTooLong", category: .usage)
    /// A name for a record that names nobody (``RecordedText/nameProblem(_:)``).
    public static let recordedNameBlank = VaultError.Code(name: "recordedNameBlank", category: .usage)
}

extension VaultError {
    static func secretInRecord(_ field: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.secretInRecord, "\(field) holds a key, recovery words or a share (not shown): a record or a sheet keeps it for good and shows it to everyone who reads it; nothing was written",
                   hint: "give the text without the secret (a public key is its npub1…)", file: file, line: line)
    }

    static func recordedNameBlank(_ field: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.recordedNameBlank, "\(field) \(problem): a record names who or what it is by it; nothing was written", file: file, line: line)
    }

    static func recordedTextTooLong(_ field: String, maximum: Int, actual: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.recordedTextTooLong, "\(field) is \(actual) characters long; a record keeps at most \(maximum)", file: file, line: line)
    }
}
