import Foundation
import Testing
@testable import VaultCore
@testable import VaultImaging
@testable import VaultPaper

/// The Family Medical code sheet: every paper and language fits one page with nothing
/// overlapping, speaks to a parent in the same order as the recovery sheet, and its SeedQR reads
/// back as the code.
@Suite struct CodeSheetTests {
    static func template(_ language: String) throws -> TextTemplate { try RecoverySheetTests.template("recovery-code", language) }

    struct Case: Sendable, CustomTestStringConvertible {
        let paper: Paper, language: String, dotsPerInch: Int
        var testDescription: String { "\(paper.rawValue) \(language) \(dotsPerInch) dpi" }
    }

    static let cases: [Case] = Paper.allCases.flatMap { paper in
        RecoverySheetTests.languages.flatMap { language in [72, 150, 300].map { Case(paper: paper, language: language, dotsPerInch: $0) } }
    }

    @Test func templatesDefineTheSameTexts() throws {
        #expect(try Self.template("es").keys == Self.template("en").keys)
    }

    @Test(arguments: cases)
    func layoutFitsAndTheCodeReadsBack(_ sheetCase: Case) throws {
        let code = SecretBytes.test((0..<32).map { UInt8($0 * 7 + 1) })
        let content = CodeSheet.Content(code: code, userID: "emma.garcia-nunez@example.org", label: "Familia García-Núñez", date: "2026-11-22")
        let sheet = try CodeSheet.render(content, paper: sheetCase.paper, dotsPerInch: sheetCase.dotsPerInch,
                                         template: Self.template(sheetCase.language))
        try RecoverySheetTests.expectFitsOnePage(sheet, paper: sheetCase.paper, dotsPerInch: sheetCase.dotsPerInch)
        let top = { (name: String) in try #require(sheet.elements.first { $0.name == name }).y }
        #expect(try top("warning") < top("emergency.heading") && top("emergency.3") < top("qr") && top("qr") < top("keep.heading"))
        #expect(try top("keep.4") < top("technical"))
        #expect(try QRScanner.scan(sheet.image()) == [SeedQR.digits(for: code).testBytes])
    }

    @Test func theAppNameAndTheDateFollowTheTemplate() throws {
        for language in RecoverySheetTests.languages {
            let template = try Self.template(language)
            // A name unlike the default proves the title takes the variable, not a fixed name.
            #expect(try template.text("title", ["app": "Salud Familiar"]).contains("Salud Familiar"))
            #expect(try template.text("emergency.1", ["app": "Salud"]).contains("Salud"))
        }
        #expect(try Self.template("es").printedDate("2026-11-22") == "22 de noviembre de 2026")
        #expect(try Self.template("en").printedDate("2026-11-22") == "22 November 2026")
    }
}
