import Foundation
import Testing
@testable import VaultCore
@testable import VaultImaging
@testable import VaultPaper

/// Share sheets (issue 14): every paper, language, passphrase and group layout fits one page with
/// nothing overlapping, and the page's two QR codes read back as the share and its check code.
@Suite struct ShareSheetTests {
    static func template(_ language: String) throws -> TextTemplate { try RecoverySheetTests.template("share-sheet", language) }

    struct Case: Sendable, CustomTestStringConvertible {
        let paper: Paper, language: String, passphrase: Bool, twoLevels: Bool
        var testDescription: String { "\(paper.rawValue) \(language)\(passphrase ? " passphrase" : "")\(twoLevels ? " groups" : "")" }
    }

    static let cases: [Case] = Paper.allCases.flatMap { paper in
        RecoverySheetTests.languages.flatMap { language in
            [false, true].flatMap { passphrase in [false, true].map { Case(paper: paper, language: language, passphrase: passphrase, twoLevels: $0) } }
        }
    }

    @Test func templatesDefineTheSameTexts() throws {
        #expect(try Self.template("es").keys == Self.template("en").keys)
    }

    @Test(arguments: cases)
    func layoutFitsAndBothCodesReadBack(_ sheetCase: Case) throws {
        let key = RecoverySheetTests.key
        let groups = sheetCase.twoLevels ? [SLIP39.Group(threshold: 1, count: 1), .init(threshold: 3, count: 5)] : [.init(threshold: 2, count: 3)]
        let shares = try key.withUnsafeBytes { bytes in
            try SLIP39.split(secret: SecretBytes(copying: bytes), groupThreshold: 1, groups: groups, passphrase: sheetCase.passphrase ? Array("p".utf8) : [],
                             iterationExponent: 0, random: SeededRandom(seed: 14))
        }
        let share = shares.last!.last!
        let content = ShareSheet.Content(share: share, publicKey: key.publicKey, holder: "Abuela Rosa de la Montaña",
                                         otherHolders: ["Tío Luis", "Caja fuerte del banco", "Mamá", "Papá"], label: "Familia García-Núñez",
                                         date: "2026-11-22", needsPassphrase: sheetCase.passphrase)
        let sheet = try ShareSheet.render(content, groups: groups, paper: sheetCase.paper, dotsPerInch: 150,
                                          template: Self.template(sheetCase.language))
        try RecoverySheetTests.expectFitsOnePage(sheet, paper: sheetCase.paper, dotsPerInch: 150)
        let names = Set(sheet.elements.map(\.name))
        #expect(names.isSuperset(of: ["qr", "words", "check.qr", "check", "emergency.4", "keep.4", "technical", "rule", "set"]))

        let read = try QRScanner.scan(sheet.image()).map { String(decoding: $0, as: UTF8.self) }
        #expect(Set(read) == [try ShareCodes.shareCode(share).testText, ShareCodes.checkCode(set: share.identifier, household: Household(parentPublicKey: key.publicKey))])
        let back = try #require(try ShareCodes.share(fromCode: ShareCodes.shareCode(share)))
        #expect(back.words() == share.words())
    }

    @Test func codesParseOnlyTheirOwnForm() throws {
        #expect(try ShareCodes.share(fromCode: "nsec1abc") == nil)
        #expect(try ShareCodes.share(fromCode: String(repeating: "0", count: 79)) == nil)
        #expect(throws: ShareProblem.self) { try ShareCodes.share(fromCode: String(repeating: "0001", count: 33)) }
        let household = Household(parentPublicKey: RecoverySheetTests.key.publicKey)
        let parsed = try #require(ShareCodes.parseCheckCode(ShareCodes.checkCode(set: 7945, household: household)))
        #expect(parsed.set == 7945 && parsed.household == household.id.shortHex)
        #expect(ShareCodes.parseCheckCode("HVT-SHARE 99999 0a92686c7aa4") == nil)
    }

    /// The largest share sheet (two levels, a passphrase, long names, Spanish, Letter) fits at
    /// 72 dpi too, where QR modules round up to 4 pixels, and both its codes read.
    @Test func theLargestSheetFitsAt72DotsPerInch() throws {
        let key = RecoverySheetTests.key
        let groups = [SLIP39.Group(threshold: 1, count: 1), .init(threshold: 1, count: 1), .init(threshold: 2, count: 3)]
        let share = try key.withUnsafeBytes { bytes in
            try SLIP39.split(secret: SecretBytes(copying: bytes), groupThreshold: 1, groups: groups, passphrase: Array("p".utf8),
                             iterationExponent: 0, random: SeededRandom(seed: 72))
        }[2][0]
        let content = ShareSheet.Content(share: share, publicKey: key.publicKey, holder: "Abuela Rosa de la Montaña",
                                         otherHolders: ["Tío Luis", "Caja fuerte del banco", "Mamá", "Papá"], label: "Familia García-Núñez de la Montaña",
                                         date: "2026-11-22", needsPassphrase: true)
        let sheet = try ShareSheet.render(content, groups: groups, paper: .letter, dotsPerInch: 72, template: Self.template("es"))
        try RecoverySheetTests.expectFitsOnePage(sheet, paper: .letter, dotsPerInch: 72)
        #expect(try QRScanner.scan(sheet.image()).count == 2)
    }
}
