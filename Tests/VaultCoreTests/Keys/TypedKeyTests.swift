import Testing
@testable import VaultCore
@testable import VaultPaper

/// Restoring from every form a sheet prints (issue 12): the numbered word grid typed in any
/// order, and the key in groups of four, plain or encrypted.
@Suite struct TypedKeyTests {
    let random = SeededRandom(seed: 0x7e1)

    @Test func numberedWordsGoToTheirPlaces() throws {
        let key = try SecretKey.generate(using: random)
        let words = try key.withUnsafeBytes { try BIP39.words(for: SecretBytes(copying: $0)) }
        // The grid read row by row: 1, 9, 17, 2, 10, 18, …
        let rows = (0..<8).flatMap { row in [row, row + 8, row + 16] }.map { "\($0 + 1). \(words[$0])" }.joined(separator: "  ")
        #expect(try RecoverySheet.key(fromTyped: rows) { nil }.key == key)
        // Unnumbered words keep their order; a numbering that is not 1…n is ignored.
        #expect(try WordList.tokens("b a c") == ["b", "a", "c"])
        #expect(try WordList.tokens("2 b 1 a 3 c") == ["a", "b", "c"])
        #expect(try WordList.tokens("1 a b 3 c") == ["a", "b", "c"])  // partly numbered: as typed
        #expect(throws: VaultError(.malformedKey, "")) { try WordList.tokens("2 b 2 a 3 c") }
    }

    @Test func theKeyAsPrintedInGroupsOfFour() throws {
        let key = try SecretKey.generate(using: random)
        let nsec = String(decoding: try key.nsec().withUnsafeBytes { Array($0) }, as: UTF8.self)
        let grouped = stride(from: 0, to: nsec.count, by: 4).map { String(nsec.dropFirst($0).prefix(4)) }.joined(separator: " ")
        #expect(try RecoverySheet.key(fromTyped: grouped.uppercased() + "\n") { nil }.key == key)
        let ncryptsec = try NIP49.encrypt(key, passphrase: "pass", logN: 4, random: random)
        let typed = stride(from: 0, to: ncryptsec.count, by: 4).map { String(ncryptsec.dropFirst($0).prefix(4)) }.joined(separator: "\n")
        #expect(throws: VaultError(.passphraseNeeded, "")) { try RecoverySheet.key(fromTyped: typed) { nil } }
        let opened = try RecoverySheet.key(fromTyped: typed) { "pass" }
        #expect(opened.key == key && opened.encrypted)
    }

    /// Typed words are read as bytes: any Unicode white space or a comma separates them, ASCII
    /// letters fold, numbering survives Windows line ends, and text that is not UTF-8 or not
    /// ASCII letters is a word no list has, never a crash or a match.
    @Test func typedWordsAreReadAsBytes() throws {
        #expect(try WordList.tokens("2\u{00A0}b\u{3000}1 A,3\r\nC") == ["a", "b", "c"])
        #expect(try WordList.tokens("1.\r\nabandon\r\n2)\r\nability") == ["abandon", "ability"])
        #expect(try WordList.tokens("ÁBANDON") == ["Ábandon"])  // only ASCII folds; no list word matches
        #expect(throws: VaultError(.malformedKey, "")) { try BIP39.entropy(fromWords: .test([0x61, 0x62, 0xff, 0xfe] + Array(" abandon".utf8))) }
        #expect(BIP39.check(typed: .text("aban don")) != .word("abandon"), "two words at one prompt are no word")
        #expect(BIP39.check(typed: .text(" ABANDON ")) == .word("abandon"))
        #expect(SLIP39.check(typed: .text("acad")) == .word("academic"))
        // A long token is bounded: closest words are found from its first 16 letters.
        if case .unknown(let closest) = BIP39.check(typed: .text(String(repeating: "z", count: 5000))) { #expect(closest.count == 3) }
        else { Issue.record("a 5000-letter word was accepted") }
    }

    /// Issue 37: a typed key forgiven its spaces and case, and a character that does not fit
    /// named by its printed group (the sheet prints four characters a group from the first).
    @Test func aMistypedCharacterIsNamedByItsGroup() throws {
        let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l")
        for _ in 0..<20 {
            let key = try SecretKey.generate(using: random)
            let nsec = Array(String(decoding: try key.nsec().withUnsafeBytes { Array($0) }, as: UTF8.self))
            let grouped = stride(from: 0, to: nsec.count, by: 4).map { String(nsec[$0..<min($0 + 4, nsec.count)]) }.joined(separator: " \n")
            let normalized = try #require(try TypedKey.normalized(.text(grouped.uppercased())))
            #expect(normalized == (try key.nsec()))
            #expect(TypedKey.problem(normalized) == nil)
            let place = random.int(5...(nsec.count - 1))
            var changed = nsec
            changed[place] = alphabet.first { $0 != nsec[place] && $0 != "q" } ?? "p"
            let checksum = try #require(TypedKey.problem(.text(String(changed))))
            #expect(checksum.reason.contains("checksum points to character \(place % 4 + 1) of group \(place / 4 + 1):"))
            changed[place] = "o"
            let letter = try #require(TypedKey.problem(.text(String(changed))))
            #expect(letter.reason.contains("character \(place % 4 + 1) of group \(place / 4 + 1) is 'o', which no key uses: it is probably the digit 0"))
            let short = try #require(TypedKey.problem(.text(String(nsec.dropLast()))))
            #expect(short.reason.contains("has 62 characters"))
        }
        #expect(try TypedKey.normalized(.text("abandon ability")) == nil)
        #expect(WordOrder.printedPlaces(typedAcrossRows: 24).prefix(6) == [0, 8, 16, 1, 9, 17])
    }
}
