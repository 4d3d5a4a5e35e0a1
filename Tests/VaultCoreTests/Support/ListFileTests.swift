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
}
