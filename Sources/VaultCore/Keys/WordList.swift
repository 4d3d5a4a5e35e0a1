/// The order typed words were read in.
public enum WordOrder: String, Sendable {
    /// Each word carried its number.
    case numbered
    /// In the order typed: the grid's order, down each column.
    case asTyped
    /// Row by row across the printed grid, without its numbers.
    case printedGridByRows

    /// How a note says it, or nil when there is nothing to say.
    public var note: String? {
        self == .printedGridByRows ? "the words were typed row by row across the printed grid, and read in the grid's order" : nil
    }
}

/// A word list whose words have unique four-letter prefixes (BIP-39's English list and
/// SLIP-0039's), and the forgiving way both read words a person typed.
struct WordList: Sendable {
    let words: [String]
    private let indexByWord: [String: Int]
    private let indexByPrefix: [String: Int]

    init(_ words: [String]) {
        self.words = words
        indexByWord = Dictionary(uniqueKeysWithValues: words.enumerated().map { ($1, $0) })
        indexByPrefix = Dictionary(uniqueKeysWithValues: words.enumerated().map { (String($1.prefix(4)), $0) })
    }

    /// A whole list word, or its first four letters or more.
    func index(of typed: String) -> Int? {
        if let index = indexByWord[typed] { return index }
        guard typed.count >= 4, let index = indexByPrefix[String(typed.prefix(4))], words[index].hasPrefix(typed) else { return nil }
        return index
    }

    /// The words of typed text: any case, separated by whitespace or commas. Numbering a person
    /// copied ("1.", "12)") is dropped; when every word is numbered and the numbers are 1 to n,
    /// each word goes to its number's place, so a sheet's numbered grid may be typed row by row,
    /// or in any order. Every word numbered but not 1 to n is refused: the typed order would
    /// then be a guess, which a short checksum might accept.
    static func tokens(_ text: String) throws -> [String] {
        try numberedTokens(text).words
    }

    /// ``tokens(_:)``, and whether the words were numbered (then their order is certain).
    static func numberedTokens(_ text: String) throws -> (words: [String], numbered: Bool) {
        var words: [String] = [], places: [Int] = []
        var pending: Int?
        for token in text.lowercased().split(whereSeparator: { $0.isWhitespace || $0 == "," }) {
            if token.allSatisfy({ $0.isNumber || $0 == "." || $0 == ")" || $0 == ":" }) {
                pending = token.count <= 4 ? Int(token.filter(\.isNumber)) : nil
                continue
            }
            words.append(String(token))
            if let place = pending { places.append(place) }
            pending = nil
        }
        guard !words.isEmpty, places.count == words.count else { return (words, false) }
        guard Set(places) == Set(1...words.count) else {
            throw VaultError(.malformedKey, "every word is numbered, but the numbers are not 1 to \(words.count) each once: check the numbering")
        }
        var placed = words
        for (word, place) in zip(words, places) { placed[place - 1] = word }
        return (placed, true)
    }

    /// The columns every sheet prints its words in, numbered down each column.
    static let printedColumns = 3

    /// The orders unnumbered words may have been typed in: as printed (down each column, the
    /// numbers' order), or row by row across the printed grid without its numbers. Numbered
    /// words have one order, and so do words on one line: that is how a mnemonic is written by
    /// this suite (`words`, `--code-out`) and by wallets, always in its order; a person copying
    /// the grid row by row writes its rows on lines. (Trying both orders on a one-line mnemonic
    /// would refuse one in 256 of them, as both would pass an 8-bit checksum.)
    static func readings(_ text: String) throws -> [(order: WordOrder, words: [String])] {
        let (words, numbered) = try numberedTokens(text)
        if numbered { return [(.numbered, words)] }
        let lines = text.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        guard lines.count > 1 else { return [(.asTyped, words)] }
        let byRows = printedOrder(ofRows: words, columns: printedColumns)
        return byRows == words ? [(.asTyped, words)] : [(.asTyped, words), (.printedGridByRows, byRows)]
    }

    /// Words typed row by row from a grid of `columns` columns filled down each column (the
    /// last column may be shorter), put back in the grid's order.
    static func printedOrder<T>(ofRows typed: [T], columns: Int) -> [T] {
        let rows = (typed.count + columns - 1) / columns
        // The grid's places in the order a person reads them across each row.
        let places = (0..<rows).flatMap { row in (0..<columns).map { $0 * rows + row }.filter { $0 < typed.count } }
        var ordered = typed
        for (typedIndex, place) in places.enumerated() { ordered[place] = typed[typedIndex] }
        return ordered
    }
}

extension VaultError.Code {
    /// Unnumbered words pass their checksum both in the printed order and read across the
    /// printed grid's rows: which was meant cannot be known from the words.
    public static let ambiguousWordOrder = VaultError.Code(name: "ambiguousWordOrder", category: .invalidInput)
}

extension VaultError {
    /// `identities` tell the two readings apart without showing a secret (each one's public
    /// key), when the caller has them.
    public static func ambiguousWordOrder(identities: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        let which = identities.count == 2 ? ": as printed they give \(identities[0]), read across the rows \(identities[1])" : ""
        return VaultError(.ambiguousWordOrder, "the words pass their checksum both in the printed order and read across the grid's rows\(which)",
                          hint: identities.count == 2 ? "compare with the public key printed on the sheet, or type the numbers with the words, as printed"
                              : "type the numbers with the words, as printed", file: file, line: line)
    }

    /// Unnumbered words whose checksum fails in the printed order and across the rows.
    static func wordsFailChecksumInEitherOrder(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "the words' checksum does not match, in the printed order or read across the grid's rows: a word is wrong or out of place",
                   hint: "type the numbers with the words, as printed", file: file, line: line)
    }
}

/// One word as a person typed it at a prompt, checked against a list on its own.
public enum TypedWord: Equatable, Sendable {
    /// A list word (given whole or by its first four letters or more), as the list spells it.
    case word(String)
    /// Not a list word: the list's closest words, closest first (a swap of two letters is one step).
    case unknown(closest: [String])
}

extension WordList {
    /// The typed word checked alone: the list's spelling, or the three closest list words.
    /// Only the first 16 typed letters are compared (list words are at most 8 letters).
    func check(_ typed: String) -> TypedWord {
        let folded = typed.lowercased()
        if let index = index(of: folded) { return .word(words[index]) }
        var distance = EditDistance(from: folded, limit: 16)
        let length = folded.unicodeScalars.count
        return .unknown(closest: words.map { ($0, distance.to($0), abs($0.count - length)) }
            .sorted { ($0.1, $0.2, $0.0) < ($1.1, $1.2, $1.0) }.prefix(3).map(\.0))
    }
}

extension SLIP39 {
    private static let checkList = WordList(words)

    /// A word typed at a prompt, checked against the SLIP-0039 list.
    public static func check(typed: String) -> TypedWord { checkList.check(typed) }
}
