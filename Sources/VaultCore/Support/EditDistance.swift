/// Damerau–Levenshtein distance (the optimal string alignment form: an insertion, a deletion, a
/// substitution or a swap of two neighbours each cost one), for the "closest: …" of a message:
/// a mistyped word or device. "hotle" is one step from "hotel", not two.
/// Callers bound the lengths they compare: the cost is the product of the two.
package struct EditDistance {
    private var target: [Unicode.Scalar]
    private var beforePrevious: [Int] = [], previous: [Int] = [], current: [Int] = []

    /// Distances from `typed` (its first `limit` scalars) to other strings.
    package init(from typed: String, limit: Int) {
        target = Array(typed.unicodeScalars.prefix(limit))
    }

    /// Distances from typed UTF-8 bytes (their first `limit` scalars), decoded without making a
    /// `String`: a typed word may be a secret's. ``erase()`` overwrites the copy when done.
    package init(fromUTF8 typed: [UInt8], limit: Int) {
        var scalars: [Unicode.Scalar] = []
        var iterator = typed.makeIterator()
        var decoder = UTF8()
        decoding: while scalars.count < limit {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .error: scalars.append("\u{FFFD}")
            case .emptyInput: break decoding
            }
        }
        target = scalars
    }

    /// How many scalars of the typed text are compared.
    package var length: Int { target.count }

    /// Overwrites the typed text this holds.
    package mutating func erase() {
        for index in target.indices { target[index] = "\0" }
    }

    package mutating func to(_ text: some StringProtocol, limit: Int = .max) -> Int {
        let other = Array(text.unicodeScalars.prefix(limit))
        previous = Array(0...other.count)
        current = previous
        beforePrevious = previous
        for (i, a) in target.enumerated() {
            current[0] = i + 1
            for (j, b) in other.enumerated() {
                var best = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a == b ? 0 : 1))
                if i > 0, j > 0, a == other[j - 1], target[i - 1] == b { best = min(best, beforePrevious[j - 1] + 1) }
                current[j + 1] = best
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[other.count]
    }

    /// The candidates closest to `typed`, closest first (ties in the candidates' order), at
    /// most `count`, and none further than a third of the typed length (at least 2): beyond
    /// that a suggestion is noise. Each comparison is bounded to 64 scalars.
    package static func closest(to typed: String, among candidates: [String], count: Int) -> [String] {
        var distance = EditDistance(from: typed, limit: 64)
        let bound = max(2, typed.unicodeScalars.count / 3)
        let scored = candidates.enumerated().compactMap { index, candidate -> (Int, Int, String)? in
            let d = distance.to(candidate, limit: 64)
            return d <= bound ? (d, index, candidate) : nil
        }
        return scored.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.prefix(count).map(\.2)
    }
}
