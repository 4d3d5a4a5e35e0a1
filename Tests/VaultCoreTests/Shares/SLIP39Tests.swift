import Foundation
import Testing
@testable import VaultCore

/// SLIP-0039 against its 45 published vectors (trezor/python-shamir-mnemonic vectors.json) and
/// as properties: random splits combine from every qualifying subset, and refusals are values.
@Suite struct SLIP39Tests {
    /// `[description, mnemonics, master secret hex (empty: must fail), xprv]`.
    static func vectors() throws -> [(name: String, mnemonics: [String], secret: String)] {
        let data = try Data(contentsOf: TestFiles.vectors.appendingPathComponent("slip39_vectors.json"))
        let rows = try #require(try JSONSerialization.jsonObject(with: data) as? [[Any]])
        return rows.map { ($0[0] as! String, $0[1] as! [String], $0[2] as! String) }
    }

    @Test func wordlistIsThePublishedOne() throws {
        let published = try String(contentsOf: TestFiles.vectors.appendingPathComponent("slip39_wordlist.txt"), encoding: .utf8)
        #expect(SLIP39.words.count == 1024)
        #expect(SLIP39.words.joined(separator: "\n") + "\n" == published)
        #expect(Set(SLIP39.words.map { $0.prefix(4) }).count == 1024)
    }

    @Test func publishedVectors() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count == 45)
        let passphrase = Array("TREZOR".utf8)
        for vector in vectors {
            let result: Result<SecretBytes, Error> = Result {
                let shares = try vector.mnemonics.enumerated().map { try SLIP39Share(words: $1, share: $0 + 1) }
                return try SLIP39.combine(shares, passphrase: passphrase)
            }
            if vector.secret.isEmpty {
                #expect(throws: ShareProblem.self, "\(vector.name) must be refused") { try result.get() }
            } else {
                #expect(try result.get().testBytes == hex(vector.secret), "\(vector.name)")
                // Every valid share's words round-trip through its fields.
                for mnemonic in vector.mnemonics {
                    #expect(try SLIP39Share(words: mnemonic).words().joined(separator: " ") == mnemonic, "\(vector.name)")
                }
            }
        }
    }

    @Test func refusalsOfTheInvalidVectorsAreTheRightCases() throws {
        let vectors = try Self.vectors()
        func problem(_ number: Int) -> ShareProblem? {
            let vector = vectors[number - 1]
            do {
                let shares = try vector.mnemonics.enumerated().map { try SLIP39Share(words: $1, share: $0 + 1) }
                _ = try SLIP39.combine(shares, passphrase: Array("TREZOR".utf8))
                return nil
            } catch { return error as? ShareProblem }
        }
        // One wrong word: RS1024 points to it (the vector changed its last word).
        #expect(problem(2) == .wrongWord(share: 1, position: 20))
        #expect(problem(3) == .badPadding(share: 1))
        #expect(problem(5).map { if case .notEnoughShares(needed: 2, given: 1, _) = $0 { true } else { false } } == true)
        #expect(problem(6).map { if case .differentSets(share: 2, _, _) = $0 { true } else { false } } == true)
        #expect(problem(11).map { if case .duplicateMemberIndex(share: 2, sameAs: 1) = $0 { true } else { false } } == true)
        #expect(problem(12) == .memberThresholdsDiffer(share: 2, group: problem12Group(vectors)))
        #expect(problem(13).map { if case .digestMismatch = $0 { true } else { false } } == true)
        #expect(problem(39) == .wrongWordCount(share: 1, count: 19))
        // The same set's number with other settings (iteration exponent, group threshold, group
        // count): refused as another set, and said so, not as "set N, the others from set N".
        for number in [7, 8, 9, 26, 27, 28] {
            let found = problem(number)
            guard case let .differentSets(_, first, other) = found, first == other else {
                Issue.record("vector \(number): \(String(describing: found))")
                continue
            }
            #expect(found?.reason.contains("names set \(first) as the others do, but not its settings") == true)
            #expect(found?.reason.contains("the others from set") == false)
        }
    }

    private func problem12Group(_ vectors: [(name: String, mnemonics: [String], secret: String)]) -> Int {
        ((try? SLIP39Share(words: vectors[11].mnemonics[1]))?.groupIndex ?? -1) + 1
    }

    @Test func randomSplitsCombineFromEveryQualifyingChoice() throws {
        let random = SeededRandom(seed: 39)
        var order = SeededGenerator(source: random)
        for round in 0..<12 {
            let secret = try random.secret(round % 3 == 0 ? 16 : 32)
            let groupCount = random.int(1...4)
            let groups = (0..<groupCount).map { _ -> SLIP39.Group in
                let count = random.int(1...5)
                return SLIP39.Group(threshold: count == 1 ? 1 : random.int(2...count), count: count)
            }
            let groupThreshold = random.int(1...groupCount)
            let passphrase = round % 2 == 0 ? [] : Array("family \(round)".utf8)
            let shares = try SLIP39.split(secret: secret, groupThreshold: groupThreshold, groups: groups, passphrase: passphrase,
                                          iterationExponent: 0, extendable: round % 4 != 3, random: random)
            #expect(shares.map(\.count) == groups.map(\.count))
            // Enough shares of enough groups, shuffled, through their words.
            var chosen: [SLIP39Share] = []
            for group in Array(0..<groupCount).shuffled(using: &order).prefix(groupThreshold) {
                for member in Array(shares[group].indices).shuffled(using: &order).prefix(groups[group].threshold) {
                    chosen.append(try SLIP39Share(words: shares[group][member].words().joined(separator: " ")))
                }
            }
            #expect(try SLIP39.combine(chosen.shuffled(using: &order), passphrase: passphrase) == secret)
            // One share short of a threshold is refused, never wrong.
            if chosen.count > 1, groups.allSatisfy({ $0.threshold > 1 }) || groupThreshold > 1 {
                #expect(throws: ShareProblem.self) { try SLIP39.combine(Array(chosen.dropLast()), passphrase: passphrase) }
            }
        }
    }

    @Test func allSharesOfASetCombineAndAStrangerDoesNotFit() throws {
        let random = SeededRandom(seed: 7)
        let secret = try random.secret(32)
        let set = try SLIP39.split(secret: secret, groupThreshold: 1, groups: [.init(threshold: 2, count: 3)], iterationExponent: 0, random: random)[0]
        #expect(try SLIP39.combine(set) == secret)
        #expect(set.allSatisfy { $0.words().count == 33 })
        let other = try SLIP39.split(secret: secret, groupThreshold: 1, groups: [.init(threshold: 2, count: 3)], iterationExponent: 0, random: random)[0]
        #expect(throws: ShareProblem.differentSets(share: 3, firstSet: set[0].identifier, otherSet: other[2].identifier)) {
            try SLIP39.combine([set[0], set[1], other[2]])
        }
        #expect(throws: ShareProblem.duplicateShare(share: 2, sameAs: 1)) { try SLIP39.combine([set[0], set[0]]) }
        #expect(throws: ShareProblem.notEnoughShares(needed: 2, given: 1, set: set[0].identifier)) { try SLIP39.combine([set[2]]) }
    }

    /// A parents' trial: a picture of one sheet's share code beside another set's check code
    /// was combined without a word, and of two sheets in one picture one was used. A picture is
    /// one sheet, its two codes of one set; the same code read twice is one.
    @Test func aPictureIsOneSheetItsCodesOfOneSet() throws {
        let random = SeededRandom(seed: 44)
        let secret = try random.secret(32)
        let set = try SLIP39.split(secret: secret, groupThreshold: 1, groups: [.init(threshold: 2, count: 3)], iterationExponent: 0, random: random)[0]
        let other = try SLIP39.split(secret: secret, groupThreshold: 1, groups: [.init(threshold: 2, count: 3)], iterationExponent: 0, random: random)[0]
        let household = Household(parentPublicKey: try SecretKey(secret: secret).publicKey)
        func check(_ share: SLIP39Share) throws -> SecretBytes { .test(Array(ShareCodes.checkCode(set: share.identifier, household: household).utf8)) }
        let read = try ShareCodes.read(payloads: [try ShareCodes.shareCode(set[0]), try check(set[0]), try ShareCodes.shareCode(set[0])], share: 1)
        #expect(read.share?.memberIndex == set[0].memberIndex && read.check?.set == set[0].identifier)
        let mixed = try ShareCodes.read(payloads: [try ShareCodes.shareCode(set[0]), try check(other[0])], share: 1)
        #expect(throws: ShareProblem.pictureMixesSheets(share: 1, checkSet: other[0].identifier, codeSet: set[0].identifier)) {
            try ShareCodes.requireOneSet(check: mixed.check, share: mixed.share!, number: 1)
        }
        #expect(throws: ShareProblem.severalSheetsInOnePicture(share: 2)) {
            try ShareCodes.read(payloads: [try ShareCodes.shareCode(set[0]), try ShareCodes.shareCode(set[1])], share: 2)
        }
        #expect(throws: ShareProblem.severalSheetsInOnePicture(share: 1)) {
            try ShareCodes.read(payloads: [try ShareCodes.shareCode(set[0]), try check(set[0]), try check(other[1])], share: 1)
        }
    }

    /// Issue 37: a share given again counts once when the distinct ones are enough, and a key
    /// combined under the wrong passphrase is told apart by the sheets' check code only.
    @Test func repeatsCountOnceAndTheCheckCodeCatchesAWrongPassphrase() throws {
        let random = SeededRandom(seed: 37)
        let secret = try random.secret(32)
        let passphrase = Array("rose garden".utf8)
        let set = try SLIP39.split(secret: secret, groupThreshold: 1, groups: [.init(threshold: 2, count: 3)], passphrase: passphrase,
                                   iterationExponent: 0, random: random)[0]
        #expect(try SLIP39.combine([set[1], set[1], set[2]], passphrase: .test(passphrase), countingRepeatsOnce: true) == secret)
        #expect(throws: ShareProblem.duplicateShare(share: 2, sameAs: 1)) { try SLIP39.combine([set[1], set[1]], countingRepeatsOnce: true) }
        #expect(throws: ShareProblem.duplicateShare(share: 3, sameAs: 2)) { try SLIP39.combine([set[0], set[1], set[1]]) }

        let key = try SecretKey(secret: secret)
        let household = Household(parentPublicKey: key.publicKey)
        let check = (set: set[0].identifier, household: household.id.shortHex)
        for wrong: [UInt8]? in [nil, Array("rose garden.".utf8)] {
            let restored = try SecretKey(secret: SLIP39.combine([set[0], set[2]], passphrase: wrong.map(SecretBytes.test)))
            #expect(restored != key)  // SLIP-0039 cannot tell: another valid key
            let other = Household(parentPublicKey: restored.publicKey).id
            #expect(ShareCodes.check(restored: other, against: [check, check]) == .otherHousehold(household.id.shortHex, agreeing: true))
            #expect(ShareCodes.check(restored: other, against: [check, (set: check.set, household: "000000000000")]) == .otherHousehold(household.id.shortHex, agreeing: false))
        }
        #expect(ShareCodes.check(restored: household.id, against: [check]) == .matches)
        #expect(ShareCodes.check(restored: household.id, against: []) == .noCheckCode)
        #expect(VaultError.sharesRestoreAnotherKey(named: "0a92686c7aa4", checkCodesAgree: true, passphraseGiven: false).code.category == .authentication)
    }

    /// Issue 37: the sheet's own title and set line, copied with the words, are skipped, and
    /// what they say must be the share the words are.
    @Test func theSheetsTitleNamesTheShare() throws {
        let random = SeededRandom(seed: 38)
        let set = try SLIP39.split(secret: random.secret(32), groupThreshold: 1, groups: [.init(threshold: 2, count: 3)], iterationExponent: 0, random: random)[0]
        let words = set[1].words().joined(separator: " ")
        for heading in ["Family key share 2 of 3", "Fragmento 2 de 3 de la clave familiar\nEste fragmento en 33 palabras", "\nSet \(set[1].identifier)."] {
            #expect(try SLIP39Share(words: heading + "\n" + words).memberIndex == 1, "\(heading)")
            #expect(try SLIP39Share(words: words + "\n" + heading).memberIndex == 1, "\(heading)")
        }
        #expect(throws: ShareProblem.headingNamesAnotherShare(share: 2, named: "share 3", words: "share 2")) {
            try SLIP39Share(words: "Family key share 3 of 3\n" + words, share: 2)
        }
        #expect(throws: ShareProblem.headingNamesAnotherShare(share: 1, named: "group 2", words: "group 1")) {
            try SLIP39Share(words: "Family key share 2 of 3, group 2\n" + words)
        }
        // A line of words is never taken for a heading: an unknown word is still placed.
        #expect(throws: ShareProblem.unknownWord(share: 1, position: 1)) { try SLIP39Share(words: "sharex 2 of 3\n" + words) }
    }

    @Test func aTwoLevelSplitNamesTheGroupBelowItsThreshold() throws {
        let random = SeededRandom(seed: 11)
        let secret = try random.secret(32)
        // Either parent's share alone, or two of three relatives' shares.
        let groups = try SLIP39.split(secret: secret, groupThreshold: 1, groups: [.init(threshold: 1, count: 1), .init(threshold: 1, count: 1),
                                                                                 .init(threshold: 2, count: 3)], iterationExponent: 0, random: random)
        #expect(try SLIP39.combine([groups[1][0]]) == secret)
        #expect(try SLIP39.combine([groups[2][2], groups[2][0]]) == secret)
        // Every group given is checked, even past the threshold; a share that cannot be is refused.
        #expect(try SLIP39.combine([groups[0][0], groups[2][1], groups[1][0], groups[2][0]]) == secret)
        #expect(throws: ShareProblem.unusedShare(share: 2)) { try SLIP39.combine([groups[0][0], groups[2][1]]) }
        #expect(throws: ShareProblem.notEnoughGroups(needed: 1, complete: 0, set: groups[0][0].identifier,
                                                     incomplete: [.init(group: 3, needed: 2, given: 1)])) {
            try SLIP39.combine([groups[2][1]])
        }
    }

    @Test func typedWordsAreForgivingAndMistakesArePlaced() throws {
        let mnemonic = try Self.vectors()[19].mnemonics[0]  // 256 bits, no sharing
        let words = mnemonic.split(separator: " ").map(String.init)
        let typed = words.enumerated().map { "\($0 + 1). \($1.prefix(4).uppercased())" }.joined(separator: "\n")
        #expect(try SLIP39Share(words: typed).words() == words)
        var wrong = words
        wrong[6] = "zzzz"
        #expect(throws: ShareProblem.unknownWord(share: 2, position: 7)) { try SLIP39Share(words: wrong.joined(separator: " "), share: 2) }
        wrong = words
        wrong.swapAt(10, 11)
        #expect(throws: ShareProblem.checksumFailed(share: 1)) { try SLIP39Share(words: wrong.joined(separator: " ")) }
    }

    @Test func splitRefusesWhatSLIP39CannotExpress() throws {
        let random = SeededRandom(seed: 1)
        let secret = try random.secret(32)
        for (threshold, groups) in [(1, [SLIP39.Group(threshold: 1, count: 2)]), (2, [.init(threshold: 2, count: 3)]),
                                    (1, [.init(threshold: 4, count: 3)]), (1, [.init(threshold: 2, count: 17)])] {
            #expect(throws: ShareProblem.self) { try SLIP39.split(secret: secret, groupThreshold: threshold, groups: groups, random: random) }
        }
        #expect(throws: ShareProblem.passphraseNotPrintableASCII) {
            try SLIP39.split(secret: secret, groupThreshold: 1, groups: [.init(threshold: 2, count: 2)], passphrase: Array("é".utf8), random: random)
        }
        #expect(throws: ShareProblem.invalidSecretLength(33)) {
            try SLIP39.split(secret: try random.secret(33), groupThreshold: 1, groups: [.init(threshold: 2, count: 2)], random: random)
        }
    }

    @Test func fieldArithmetic() {
        // Every non-zero element times its inverse is one, and multiplication matches a table-free reference.
        for a in 1...255 {
            #expect(GF256.multiply(UInt8(a), GF256.inverse(UInt8(a))) == 1)
        }
        #expect(GF256.multiply(0x57, 0x83) == 0xc1)  // FIPS-197 §4.2
        #expect(GF256.multiply(0x57, 0x13) == 0xfe)
    }
}

/// Lets the seeded source drive `shuffled(using:)`.
struct SeededGenerator: RandomNumberGenerator {
    let source: SeededRandom
    mutating func next() -> UInt64 { source.next() }
}
