import Foundation
import Testing
@testable import VaultCore
@testable import VaultImaging
@testable import VaultPaper

/// The page description of each sheet kind, kept as JSON beside this file (Golden/pages/), so a
/// change of layout or wording is a diff a reviewer reads. Recorded with RECORD_GOLDEN=1 (which
/// fails, so a recording run never passes); CI never records. The PDF and the PNG are drawn from
/// these same descriptions.
@Suite struct PageDescriptionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/pages")

    static func sheets() throws -> [(name: String, sheet: RecoverySheet.Rendered)] {
        let key = RecoverySheetTests.key
        let recovery = try RecoverySheet.render(RecoverySheetTests.content(encrypted: false), paper: .a4, dotsPerInch: 300,
                                                template: RecoverySheetTests.template("en"))
        let encrypted = try RecoverySheet.render(RecoverySheetTests.content(encrypted: true), paper: .letter, dotsPerInch: 300,
                                                 template: RecoverySheetTests.template("es"))
        let code = try CodeSheet.render(CodeSheet.Content(code: SecretBytes.test((0..<32).map { UInt8($0 * 7 + 1) }), userID: "emma@example.org",
                                                          label: nil, date: "2026-11-22"),
                                        paper: .a4, dotsPerInch: 300, template: CodeSheetTests.template("en"))
        let groups = [SLIP39.Group(threshold: 2, count: 3)]
        let share = try key.withUnsafeBytes { bytes in
            try SLIP39.split(secret: SecretBytes(copying: bytes), groupThreshold: 1, groups: groups, passphrase: [], iterationExponent: 0,
                             random: SeededRandom(seed: 27))
        }[0][0]
        let shareSheet = try ShareSheet.render(ShareSheet.Content(share: share, publicKey: key.publicKey, holder: "Abuela Rosa", otherHolders: [],
                                                                  label: nil, date: "2026-11-22", needsPassphrase: false),
                                               groups: groups, paper: .a4, dotsPerInch: 300, template: ShareSheetTests.template("en"))
        return [("recovery-a4-en", recovery), ("encrypted-letter-es", encrypted), ("code-a4-en", code), ("share-a4-en", shareSheet)]
    }

    @Test func eachKindIsLaidOutAsReviewed() throws {
        let record = ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1"
        for (name, sheet) in try Self.sheets() {
            let actual = sheet.page.jsonValue().serialized() + [0x0a]
            let file = Self.folder.appendingPathComponent(name + ".json")
            if record {
                try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
                try Data(actual).write(to: file)
                Issue.record("recorded \(name).json; review the diff, then run again without RECORD_GOLDEN")
                continue
            }
            let expected = try #require(FileManager.default.contents(atPath: file.path), "missing \(name).json; record it with RECORD_GOLDEN=1")
            #expect(actual == [UInt8](expected), "\(name): the layout differs from Golden/pages/\(name).json")
        }
    }

    /// Both renderers draw one description: the PDF read back by poppler and the PNG decode to
    /// the same payload, and the same description gives the same PDF bytes (no clock, no random
    /// name in the file).
    @Test func thePDFAndThePictureAreOnePage() throws {
        for (name, sheet) in try Self.sheets() {
            let pdf = try sheet.pdf()
            #expect(try sheet.pdf() == pdf, "\(name): two PDFs of one description differ")
            let drawn = try #require(try SheetPDF.picture(of: pdf, name: name))
            #expect(drawn.width == Int((sheet.page.widthPoints / 72 * 300).rounded()) && drawn.dotsPerInch == 300)
            let fromPDF = Set(try QRScanner.scan(drawn)), fromPNG = Set(try QRScanner.scan(sheet.image()))
            #expect(!fromPDF.isEmpty && fromPDF == fromPNG, "\(name)")
        }
    }

    /// Every sheet carries the 50 mm scale bar at its foot, after everything else.
    @Test func everySheetHasItsScaleBar() throws {
        for (name, sheet) in try Self.sheets() {
            let bar = try #require(sheet.page.element("scale"), "\(name)")
            #expect(sheet.page.elements.allSatisfy { $0.name == "scale" || $0.box.y < bar.box.y }, "\(name)")
            let rules = sheet.page.items.compactMap { item -> PageDescription.Rectangle? in
                if case .rectangle(let box, nil) = item { box } else { nil }
            }
            #expect(rules.contains { abs($0.width - 50 / 25.4 * 72) < 0.001 }, "\(name): no line of exactly 50 mm")
        }
    }

    @Test func aNonPDFIsNotRead() throws {
        #expect(try SheetPDF.picture(of: Array("not a pdf".utf8), name: "x") == nil)
        #expect(throws: VaultError(.malformedDocument, "")) { try SheetPDF.picture(of: Array("%PDF-1.5\ngarbage".utf8), name: "x") }
    }
}
