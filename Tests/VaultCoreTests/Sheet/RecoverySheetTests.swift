import Foundation
import Testing
@testable import VaultCore
@testable import VaultImaging
@testable import VaultPaper

@Suite struct RecoverySheetTests {
    static let templatesFolder = TestFiles.testsFolder.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Templates")
    static let languages = ["en", "es"]

    static func template(_ language: String) throws -> TextTemplate { try template("recovery-sheet", language) }

    /// A sheet's wording as the tools compile it in, from Templates/SHEET.LANGUAGE.txt.
    static func template(_ sheet: String, _ language: String) throws -> TextTemplate {
        try TextTemplate(language: language, text: String(contentsOf: templatesFolder.appendingPathComponent("\(sheet).\(language).txt"), encoding: .utf8))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let paper: Paper, language: String, encrypted: Bool, dotsPerInch: Int
        var testDescription: String { "\(paper.rawValue) \(language) \(encrypted ? "encrypted" : "plain") \(dotsPerInch) dpi" }
    }

    static let cases: [Case] = Paper.allCases.flatMap { paper in
        // 72 dpi is what the README's previews use; an encrypted sheet's larger code needs 100
        // dpi or more there (a module of 1.2 mm is 4 pixels, 1.41 mm, at 72 dpi).
        languages.flatMap { language in [false, true].flatMap { encrypted in (encrypted ? [100, 150, 300] : [72, 150, 300]).map {
            Case(paper: paper, language: language, encrypted: encrypted, dotsPerInch: $0)
        } } }
    }

    static let key = try! SecretKey(parsing: .test(Array("nsec1lqt48lfawqu2gtwfzh0q25qkhfmgfur3suk5r632shu6fm8y9z9sncnftt".utf8)), what: "test key")

    static func content(encrypted: Bool, label: String? = "Familia García-Núñez") throws -> RecoverySheet.Content {
        let secret: RecoverySheet.Secret = encrypted
            ? .encrypted(ncryptsec: try NIP49.encrypt(key, passphrase: "pass", logN: 4, random: SeededRandom(seed: 1)), publicKey: key.publicKey)
            : .plain(key)
        return RecoverySheet.Content(secret: secret, label: label, date: "2026-11-22")
    }

    @Test func templatesDefineTheSameTexts() throws {
        let english = try Self.template("en")
        for language in Self.languages {
            #expect(try Self.template(language).keys == english.keys, "\(language)")
        }
    }

    @Test(arguments: cases)
    func layoutFitsAndNothingOverlaps(_ sheetCase: Case) throws {
        let sheet = try RecoverySheet.render(Self.content(encrypted: sheetCase.encrypted), paper: sheetCase.paper, dotsPerInch: sheetCase.dotsPerInch,
                                             template: Self.template(sheetCase.language))
        try Self.expectFitsOnePage(sheet, paper: sheetCase.paper, dotsPerInch: sheetCase.dotsPerInch)
        let names = Set(sheet.elements.map(\.name))
        #expect(names.isSuperset(of: ["warning", "label", "emergency.heading", "emergency.3", "qr", "key", "keep.2", "keep.3", "check", "technical"]))
        #expect(names.contains(sheetCase.encrypted ? "emergency.2.encrypted" : "emergency.2"))
        #expect(names.contains(sheetCase.encrypted ? "keep.4.encrypted" : "keep.4"))
        #expect(names.contains("words") != sheetCase.encrypted)
        // Only an encrypted sheet says the passphrase is kept somewhere else.
        #expect(names.contains("keep.passphrase") == sheetCase.encrypted)
        // What to do in an emergency comes before the key, the technical details last; the
        // check values follow the keeping advice, or on an encrypted sheet sit beside the code.
        let top = { (name: String) in sheet.elements.first { $0.name == name }!.y }
        #expect(top("emergency.heading") < top("qr") && top("qr") < top("keep.heading"))
        #expect(sheetCase.encrypted ? top("check") < top("keep.heading") : top("keep.heading") < top("check"))
        #expect(sheet.elements.allSatisfy { ["technical", "scale"].contains($0.name) || $0.y < top("technical") })
        #expect(top("technical") < top("scale"))

        // The symbol is at least 45 mm wide, its modules whole pixels, inside a quiet zone of
        // four modules.
        let image = try sheet.image(), dotsPerInch = Double(sheetCase.dotsPerInch)
        let qr = try #require(sheet.page.items.lazy.compactMap { if case .qr(let qr) = $0 { qr } else { nil } }.first)
        let payload = try RecoverySheet.Content.payload(Self.content(encrypted: sheetCase.encrypted))
        #expect(qr.code.modules == (try QRCode(payload: Array(payload.utf8), level: .quartile)).modules)
        let modulePixels = qr.module / 72 * dotsPerInch
        #expect(abs(modulePixels - modulePixels.rounded()) < 1e-6)
        let module = Int(modulePixels.rounded()), side = qr.code.size * module
        #expect(Double(side) / dotsPerInch * 25.4 >= RecoverySheet.minimumQRWidthMillimetres)
        let left = Int((qr.x / 72 * dotsPerInch).rounded()), symbolTop = Int((qr.y / 72 * dotsPerInch).rounded()), quiet = 4 * module
        for y in (symbolTop - quiet)..<(symbolTop + side + quiet) where y < symbolTop || y >= symbolTop + side {
            #expect(image.pixels[(y * image.width + left - quiet)..<(y * image.width + left + side + quiet)].allSatisfy { $0 == 255 })
        }
        #expect(try QRScanner.scan(sheet.image()) == [Array(payload.utf8)])
    }

    /// The page is the paper's size, and every block stays inside the margins without
    /// overlapping another (the share sheets' test uses it too).
    static func expectFitsOnePage(_ sheet: RecoverySheet.Rendered, paper: Paper, dotsPerInch: Int) throws {
        let image = try sheet.image()
        #expect(image.width == Int((paper.widthMillimetres / 25.4 * Double(dotsPerInch)).rounded()))
        #expect(image.height == Int((paper.heightMillimetres / 25.4 * Double(dotsPerInch)).rounded()))
        let page = sheet.page, margin = RecoverySheet.marginMillimetres / 25.4 * 72 - 0.01
        #expect(margin >= 12 / 25.4 * 72 - 0.01, "printers print within 12 mm of the edge")
        for element in page.elements {
            let box = element.box
            #expect(box.x >= margin && box.y >= margin && box.x + box.width <= page.widthPoints - margin
                    && box.y + box.height <= page.heightPoints - margin, "\(element.name) leaves the page")
        }
        for (index, element) in page.elements.enumerated() {
            for other in page.elements[(index + 1)...] {
                #expect(!element.box.intersects(other.box), "\(element.name) overlaps \(other.name)")
            }
        }
    }

    @Test func datesAreInTheLanguagesOwnStyle() throws {
        #expect(try Self.template("en").printedDate("2026-11-22") == "22 November 2026")
        #expect(try Self.template("es").printedDate("2026-11-22") == "22 de noviembre de 2026")
        #expect(try Self.template("es").printedDate("2027-01-05") == "5 de enero de 2027")
        #expect(try Self.template("en").text("date", ["date": Self.template("en").printedDate("2026-03-01")]) == "Printed 1 March 2026")
        for bad in ["2026-13-01", "22/11/2026", "2026-11", "2026-11-00"] {
            #expect(throws: VaultError(.outOfRange, "")) { try Self.template("en").printedDate(bad) }
        }
    }

    /// Every sheet names the app by `{app}`; nothing else fills it in.
    @Test func theAppNameComesFromTheVariable() throws {
        for language in Self.languages {
            let template = try Self.template(language)
            for key in ["warning", "warning.encrypted", "emergency.1"] {
                #expect(try template.text(key, ["app": "KinVault"]).contains("KinVault"), "\(language) \(key)")
                #expect(!(try template.text(key, ["app": "KinVault"]).contains(RecoverySheet.defaultAppName)))
            }
        }
        let render = { (app: String) in
            try RecoverySheet.render(RecoverySheet.Content(secret: .plain(Self.key), label: nil, date: "2026-11-22", appName: app),
                                     paper: .a4, dotsPerInch: 100, template: Self.template("en")).image()
        }
        #expect(try render(RecoverySheet.defaultAppName) == RecoverySheet.render(RecoverySheet.Content(secret: .plain(Self.key), label: nil, date: "2026-11-22"),
                                                                                 paper: .a4, dotsPerInch: 100, template: Self.template("en")).image())
        #expect(try render("KinVault") != render(RecoverySheet.defaultAppName))
    }

    /// A label or an app name is printed as given, even when it looks like a placeholder.
    @Test func valuesAreFilledInOnce() throws {
        let template = try TextTemplate(language: "en", text: "line = {app} printed {date}")
        #expect(try template.text("line", ["app": "{date}", "date": "today"]) == "{date} printed today")
        #expect(try template.text("line", ["app": "X"]) == "X printed {date}")
    }

    /// An encrypted sheet never says the page alone restores the account; a plain one does not
    /// talk about a passphrase.
    @Test func theEncryptedSheetAsksForThePassphraseKeptElsewhere() throws {
        for language in Self.languages {
            let template = try Self.template(language)
            let keptElsewhere = language == "en" ? "somewhere else" : "otro lugar"
            #expect(try template.text("keep.passphrase").contains(keptElsewhere))
            #expect(try template.text("warning.encrypted").contains(keptElsewhere))
            let plainOnly = try ["warning", "emergency.2", "keep.4"].map { try template.text($0) }.joined(separator: " ")
            #expect(!plainOnly.lowercased().contains(language == "en" ? "passphrase" : "frase"))
        }
    }

    @Test func sameInputsGiveTheSamePixels() throws {
        let render = { try RecoverySheet.render(Self.content(encrypted: false), paper: .a4, dotsPerInch: 200, template: Self.template("en")).image() }
        #expect(try render() == render())
    }

    @Test func encryptedSheetCarriesTheNcryptsec() throws {
        let content = try Self.content(encrypted: true)
        let sheet = try RecoverySheet.render(content, paper: .letter, dotsPerInch: 150, template: Self.template("en"))
        let scanned = try #require(try QRScanner.scan(sheet.image()).first)
        #expect(String(decoding: scanned, as: UTF8.self).hasPrefix("ncryptsec1"))
        #expect(try NIP49.decrypt(String(decoding: scanned, as: UTF8.self), passphrase: "pass").key == Self.key)
    }

    @Test func textThatCannotFitIsRefused() throws {
        // Not words of a list only: twelve such words in a row read as recovery words, which
        // no sheet prints as its label.
        let label = String(repeating: "Fernández-Oyelaran household of Kraków ", count: 120)
        #expect(throws: VaultError(.sheetDoesNotFit, "")) {
            try RecoverySheet.render(Self.content(encrypted: false, label: label), paper: .a4, dotsPerInch: 150, template: Self.template("en"))
        }
    }
}

extension RecoverySheet.Content {
    static func payload(_ content: Self) throws -> String { try content.secret.qrPayload() }
}
