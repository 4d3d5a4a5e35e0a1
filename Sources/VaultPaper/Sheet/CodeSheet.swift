import VaultCore
import VaultImaging

/// The printed recovery code of the Family Medical app (seed 002): the 24 words, numbered, and
/// the same code as a Standard SeedQR (numeric, four digits a word) that SeedSigner-style
/// scanners read. Like the recovery sheet it speaks to a parent: what to do in an emergency
/// first, then the code, how to keep the page, and the technical details last, in small print.
public enum CodeSheet {
    /// The app a family knows, named on the sheet when the caller names none (seed 002).
    public static let defaultAppName = "Family Medical"

    public struct Content: Sendable {
        public var code: SecretBytes
        /// The account the code belongs to, printed under the title.
        public var userID: String
        public var label: String?
        /// `YYYY-MM-DD`; printed in the template's own style ("22 November 2026").
        public var date: String
        /// The app's name as the family knows it, for the sheet's `{app}`.
        public var appName: String

        public init(code: SecretBytes, userID: String, label: String?, date: String, appName: String = CodeSheet.defaultAppName) {
            self.code = code
            self.userID = userID
            self.label = label
            self.date = date
            self.appName = appName
        }
    }

    public static func render(_ content: Content, paper: Paper, dotsPerInch: Int,
                              template: TextTemplate) throws -> RecoverySheet.Rendered {
        try PrintedText.check([(content.label, "the label"), (content.appName, "the app's name"), (content.userID, "the user id")])
        let values = ["app": content.appName, "userId": content.userID]
        var page = try PageWriter(paper: paper, gridDotsPerInch: dotsPerInch)
        try page.paragraph("title", template.text("title", values), style: .title)
        // The family's label and the account share one line, as on a share sheet.
        let subtitle = [content.label?.isEmpty == false ? content.label : nil, try template.text("user", values)].compactMap { $0 }.joined(separator: " · ")
        try page.paragraph("user", subtitle, style: .subtitle)
        try page.paragraph("date", template.text("date", ["date": template.printedDate(content.date)]), style: .body)
        page.space(millimetres: 3)
        try page.boxedParagraph("warning", template.text("warning", values))
        page.space(millimetres: 4)
        try page.paragraph("emergency.heading", template.text("emergency.heading"), style: .heading)
        for step in ["emergency.1", "emergency.2", "emergency.3"] {
            try page.paragraph(step, template.text(step, values), style: .body)
        }
        page.space(millimetres: 4)

        let top = page.y
        let qrBottom = try page.qrCode("qr", code: QRCode(text: SeedQR.digits(for: content.code), level: .low), caption: template.text("qr.caption"))
        page.beginColumn(besideLastElement: 6)
        try page.paragraph("words.heading", template.text("words.heading"), style: .heading)
        try page.wordGrid("words", BIP39.phrase(for: content.code), columns: 3)
        page.endColumn()
        page.moveTo(y: max(qrBottom, page.y, top))
        page.space(millimetres: 4)

        try page.paragraph("keep.heading", template.text("keep.heading"), style: .heading)
        try page.points(["keep.1", "keep.2", "keep.3", "keep.4"].map { ($0, try template.text($0, values)) })
        page.space(millimetres: 4)
        try page.paragraph("technical", template.text("technical", values), style: .technical)
        page.space(millimetres: 3)
        try page.scaleBar("scale", label: template.text("scale"))
        return RecoverySheet.Rendered(page: page.page, dotsPerInch: dotsPerInch,
                                      metadata: PDFMetadata(title: try template.text("title", values), creator: "recovery-sheet code", date: content.date))
    }
}
