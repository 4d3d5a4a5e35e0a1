import Testing
@testable import VaultCore
@testable import VaultPaper

/// Words typed from a printed grid without their numbers (down each column as printed, or
/// across each row), and the one wrong word a share's checksum can find.
@Suite struct WordOrderTests {
    let random = SeededRandom(seed: 0x0dd)

    /// A sheet's grid read across its rows: 1, 9, 17, 2, 10, 18, … for 24 words in 3 columns.
    static func acrossRows<T>(_ words: [T], columns: Int = 3) -> [T] {
        let rows = (words.count + columns - 1) / columns
        return (0..<rows).flatMap { row in (0..<columns).map { $0 * rows + row }.filter { $0 < words.count } }.map { words[$0] }
    }

    /// Words as a person copies a 3-column grid: one line a row.
    static func lines(_ words: [String]) -> String {
        stride(from: 0, to: words.count, by: 3).map { words[$0..<min($0 + 3, words.count)].joined(separator: " ") }.joined(separator: "\n")
    }

    @Test func theGridTypedAcrossItsRowsIsPutBackInOrder() throws {
        #expect(WordList.printedOrder(ofRows: Self.acrossRows(Array(0..<24)), columns: 3) == Array(0..<24))
        // A share's 20 words: the last column is shorter.
        #expect(WordList.printedOrder(ofRows: Self.acrossRows(Array(0..<20)), columns: 3) == Array(0..<20))
        #expect(WordList.printedOrder(ofRows: Self.acrossRows(Array(0..<33)), columns: 3) == Array(0..<33))
    }

    @Test func aKeyTypedAcrossTheRowsIsReadAndSaysSo() throws {
        var checked = 0
        for _ in 0..<64 {
            let key = try SecretKey.generate(using: random)
            let words = try key.withUnsafeBytes { try BIP39.words(for: SecretBytes(copying: $0)) }
            let asPrinted = try RecoverySheet.key(fromTyped: words.joined(separator: " ")) { nil }
            let rows = Self.lines(Self.acrossRows(words))
            guard (try? BIP39.readings(fromWords: rows))?.count == 1 else { continue }  // both pass: the ambiguity test's case
            let typed = try RecoverySheet.key(fromTyped: rows) { nil }
            #expect(asPrinted.key == key && typed.key == key && typed.order == .printedGridByRows)
            checked += 1
        }
        #expect(checked > 50)
    }

    /// About one key in 256 passes the 8-bit checksum both ways: then neither is guessed, and
    /// the refusal names both public keys.
    @Test func bothOrdersPassingIsRefusedNamingBothPublicKeys() throws {
        var found = false
        for _ in 0..<4000 where !found {
            let key = try SecretKey.generate(using: random)
            let words = try key.withUnsafeBytes { try BIP39.words(for: SecretBytes(copying: $0)) }
            guard try BIP39.readings(fromWords: Self.lines(words)).count == 2 else { continue }
            found = true
            do {
                _ = try RecoverySheet.key(fromTyped: Self.lines(words)) { nil }
                Issue.record("an ambiguous order was guessed")
            } catch let error as VaultError {
                #expect(error.code == .ambiguousWordOrder)
                #expect(error.reason.contains(key.publicKey.npub))
            }
            let numbered = words.enumerated().map { "\($0 + 1). \($1)" }.joined(separator: " ")
            #expect(try RecoverySheet.key(fromTyped: numbered) { nil }.key == key)
            // On one line, as tools and wallets write a mnemonic, the words are in their order.
            #expect(try RecoverySheet.key(fromTyped: words.joined(separator: " ")) { nil }.key == key)
        }
        #expect(found)
    }

    @Test func neitherOrderPassingAsksForTheNumbers() throws {
        let key = try SecretKey.generate(using: random)
        var words = try key.withUnsafeBytes { try BIP39.words(for: SecretBytes(copying: $0)) }
        words.swapAt(3, 11)
        words.swapAt(5, 20)
        do {
            _ = try BIP39.readings(fromWords: Self.lines(words))
            Issue.record("wrong words were accepted")
        } catch let error as VaultError {
            #expect(error.code == .malformedKey && error.hint == "type the numbers with the words, as printed")
        }
    }

    func share() throws -> SLIP39Share {
        let secret = try SecretBytes(count: 32) { for i in 0..<32 { $0[i] = UInt8(i * 7 & 0xff) } }
        return try SLIP39.split(secret: secret, groupThreshold: 1, groups: [SLIP39.Group(threshold: 2, count: 3)], passphrase: [],
                                iterationExponent: 0, random: random)[0][0]
    }

    @Test func aShareTypedAcrossTheRowsIsRead() throws {
        let share = try share()
        let read = try SLIP39Share.read(words: Self.lines(Self.acrossRows(share.words())))
        #expect(read.order == .printedGridByRows && read.share.words() == share.words())
    }

    /// The correction search adds up each place's one-bit changes to the checksum rather than
    /// checking the whole share for each candidate word: at the places it is compared, it finds
    /// exactly what checking every change whole finds, a change of word 2's extendable bit
    /// (which changes the customization string) included.
    @Test(arguments: [0, 1, 2, 16, 32]) func theCorrectionSearchAgreesWithCheckingEveryChangeWhole(position: Int) throws {
        let valid = try share().wordIndexes()
        for wrong in [valid[position] ^ 1, valid[position] ^ 16, valid[position] ^ 0x3ff] {
            var typed = valid
            typed[position] = wrong
            let whole = [0, 1, 2, position, 32].flatMap { place in
                (0..<1024).filter { $0 != typed[place] }.compactMap { value -> [Int]? in
                    var changed = typed
                    changed[place] = value
                    let customization = RS1024.customization(extendable: changed[1] >> 4 & 1 == 1)
                    guard RS1024.verify(customization: customization, data: changed), (try? SLIP39Share(wordIndexes: changed)) != nil else { return nil }
                    return [place, value]
                }
            }
            let searched = RS1024.oneWordCorrections(candidate: typed).filter { [0, 1, 2, position, 32].contains($0.position) }
            #expect(Set(searched.map { [$0.position, $0.value] }) == Set(whole), "word \(position + 1) as \(wrong)")
            #expect(whole.contains([position, valid[position]]))
        }
    }

    /// RS1024 corrects one wrong word: every place, in both orders, is found, and the
    /// correction is the word that was there.
    @Test(arguments: [0, 5, 17, 32]) func oneWrongWordIsLocated(position: Int) throws {
        let share = try share()
        var words = share.words()
        let original = words[position]
        words[position] = SLIP39.words[(SLIP39.index(of: original)! + 1) % 1024]
        for typed in [words, Self.acrossRows(words)] {
            #expect(throws: ShareProblem.wrongWord(share: 1, position: position + 1)) { try SLIP39Share(words: Self.lines(typed)) }
            let correction = try #require(SLIP39Share.correctingOneWord(.text(Self.lines(typed))))
            #expect(correction.position == position + 1 && correction.word == original)
        }
        words[(position + 9) % 33] = SLIP39.words[(SLIP39.index(of: words[(position + 9) % 33])! + 3) % 1024]
        #expect(throws: ShareProblem.checksumFailed(share: 1)) { try SLIP39Share(words: words.joined(separator: " ")) }
        #expect(SLIP39Share.correctingOneWord(.text(words.joined(separator: " "))) == nil)
    }
}
