/// Levenshtein distance, for the "closest: …" of a message (a mistyped word or device).
/// Callers bound the lengths they compare: the cost is the product of the two.
struct EditDistance {
    private let target: [Unicode.Scalar]
    private var previous: [Int] = [], current: [Int] = []

    /// Distances from `typed` (its first `limit` scalars) to other strings.
    init(from typed: String, limit: Int) {
        target = Array(typed.unicodeScalars.prefix(limit))
    }

    mutating func to(_ text: some StringProtocol, limit: Int = .max) -> Int {
        let other = Array(text.unicodeScalars.prefix(limit))
        previous = Array(0...other.count)
        current = previous
        for (i, a) in target.enumerated() {
            current[0] = i + 1
            for (j, b) in other.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a == b ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[other.count]
    }
}
