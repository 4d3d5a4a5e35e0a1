/// BIP-39 mnemonic words as an encoding of raw bytes: the recovery sheet writes the parent's 32
/// key bytes as 24 English words. Only the entropy ↔ words mapping is used here; these words
/// are the key itself, not a seed for NIP-06 derivation.
public enum BIP39 {
    /// The words for `entropy` (16, 20, 24, 28 or 32 bytes): its bits followed by the first
    /// len/32 bits of its SHA-256, in 11-bit groups, each indexing the wordlist; one space
    /// between words, in protected memory.
    public static func phrase(for entropy: SecretBytes) throws -> SecretBytes {
        var indexes = try indexes(for: entropy)
        defer { for i in indexes.indices { indexes[i] = 0 } }
        return try english.phrase(indexes)
    }

    /// The wordlist indexes for `entropy` (the digits of a Standard SeedQR, for example).
    public static func indexes(for entropy: SecretBytes) throws -> [Int] {
        guard [16, 20, 24, 28, 32].contains(entropy.count) else {
            throw VaultError.entropyNotEncodable(byteCount: entropy.count)
        }
        var bits = entropy.withUnsafeBytes { Array($0) } + [entropy.withUnsafeBytes { SHA256.hash($0) }[0]]
        defer { bits.zeroize() }
        let count = (entropy.count * 8 + entropy.count / 4) / 11
        return (0..<count).map { word in
            var value = 0
            for bit in (word * 11)..<(word * 11 + 11) {
                value = value << 1 | Int(bits[bit / 8] >> (7 - bit % 8) & 1)
            }
            return value
        }
    }

    /// The entropy behind `text`: 12 to 24 words in any case, separated by any whitespace,
    /// each either a whole list word or at least its first four letters (unique in the list);
    /// numbers between them are ignored.
    ///
    /// Unnumbered words may be in the printed order or typed row by row across the printed
    /// grid: the one whose checksum passes is taken. When both pass (about once in 256 for 24
    /// words) the order is a guess, so it is refused (``VaultError/Code/ambiguousWordOrder``);
    /// ``readings(fromWords:)`` gives both, for a caller that can tell them apart.
    public static func entropy(fromWords text: SecretBytes) throws -> SecretBytes {
        let found = try readings(fromWords: text)
        guard found.count == 1 else { throw VaultError.ambiguousWordOrder(identities: []) }
        return found[0].entropy
    }

    /// One way of reading typed words whose checksum passes.
    public struct Reading: Sendable {
        public let order: WordOrder
        public let entropy: SecretBytes
    }

    /// Every reading of the typed words (``WordList/readings(_:)``) whose checksum passes, at
    /// least one: none throws, with the advice to type the numbers when they were left out.
    public static func readings(fromWords text: SecretBytes) throws -> [Reading] {
        let readings = try WordList.readings(text)
        let typed = readings[0].words
        // What else a person types from a sheet: the public key of its check values, or a
        // share's words (a hostile trial: each was "found 16" or "found 33" words).
        if typed.first?.starts(with: Array("npub1".utf8)) == true { throw VaultError.publicKeyTypedForWords() }
        // A share's words, perhaps with its check line (`HVT-SHARE 12951 …`) after them.
        let shareWords = typed.prefix { SLIP39.list.index(of: $0) != nil }.count
        let mnemonicLike = [12, 15, 18, 21, 24].contains(typed.count) && typed.allSatisfy { english.index(of: $0) != nil }
        if !mnemonicLike, (20...59).contains(shareWords), typed.count - shareWords <= 3 { throw VaultError.shareTypedForWords(shareWords) }
        guard [12, 15, 18, 21, 24].contains(typed.count) else { throw VaultError.wrongWordCount(typed.count) }
        // Unknown words first, by their typed place: the same words in any order.
        for (position, word) in typed.enumerated() where english.index(of: word) == nil {
            throw VaultError.notABIP39Word(position: position + 1)
        }
        var passing: [Reading] = []
        var tried: [[Int]] = []
        defer { for i in tried.indices { for j in tried[i].indices { tried[i][j] = 0 } } }
        for reading in readings {
            let indexes = reading.words.map { english.index(of: $0)! }
            // Words that read alike both ways (a repeated word, prefixes) are one reading.
            guard !tried.contains(indexes) else { continue }
            tried.append(indexes)
            if let entropy = try? entropy(fromIndexes: indexes) { passing.append(Reading(order: reading.order, entropy: entropy)) }
        }
        guard !passing.isEmpty else {
            guard readings.count == 1 else { throw VaultError.wordsFailChecksumInEitherOrder() }
            throw VaultError.bip39ChecksumFails(numbered: readings[0].order == .numbered)
        }
        return passing
    }

    /// The entropy behind wordlist indexes, checking the BIP-39 checksum.
    public static func entropy(fromIndexes indexes: [Int]) throws -> SecretBytes {
        guard [12, 15, 18, 21, 24].contains(indexes.count), indexes.allSatisfy({ (0..<2048).contains($0) }) else {
            throw VaultError.wrongWordIndexes()
        }
        let totalBits = indexes.count * 11
        let entropyCount = totalBits * 32 / 33 / 8
        var bytes = [UInt8](repeating: 0, count: (totalBits + 7) / 8)
        defer { bytes.zeroize() }
        for (word, index) in indexes.enumerated() {
            for offset in 0..<11 where index >> (10 - offset) & 1 == 1 {
                let bit = word * 11 + offset
                bytes[bit / 8] |= 0x80 >> UInt8(bit % 8)
            }
        }
        let entropy = try bytes.withUnsafeBytes { try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<entropyCount])) }
        let checksumBits = entropyCount / 4
        let expected = entropy.withUnsafeBytes { SHA256.hash($0) }[0] >> (8 - checksumBits)
        let found = bytes[entropyCount] >> (8 - checksumBits)
        guard expected == found else {
            throw VaultError.bip39ChecksumFails(numbered: true)
        }
        return entropy
    }

    private static let english = WordList(englishWords)

    /// The list index of `typed` (lower-case ASCII): a whole word, or its first four letters or
    /// more (``HeldSecrets`` reads a held key's words in text by it).
    static func index(ofWord typed: [UInt8]) -> Int? { english.index(of: typed) }

    /// A word typed at a prompt, checked against the BIP-39 English list.
    public static func check(typed: SecretBytes) -> TypedWord { english.check(typed) }
}

extension VaultError {
    /// Entropy of a length BIP-39 does not encode.
    static func entropyNotEncodable(byteCount: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidKey, "BIP-39 encodes 16 to 32 bytes in steps of 4, not \(byteCount)", file: file, line: line)
    }

    /// An npub typed where the words go: a public key, which restores nothing.
    static func publicKeyTypedForWords(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "that is a public key (npub1…, the sheet's check value), not the words: it restores nothing",
                   hint: "type the 24 words printed on the sheet, or the key (nsec1…)", file: file, line: line)
    }

    /// A share's words typed where recovery words go.
    static func shareTypedForWords(_ count: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "these \(count) words are a share's (SLIP-0039), not a recovery sheet's: a share restores the key only with the others of its set",
                   hint: "combine the shares: recovery-sheet combine SHARE…", file: file, line: line)
    }

    /// Typed words of a count no BIP-39 mnemonic has.
    static func wrongWordCount(_ count: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "BIP-39 words come in 12, 15, 18, 21 or 24; found \(count)", file: file, line: line)
    }

    /// A typed word that is not on the list, by its place only: its closest list words would
    /// narrow a secret word to three in a message that may be logged (issue 44), as SLIP-0039's
    /// refusal never did; the prompt shows them on the terminal it clears afterwards.
    static func notABIP39Word(position: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "word \(position) is not on BIP-39's English list, the one the sheets print",
                   hint: "compare it with the sheet; typed at the prompt (no FILE, on a terminal), each word is checked as it is typed and the closest list words are shown",
                   file: file, line: line)
    }

    /// The words do not pass their checksum; unnumbered words may have been typed across the grid.
    static func bip39ChecksumFails(numbered: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "the words' BIP-39 checksum does not match: a word is wrong or out of order",
                   hint: numbered ? nil : "typed from the printed grid? type the numbers with the words, as printed", file: file, line: line)
    }

    /// Word indexes that are no BIP-39 mnemonic (a count or an index out of range).
    static func wrongWordIndexes(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "BIP-39 needs 12 to 24 word indexes below 2048", file: file, line: line)
    }
}
