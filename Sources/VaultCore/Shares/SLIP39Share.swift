/// One SLIP-0039 share: its public metadata and its secret value ("Format of the share
/// mnemonic"). Its words are as secret as its value; the set's identifier, the indexes and the
/// thresholds are public and printed on every sheet.
public struct SLIP39Share: Sendable {
    /// The set's random 15-bit identifier, the same on every share of a split ("set 7945").
    public let identifier: Int
    /// Whether the identifier is left out of the encryption's salt (extendable backups).
    public let extendable: Bool
    public let iterationExponent: Int
    /// From 0, as encoded.
    public let groupIndex: Int
    /// How many groups restore the secret (1 for a one-level K-of-N split).
    public let groupThreshold: Int
    public let groupCount: Int
    /// From 0, as encoded.
    public let memberIndex: Int
    /// How many shares of this group restore the group's part.
    public let memberThreshold: Int
    public let value: SecretBytes

    /// Whether `other` can be combined with this share: the same set, parameters and length.
    func isSameSet(as other: SLIP39Share) -> Bool {
        identifier == other.identifier && extendable == other.extendable && iterationExponent == other.iterationExponent
            && groupThreshold == other.groupThreshold && groupCount == other.groupCount && value.count == other.value.count
    }

    // MARK: Words

    /// The share's word numbers in the SLIP-0039 list (0…1023), checksum included.
    public func wordIndexes() -> [Int] {
        let g = groupCount - 1
        var data = [
            identifier >> 5,
            (identifier & 0x1f) << 5 | (extendable ? 1 : 0) << 4 | iterationExponent,
            groupIndex << 6 | (groupThreshold - 1) << 2 | g >> 2,
            (g & 3) << 8 | memberIndex << 4 | (memberThreshold - 1),
        ]
        // The value, big-endian, left-padded with zero bits to a multiple of ten.
        let valueBits = value.count * 8
        let words = (valueBits + SLIP39.radixBits - 1) / SLIP39.radixBits
        let padding = words * SLIP39.radixBits - valueBits
        value.withUnsafeBytes { bytes in
            for word in 0..<words {
                var number = 0
                for offset in 0..<SLIP39.radixBits {
                    let bit = word * SLIP39.radixBits + offset - padding
                    number = number << 1 | (bit < 0 ? 0 : Int(bytes[bit / 8] >> (7 - bit % 8) & 1))
                }
                data.append(number)
            }
        }
        return data + RS1024.checksum(customization: RS1024.customization(extendable: extendable), data: data)
    }

    /// The share as its words, one space between them, in protected memory.
    public func phrase() throws -> SecretBytes {
        var indexes = wordIndexes()
        defer { for i in indexes.indices { indexes[i] = 0 } }
        return try SLIP39.list.phrase(indexes)
    }

    /// The share behind word numbers, checking the length, the checksum and the padding.
    /// `share` (from 1) is the number errors name it by.
    public init(wordIndexes data: [Int], share: Int = 1) throws {
        guard (SLIP39.minimumWords...SLIP39.maximumWords).contains(data.count), data.allSatisfy({ (0..<1024).contains($0) }) else {
            throw ShareProblem.wrongWordCount(share: share, count: data.count)
        }
        let paddedBits = (data.count - SLIP39.metadataWords - SLIP39.checksumWords) * SLIP39.radixBits
        let padding = paddedBits % 16
        guard padding <= 8 else { throw ShareProblem.wrongWordCount(share: share, count: data.count) }
        let extendable = data[1] >> 4 & 1 == 1
        guard RS1024.verify(customization: RS1024.customization(extendable: extendable), data: data) else {
            throw ShareProblem.checksumFailed(share: share)
        }
        let valueWords = data[SLIP39.metadataWords..<(data.count - SLIP39.checksumWords)]
        // The value's bits, after `padding` zero bits.
        func bit(_ index: Int) -> UInt8 {
            UInt8(valueWords[valueWords.startIndex + index / SLIP39.radixBits] >> (SLIP39.radixBits - 1 - index % SLIP39.radixBits) & 1)
        }
        guard (0..<padding).allSatisfy({ bit($0) == 0 }) else { throw ShareProblem.badPadding(share: share) }
        let count = (paddedBits - padding) / 8
        let value = try SecretBytes(count: count) { out in
            for index in 0..<(count * 8) {
                out[index / 8] |= bit(padding + index) << (7 - index % 8)
            }
        }
        let groupThreshold = (data[2] >> 2 & 0xf) + 1
        let groupCount = ((data[2] & 3) << 2 | data[3] >> 8) + 1
        guard groupThreshold <= groupCount else { throw ShareProblem.groupThresholdAboveCount(share: share) }
        self.init(identifier: data[0] << 5 | data[1] >> 5, extendable: extendable, iterationExponent: data[1] & 0xf,
                  groupIndex: data[2] >> 6, groupThreshold: groupThreshold, groupCount: groupCount,
                  memberIndex: data[3] >> 4 & 0xf, memberThreshold: (data[3] & 0xf) + 1, value: value)
    }

    /// The share behind typed words: any case, any whitespace or commas between them, numbering
    /// a person copied ("1.", "12)") skipped, and each word whole or by its first four letters
    /// (unique in the list), as ``BIP39/entropy(fromWords:)`` reads them.
    ///
    /// Unnumbered words may be in the printed order or typed row by row across the printed
    /// grid; the reading whose checksum passes is taken (RS1024 is 30 bits: both never pass by
    /// chance). When neither passes and exactly one word changed would make one of them pass,
    /// the problem names that word's printed number (``ShareProblem/wrongWord(share:position:)``).
    public init(words text: SecretBytes, share: Int = 1) throws {
        self = try Self.read(words: text, share: share).share
    }

    /// ``init(words:share:)``, and the order the words were read in. Lines a person copied
    /// from the sheet above its words (``SheetHeading``) are skipped, and what they say must be
    /// what the words are: a title over another sheet's words is refused.
    public static func read(words typed: SecretBytes, share: Int = 1) throws -> (share: SLIP39Share, order: WordOrder) {
        let (text, heading) = try SheetHeading.split(typed)
        let read = try readWithoutHeading(words: text, share: share)
        if let heading {
            let member = read.share.memberIndex + 1, group = read.share.groupIndex + 1
            if let named = heading.member, named != member { throw ShareProblem.headingNamesAnotherShare(share: share, named: "share \(named)", words: "share \(member)") }
            if let named = heading.group, named != group { throw ShareProblem.headingNamesAnotherShare(share: share, named: "group \(named)", words: "group \(group)") }
            if let named = heading.set, named != read.share.identifier {
                throw ShareProblem.headingNamesAnotherShare(share: share, named: "set \(named)", words: "set \(read.share.identifier)")
            }
        }
        return read
    }

    private static func readWithoutHeading(words text: SecretBytes, share: Int) throws -> (share: SLIP39Share, order: WordOrder) {
        let readings = try WordList.readings(text)
        let typed = readings[0].words
        guard typed.count <= SLIP39.maximumWords else { throw ShareProblem.wrongWordCount(share: share, count: typed.count) }
        for (position, word) in typed.enumerated() where SLIP39.index(of: word) == nil {
            throw ShareProblem.unknownWord(share: share, position: position + 1)
        }
        var candidates: [(order: WordOrder, indexes: [Int])] = []
        for reading in readings {
            let indexes = reading.words.map { SLIP39.index(of: $0)! }
            // Words that read alike both ways are one reading, so a correction is not counted twice.
            if !candidates.contains(where: { $0.indexes == indexes }) { candidates.append((reading.order, indexes)) }
        }
        for candidate in candidates {
            do {
                return (try SLIP39Share(wordIndexes: candidate.indexes, share: share), candidate.order)
            } catch ShareProblem.checksumFailed {
                continue
            }
        }
        let corrections = candidates.flatMap { RS1024.oneWordCorrections(candidate: $0.indexes) }
        if corrections.count == 1 { throw ShareProblem.wrongWord(share: share, position: corrections[0].position + 1) }
        throw ShareProblem.checksumFailed(share: share)
    }

    /// The one word that, changed, makes the typed words a valid share: its printed number
    /// (from 1) and the word. Nil unless exactly one change in one reading does. For a prompt
    /// that offers the correction to the person typing; never for a message.
    public static func correctingOneWord(_ typed: SecretBytes) -> (position: Int, word: String)? {
        guard let text = try? SheetHeading.split(typed).text, let readings = try? WordList.readings(text),
              readings[0].words.allSatisfy({ SLIP39.index(of: $0) != nil }) else { return nil }
        var candidates: [[Int]] = []
        for reading in readings {
            let indexes = reading.words.map { SLIP39.index(of: $0)! }
            if !candidates.contains(indexes) { candidates.append(indexes) }
        }
        let corrections = candidates.flatMap { RS1024.oneWordCorrections(candidate: $0) }
        guard corrections.count == 1 else { return nil }
        return (corrections[0].position + 1, SLIP39.words[corrections[0].value])
    }

    init(identifier: Int, extendable: Bool, iterationExponent: Int, groupIndex: Int, groupThreshold: Int,
         groupCount: Int, memberIndex: Int, memberThreshold: Int, value: SecretBytes) {
        self.identifier = identifier
        self.extendable = extendable
        self.iterationExponent = iterationExponent
        self.groupIndex = groupIndex
        self.groupThreshold = groupThreshold
        self.groupCount = groupCount
        self.memberIndex = memberIndex
        self.memberThreshold = memberThreshold
        self.value = value
    }
}

extension SLIP39 {
    static let list = WordList(words)

    /// A whole list word, or its first four letters or more (SLIP-0039 makes them unique).
    static func index(of typed: [UInt8]) -> Int? { list.index(of: typed) }
}

/// The Reed-Solomon checksum over GF(1024) that ends every share ("Checksum").
enum RS1024 {
    private static let generator = [0xe0e040, 0x1c1c080, 0x3838100, 0x7070200, 0xe0e0009,
                                    0x1c0c2412, 0x38086c24, 0x3090fc48, 0x21b1f890, 0x3f3f120]

    static func customization(extendable: Bool) -> [Int] {
        Array((extendable ? "shamir_extendable" : "shamir").utf8).map(Int.init)
    }

    static func polymod(_ values: [Int], from start: Int = 1) -> Int {
        var checksum = start
        for value in values {
            let top = checksum >> 20
            checksum = (checksum & 0xfffff) << 10 ^ value
            for i in 0..<10 {  // a mask, not a branch: share words are secret
                checksum ^= generator[i] & (0 &- (top >> i & 1))
            }
        }
        return checksum
    }

    static func verify(customization: [Int], data: [Int]) -> Bool {
        polymod(customization + data) == 1
    }

    /// Every single-word change (position, new value) that makes `candidate` a valid share:
    /// RS1024's distance lets it correct one wrong word, so a person's one typo is found by
    /// trying every word at every place; none for a share that already passes.
    ///
    /// The checksum is linear over GF(2) (shifts and XORs from a fixed start), so changing the
    /// word at `position` by `delta` changes it by the checksum, from a zero start, of `delta`
    /// followed by zeros for the words after it. Each place's ten one-bit changes are worked out
    /// once and a candidate word costs at most ten XORs, where checking the whole share for each
    /// of up to 59 × 1023 candidates took seconds. A change of word 2's extendable bit changes the
    /// customization string too; those candidates are checked whole.
    static func oneWordCorrections(candidate: [Int]) -> [(position: Int, value: Int)] {
        guard (SLIP39.minimumWords...SLIP39.maximumWords).contains(candidate.count) else { return [] }
        let extendableBit = 1 << 4
        let customization = customization(extendable: candidate[1] & extendableBit != 0)
        // What the change must contribute to make the checksum 1.
        let missing = polymod(customization + candidate) ^ 1
        var found: [(position: Int, value: Int)] = []
        var changed = candidate
        for position in candidate.indices {
            let zeros = [Int](repeating: 0, count: candidate.count - 1 - position)
            let bitChanges = (0..<10).map { polymod([1 << $0] + zeros, from: 0) }
            for value in 0..<1024 where value != candidate[position] {
                let delta = value ^ candidate[position]
                changed[position] = value
                let passes = if position == 1 && delta & extendableBit != 0 {
                    verify(customization: Self.customization(extendable: value & extendableBit != 0), data: changed)
                } else {
                    (0..<10).reduce(0) { delta >> $1 & 1 == 1 ? $0 ^ bitChanges[$1] : $0 } == missing
                }
                if passes, (try? SLIP39Share(wordIndexes: changed)) != nil {
                    found.append((position, value))
                }
            }
            changed[position] = candidate[position]
        }
        return found
    }

    static func checksum(customization: [Int], data: [Int]) -> [Int] {
        let polymod = polymod(customization + data + [0, 0, 0]) ^ 1
        return (0..<3).map { polymod >> (10 * (2 - $0)) & 1023 }
    }
}

/// What a person may copy from a share sheet above its words, as the sheet words it: its
/// title ("Family key share 2 of 3, group 1"; "Fragmento 2 de 3 de la clave familiar"), the
/// words' heading ("This share as 33 words") and the set line ("Set 7945. …"; "Serie 7945: …").
/// Those lines are not words; what they say names the share, and is checked against it.
public struct SheetHeading: Equatable, Sendable {
    /// The share's number in its group, its group and its set, as the lines name them.
    public var member: Int?
    public var group: Int?
    public var set: Int?

    /// The words that name the parts, in the sheets' languages (Templates/share-sheet.*).
    static let shareWords = keywords("share", "fragmento")
    static let ofWords = keywords("of", "de")
    static let groupWords = keywords("group", "grupo")
    static let setWords = keywords("set", "serie")
    static let wordsWords = keywords("words", "palabras")

    private static func keywords(_ words: String...) -> Set<[UInt8]> { Set(words.map { Array($0.utf8) }) }

    /// The typed text without its heading lines, before the words or after them, and what
    /// they say (nil when there were none). A line is a heading only when it reads as one, so
    /// a line of mistyped words is never skipped. The typed bytes stay bytes: a line of words
    /// is looked at, never kept.
    static func split(_ typed: SecretBytes) throws -> (text: SecretBytes, heading: SheetHeading?) {
        var heading = SheetHeading()
        var found = false
        let kept = typed.withUnsafeBytes { bytes -> Range<Int> in
            var lines: [Range<Int>] = []
            var offset = 0
            while offset < bytes.count {
                let end = bytes[offset...].firstIndex { $0 == 0x0a || $0 == 0x0d } ?? bytes.count
                lines.append(offset..<end)
                offset = end + 1
            }
            // Whether a line is a heading (read into `heading`) or blank; false for words.
            func skipped(_ line: Range<Int>) -> Bool {
                var tokens = Self.tokens(UnsafeRawBufferPointer(rebasing: bytes[line]))
                defer { for i in tokens.indices { tokens[i].zeroize() } }
                guard !tokens.isEmpty else { return true }
                guard heading.read(tokens) else { return false }
                found = true
                return true
            }
            let first = lines.firstIndex { !skipped($0) } ?? lines.count
            let last = lines[first...].lastIndex { !skipped($0) } ?? first
            return first < lines.count ? lines[first].lowerBound..<lines[last].upperBound : 0..<0
        }
        guard found else { return (typed, nil) }
        return (try typed.slice(kept), heading)
    }

    /// Reads one line's tokens into what it names; false when the line is no heading.
    private mutating func read(_ tokens: [[UInt8]]) -> Bool {
        func number(_ index: Int) -> Int? {
            guard tokens.indices.contains(index), (1...5).contains(tokens[index].count), tokens[index].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return tokens[index].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        if let at = tokens.firstIndex(where: Self.shareWords.contains), let member = number(at + 1),
           tokens.indices.contains(at + 2), Self.ofWords.contains(tokens[at + 2]), number(at + 3) != nil {
            self.member = member
            if let at = tokens.firstIndex(where: Self.groupWords.contains) { group = number(at + 1) }
            return true
        }
        if let first = tokens.first, Self.setWords.contains(first), let set = number(1) {
            self.set = set
            return true
        }
        return tokens.contains(where: Self.shareWords.contains) && tokens.contains(where: Self.wordsWords.contains)
    }

    /// A line's tokens: runs of ASCII letters (lowercased) and digits; anything else splits.
    /// Scratch copies of what may be secret words: the caller zeroes them.
    private static func tokens(_ line: UnsafeRawBufferPointer) -> [[UInt8]] {
        var tokens: [[UInt8]] = []
        var token: [UInt8] = []
        token.reserveCapacity(line.count)  // no regrowth: no partial copies left in freed memory
        defer { token.zeroize() }
        for byte in line {
            let lower = (0x41...0x5a).contains(byte) ? byte | 0x20 : byte
            if (0x61...0x7a).contains(lower) || (0x30...0x39).contains(lower) {
                token.append(lower)
            } else if !token.isEmpty {
                tokens.append(token)
                token.removeAll(keepingCapacity: true)
            }
        }
        if !token.isEmpty { tokens.append(token) }
        return tokens
    }
}
