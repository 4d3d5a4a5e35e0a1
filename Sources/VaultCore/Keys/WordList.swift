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
        guard !words.isEmpty, places.count == words.count else { return words }
        guard Set(places) == Set(1...words.count) else {
            throw VaultError(.malformedKey, "every word is numbered, but the numbers are not 1 to \(words.count) each once: check the numbering")
        }
        var placed = words
        for (word, place) in zip(words, places) { placed[place - 1] = word }
        return placed
    }
}
