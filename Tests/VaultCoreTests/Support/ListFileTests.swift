import Testing
@testable import VaultCore

/// A list of entries is recovery words when twelve of its entries' words are list words, a
/// number or a bullet before them aside, and only then.
@Suite struct ListFileTests {
    @Test func recoveryWordsTypedOneALineAreFound() {
        let words = ["legal", "winner", "thank", "year", "wave", "sausage", "worth", "useful", "legal", "winner", "thank", "yellow"]
        #expect(ListFile.holdsRecoveryWords(words))
        #expect(ListFile.holdsRecoveryWords(words.enumerated().map { "\($0.offset + 1). \($0.element)" }))
        #expect(ListFile.holdsRecoveryWords(words.enumerated().map { "(\($0.offset + 1))\($0.element)" }))
        #expect(!ListFile.holdsRecoveryWords(Array(words.prefix(11))))
    }

    /// A hostile trial: sequential upper-case UUIDs end in hex letters that are list words
    /// (`…-000000000ADD`, `…-000000000BED`), and 13,586 of them were refused as recovery words.
    @Test func idsEndingInListWordsAreNoRecoveryWords() {
        let ids = (1...20_000).map { number -> String in
            let hex = String(number, radix: 16, uppercase: true)
            return "00000000-0000-0000-0000-" + String(repeating: "0", count: 12 - hex.count) + hex
        }
        #expect(ids.contains { $0.hasSuffix("ADD") } && ids.contains { $0.hasSuffix("BED") })
        #expect(!ListFile.holdsRecoveryWords(ids))
        #expect(!ListFile.holdsRecoveryWords(ids.map { "did:plc:x#" + $0 }))
    }

    /// An ASCII entry is read byte by byte (a revoke's list of 100,000 ids spent a fifth of its
    /// time splitting by Character): the same answer as reading it by Character, for entries
    /// made of list words, numbers, bullets, ids, quotes and every kind of ASCII white space.
    @Test func asciiEntriesReadAsByCharacter() {
        let random = SeededRandom(seed: 0x715_7F11E)
        let pieces = ["jump", "legal", "Winner", "zoo.", "'thank'", "\"year\"", "1.", "(3)", "12)", "-", "*", "#", "[4]", "7:", "123456",
                      "1234567jump", "00000000-0000-4000-8000-00000000000a", "did:plc:x#d1", "abc", "xylophone", "a", ".", "\u{7f}", "é"]
        let spaces = [" ", "  ", "\t", "\u{0b}", "\u{0c}", "\r", "\r\n", ""]
        for _ in 0..<5_000 {
            var entry = ""
            for _ in 0..<random.int(1...5) {
                entry += pieces[random.int(0...(pieces.count - 1))] + spaces[random.int(0...(spaces.count - 1))]
            }
            #expect(ListFile.WordRun.listWords(in: entry) == ListFile.WordRun.listWordsReadByCharacter(in: entry), "\(entry.debugDescription)")
        }
    }
}
