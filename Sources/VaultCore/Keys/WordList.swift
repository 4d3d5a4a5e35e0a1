/// The order typed words were read in.
public enum WordOrder: String, Sendable {
    /// Each word carried its number.
    case numbered
    /// In the order typed: the grid's order, down each column.
    case asTyped
    /// Row by row across the printed grid, without its numbers.
    case printedGridByRows

    /// How many words a row of the printed grid holds.
    public static var wordsInAGridRow: Int { WordList.printedColumns }

    /// The printed place (from 0) of each of `count` words typed row by row across the printed
    /// grid: a prompt's way from a word's printed number to where it was typed.
    public static func printedPlaces(typedAcrossRows count: Int) -> [Int] {
        WordList.printedOrder(ofRows: Array(0..<count), columns: WordList.printedColumns).enumerated()
            .sorted { $0.element < $1.element }.map(\.offset)
    }

    /// How a note says it, or nil when there is nothing to say.
    public var note: String? {
        self == .printedGridByRows ? "the words were typed row by row across the printed grid, and read in the grid's order" : nil
    }
}

/// A word list whose words have unique four-letter prefixes (BIP-39's English list and
/// SLIP-0039's), and the forgiving way both read words a person typed.
///
/// Typed words are secret, so they are read from protected memory as bytes and never become a
/// `String`: each token is a scratch byte array (lower-cased ASCII) that the reader zeroes, and
/// the lists are looked up by bytes. The list words themselves are public constants.
struct WordList: Sendable {
    let words: [String]
    private let indexByWord: [[UInt8]: Int]
    /// By the first four bytes, packed into one number: a lookup makes no copy of what was typed.
    private let indexByPrefix: [UInt32: Int]

    init(_ words: [String]) {
        self.words = words
        indexByWord = Dictionary(uniqueKeysWithValues: words.enumerated().map { (Array($1.utf8), $0) })
        indexByPrefix = Dictionary(uniqueKeysWithValues: words.enumerated().map { (Self.packed(Array($1.utf8)), $0) })
    }

    private static func packed(_ bytes: [UInt8]) -> UInt32 {
        bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A whole list word, or its first four letters or more.
    func index(of typed: [UInt8]) -> Int? {
        if let index = indexByWord[typed] { return index }
        guard typed.count >= 4, let index = indexByPrefix[Self.packed(typed)], words[index].utf8.starts(with: typed) else { return nil }
        return index
    }

    /// Characters with no width that an editor or a copy adds: a byte order mark, zero-width
    /// spaces and joiners, the word joiner.
    private static let invisible: Set<UInt32> = [0xfeff, 0x200b, 0x200c, 0x200d, 0x2060]

    /// The tokens of typed text, and how many lines hold one: split at any Unicode white space
    /// or a comma, ASCII letters lower-cased (list words are ASCII; any other letter leaves a
    /// token no list word matches).
    private static func scan(_ text: UnsafeRawBufferPointer) -> (tokens: [[UInt8]], lines: Int) {
        var tokens: [[UInt8]] = [], token: [UInt8] = []
        // Room for the whole text at once: a growing token would leave copies of itself behind.
        token.reserveCapacity(text.count)
        var lines = 0, lineHasToken = false
        var iterator = text.makeIterator()
        var decoder = UTF8()
        var scalarBytes: [UInt8] = []
        defer { token.zeroize(); scalarBytes.zeroize() }
        func endToken() {
            guard !token.isEmpty else { return }
            tokens.append(token)
            token.removeAll(keepingCapacity: true)
            if !lineHasToken { lineHasToken = true; lines += 1 }
        }
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if Self.invisible.contains(scalar.value) {
                    continue  // a byte order mark (Notepad's first bytes), a zero-width space: no text
                } else if scalar == "," || scalar.properties.isWhitespace {
                    endToken()
                    // Character.isNewline's scalars: LF, VT, FF, CR, NEL, LS, PS.
                    if [0x0a, 0x0b, 0x0c, 0x0d, 0x85, 0x2028, 0x2029].contains(scalar.value) { lineHasToken = false }
                } else if scalar.isASCII {
                    token.append(UInt8(ascii: scalar) | (scalar.properties.isUppercase ? 0x20 : 0))
                } else {
                    scalarBytes.removeAll(keepingCapacity: true)
                    UTF8.encode(scalar) { scalarBytes.append($0) }
                    token.append(contentsOf: scalarBytes)
                }
            case .error:
                token.append(0xff)  // not UTF-8: no list word matches it
            case .emptyInput:
                endToken()
                return (tokens, lines)
            }
        }
    }

    /// The words of typed text: any case, separated by whitespace or commas. Numbering a person
    /// copied ("1.", "12)") is dropped; when every word is numbered and the numbers are 1 to n,
    /// each word goes to its number's place, so a sheet's numbered grid may be typed row by row,
    /// or in any order. Every word numbered but not 1 to n is refused: the typed order would
    /// then be a guess, which a short checksum might accept. The caller zeroes the words.
    static func tokens(_ text: SecretBytes) throws -> [[UInt8]] {
        var scanned = text.withUnsafeBytes { scan($0).tokens }
        defer { for i in scanned.indices { scanned[i].zeroize() } }
        return try numberedTokens(scanned).words
    }

    /// ``tokens(_:)``, and whether the words were numbered (then their order is certain).
    private static func numberedTokens(_ tokens: [[UInt8]]) throws -> (words: [[UInt8]], numbered: Bool) {
        var words: [[UInt8]] = [], places: [Int] = []
        var pending: Int?
        for token in tokens {
            if token.allSatisfy({ (0x30...0x39).contains($0) || [0x2e, 0x29, 0x3a].contains($0) }) {  // digits . ) :
                let digits = token.filter { (0x30...0x39).contains($0) }
                pending = token.count <= 4 && !digits.isEmpty ? digits.reduce(0) { $0 * 10 + Int($1 - 0x30) } : nil
                continue
            }
            words.append(token)
            if let place = pending { places.append(place) }
            pending = nil
        }
        guard !words.isEmpty, places.count == words.count else { return (words, false) }
        guard Set(places) == Set(1...words.count) else {
            // The numbers themselves are no secret: the first given twice, and those missing.
            let twice = places.enumerated().first { index, place in places[..<index].contains(place) }?.element
            let missing = (1...words.count).filter { !places.contains($0) }
            throw VaultError.wordNumberingNotOneToN(count: words.count, twice: twice, missing: missing)
        }
        var placed = words
        for (word, place) in zip(words, places) { placed[place - 1] = word }
        return (placed, true)
    }

    /// The words at `indexes`, one space between them, in protected memory.
    func phrase(_ indexes: [Int]) throws -> SecretBytes {
        let count = indexes.reduce(max(indexes.count - 1, 0)) { $0 + words[$1].utf8.count }
        return try SecretBytes(count: count) { buffer in
            var offset = 0
            for (position, index) in indexes.enumerated() {
                if position > 0 { buffer[offset] = 0x20; offset += 1 }
                for byte in words[index].utf8 { buffer[offset] = byte; offset += 1 }
            }
        }
    }

    /// The columns every sheet prints its words in, numbered down each column.
    static let printedColumns = 3

    /// The orders unnumbered words may have been typed in: as printed (down each column, the
    /// numbers' order), or row by row across the printed grid without its numbers. Numbered
    /// words have one order, and so do words on one line: that is how a mnemonic is written by
    /// this suite (`words`, `--code-out`) and by wallets, always in its order; a person copying
    /// the grid row by row writes its rows on lines. (Trying both orders on a one-line mnemonic
    /// would refuse one in 256 of them, as both would pass an 8-bit checksum.)
    static func readings(_ text: SecretBytes) throws -> [Reading] {
        var (tokens, lines) = text.withUnsafeBytes { scan($0) }
        // Zeroed here only when refused: otherwise the readings own the same storage.
        var refused = true
        defer { if refused { for i in tokens.indices { tokens[i].zeroize() } } }
        let (words, numbered) = try numberedTokens(tokens)
        refused = false
        if numbered { return [Reading(order: .numbered, words: words)] }
        guard lines > 1 else { return [Reading(order: .asTyped, words: words)] }
        let byRows = printedOrder(ofRows: words, columns: printedColumns)
        return byRows == words ? [Reading(order: .asTyped, words: words)]
            : [Reading(order: .asTyped, words: words), Reading(order: .printedGridByRows, words: byRows)]
    }

    /// Typed words in one order: scratch arrays of a secret, zeroed when the reading goes away.
    final class Reading {
        let order: WordOrder
        private(set) var words: [[UInt8]]

        init(order: WordOrder, words: [[UInt8]]) {
            self.order = order
            self.words = words
        }

        deinit { for index in words.indices { words[index].zeroize() } }
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

    /// Every word carries a number, but the numbers are not 1 to n each once.
    static func wordNumberingNotOneToN(count: Int, twice: Int?, missing: [Int], file: String = #fileID, line: UInt = #line) -> VaultError {
        let found = [twice.map { "\($0) is given twice" }, missing.isEmpty ? nil : "\(missing.prefix(5).map(String.init).joined(separator: ", "))\(missing.count > 5 ? "…" : "") missing"]
            .compactMap { $0 }.joined(separator: ", ")
        return VaultError(.malformedKey, "every word is numbered, but the numbers are not 1 to \(count) each once (\(found)): check the numbering", file: file, line: line)
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
    func check(_ typed: SecretBytes) -> TypedWord {
        var tokens = typed.withUnsafeBytes { Self.scan($0).tokens }
        defer { for i in tokens.indices { tokens[i].zeroize() } }
        // One word a prompt: "aban don" or two words at once is no word of the list.
        if tokens.count == 1, let index = index(of: tokens[0]) { return .word(words[index]) }
        return .unknown(closest: closest(to: tokens.first ?? []))
    }

    /// The three list words nearest to a typed word by edit distance, nearest first.
    func closest(to typed: [UInt8]) -> [String] {
        var distance = EditDistance(fromUTF8: typed, limit: 16)
        defer { distance.erase() }
        let length = distance.length
        return words.map { ($0, distance.to($0), abs($0.count - length)) }
            .sorted { ($0.1, $0.2, $0.0) < ($1.1, $1.2, $1.0) }.prefix(3).map(\.0)
    }
}

extension SLIP39 {
    /// A word typed at a prompt, checked against the SLIP-0039 list.
    public static func check(typed: SecretBytes) -> TypedWord { list.check(typed) }
}

extension String {
    /// A compiled-in word list's words: the text split at ASCII spaces and line ends, by bytes.
    /// Split by characters, the two lists took 12 million instructions, made the first time a
    /// message is checked for recovery words: a third of a small vault's `open` (issue 48).
    var compiledWordList: [String] {
        utf8.split(whereSeparator: { $0 == 0x20 || $0 == 0x0a }).map { String(decoding: $0, as: UTF8.self) }
    }
}
