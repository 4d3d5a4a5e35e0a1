import VaultCore

/// Aligned columns for human output.
public struct TextTable {
    private var rows: [[String]] = []

    public init() {}

    public mutating func add(_ cells: String...) { rows.append(cells.map(\.displaySafe)) }
    public mutating func add(_ cells: [String]) { rows.append(cells.map(\.displaySafe)) }
    /// A row whose value is a key the command prints because it was asked to (`derive
    /// --show-vault-key`), to an output declared secret: kept as it is, which ``displaySafe``
    /// would withhold. Hex only, the tool's own, so nothing in it is left to escape.
    public mutating func addSecret(_ label: String, hex secret: SecretBytes) {
        let text = secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        precondition(text.utf8.allSatisfy { Hex.value($0) != nil }, "TextTable.addSecret takes a key in hex")
        rows.append([label.displaySafe, text])
    }

    /// Lines with columns padded to their widest cell, two spaces apart; no trailing spaces.
    public func render(indent: String = "") -> String {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            var line = indent
            for (column, cell) in row.enumerated() {
                line += cell
                if column < row.count - 1 { line += String(repeating: " ", count: widths[column] - cell.count + 2) }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line + "\n"
        }.joined()
    }
}

/// "1 device", "3 devices": a count with its noun, for human output (nouns with a plain "s").
public func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : noun.hasSuffix("ch") || noun.hasSuffix("sh") || noun.hasSuffix("s") || noun.hasSuffix("x") ? "es" : "s")"
}

extension String {
    /// What ``DisplayRule/escapedScalars(_:)`` says is never shown as itself, escaped
    /// (`\u{202e}`): a name inside a vault cannot drive the terminal, reorder what a person
    /// reads, start a line of its own or spill over the lines around it (issue 44).
    ///
    /// A word that holds an `nsec1…` or `ncryptsec1…` (a file named by the key it holds, an
    /// object's key, a device name) is not shown: what stands for a withheld quote instead
    /// (``QuotedInput``), the rest of the line as it was (its indent, the sentence around it);
    /// a key spread over several words, the whole text. Only that spelling: a 64-digit hex
    /// name is a household's vault, public. And a word that holds a key this run holds, or a
    /// piece of one (``withholdingHeldKeys``): a vault written by another tool named a device
    /// with the parent key's hex, which `inspect`, `diff` and `device-revoker`'s summary printed
    /// (a hostile trial). A secret a command prints because it was asked to (the vault key of
    /// `derive --show-vault-key`) is no text to escape: ``TextTable/addSecret(_:_:)``.
    public var displaySafe: String {
        var text = self
        if KeyText.holdsBech32Key(reading: text) {
            text = text.split(separator: " ", omittingEmptySubsequences: false)
                .map { KeyText.holdsBech32Key(reading: String($0)) ? QuotedInput(String($0)).description : String($0) }.joined(separator: " ")
            if KeyText.holdsBech32Key(reading: text) { return QuotedInput(self).description }
        }
        text = text.withholdingHeldKeys
        // Printable ASCII, the common case, needs no look-up.
        if text.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) { return text }
        var out = ""
        for (scalar, escaped) in zip(text.unicodeScalars, DisplayRule.escapedScalars(text)) {
            if escaped {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// This text with each word that holds a key this run holds, or a piece of one, in any
    /// spelling (``HeldSecrets``: hex split by colons, an nsec, base64, twelve of its hex digits,
    /// four of its words), withheld, or, when it is spread over words, the whole text: the one
    /// rule of every message (``Diagnostics``) and listing (``displaySafe``). A message may
    /// quote a file's text unquoted (a trial: a given-up log event's sentence printed the parent
    /// key in hex; another: `recovery-sheet split -o nodir/‹12 hex digits of the key›/q` said the
    /// folder it wrote). Only what the run holds, by its fingerprints, so no ordinary text is
    /// taken for one: a window of text matches one of a key's few hundred pieces by chance about
    /// once in 10^11 (12 hex digits, 48 bits) or 10^10 (four words, 44 bits). A key split by a
    /// character a name shows escaped (`\u{a}`, a line break in a path) is read with each escape
    /// taken for a space, as the text would be without it.
    public var withholdingHeldKeys: String {
        guard utf8.count >= HeldSecrets.shortestPiece, Self.holdsHeldKey(self) else { return self }
        let words = split(separator: " ", omittingEmptySubsequences: false).map { word in
            Self.holdsHeldKey(String(word)) ? "(not shown: it holds a key this run holds, or a piece of one)" : String(word)
        }
        let joined = words.joined(separator: " ")
        return Self.holdsHeldKey(joined) ? "(not shown: it holds a key this run holds, or a piece of one)" : joined
    }

    /// Whether `text`, as written or with its escapes read as spaces (asked again only when it
    /// has one), holds a key this run holds or a piece of one.
    private static func holdsHeldKey(_ text: String) -> Bool {
        if HeldSecrets.match(in: text.utf8) != nil { return true }
        let unescaped = escapesAsSpaces(text)
        return unescaped != text && HeldSecrets.match(in: unescaped.utf8) != nil
    }

    /// `text` with each `\u{…}` escape (as ``displaySafe`` and ``FileNames`` write one) a space.
    private static func escapesAsSpaces(_ text: String) -> String {
        guard text.contains("\\u{") else { return text }
        var out = "", rest = Substring(text)
        while let start = rest.firstRange(of: "\\u{") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else { rest = rest[start.lowerBound...]; break }
            out += " "
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }

    /// Control characters escaped except line breaks, for multi-line text.
    public var displaySafeKeepingNewlines: String {
        split(separator: "\n", omittingEmptySubsequences: false).map { String($0).displaySafe }.joined(separator: "\n")
    }

}
