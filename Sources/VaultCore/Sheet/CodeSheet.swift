/// The printed recovery code of the Family Medical app: the 24 words, numbered, and the same
/// code as a Standard SeedQR (numeric, four digits a word) that SeedSigner-style scanners read.
public enum CodeSheet {
    public static func render(code: SecretBytes, userID: String, date: String, paper: Paper, dotsPerInch: Int,
                              template: TextTemplate, fonts: SheetFonts) throws -> RecoverySheet.Rendered {
        var page = try PageWriter(paper: paper, dotsPerInch: dotsPerInch, fonts: fonts)
        try page.paragraph("title", template.text("title"), style: .title)
        try page.paragraph("user", template.text("user", ["userId": userID]), style: .subtitle)
        try page.paragraph("date", template.text("date", ["date": date]), style: .body)
        page.space(millimetres: 4)
        try page.boxedParagraph("warning", template.text("warning"))
        page.space(millimetres: 5)
        let top = page.y
        let qrBottom = try page.qrCode("qr", code: QRCode(text: SeedQR.digits(for: code), level: .low), caption: template.text("qr.caption"))
        page.beginColumn(besideLastElement: 6)
        try page.paragraph("words.heading", template.text("words.heading"), style: .heading)
        try page.wordGrid("words", BIP39.words(for: code), columns: 3)
        page.endColumn()
        page.moveTo(y: max(qrBottom, page.y, top))
        page.space(millimetres: 5)
        try page.paragraph("note", template.text("note"), style: .small)
        return RecoverySheet.Rendered(image: page.image, elements: page.elements)
    }
}
