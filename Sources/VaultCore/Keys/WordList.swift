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

    /// The words of typed text: any case, separated by whitespace or commas, with numbering a
    /// person copied ("1.", "12)") skipped.
    static func tokens(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: { $0.isWhitespace || $0 == "," }).map(String.init)
            .filter { token in !token.allSatisfy { $0.isNumber || $0 == "." || $0 == ")" || $0 == ":" } }
    }
}
