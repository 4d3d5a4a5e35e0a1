import VaultCore
import VaultImaging

/// A family key share on paper (issue 14): one SLIP-0039 share of the parent key, for one
/// holder. It carries the share as a QR code and as 33 numbered words, what any K of the set do
/// and that fewer reveal nothing, the holder's and the other holders' names (never their
/// shares), and a public check code and check values so a holder can check the sheet alone.
public enum ShareSheet {
    /// The share code's symbol is at least this wide: its 33 modules stay above the 1.2 mm
    /// minimum that survives a 100 dpi scan, a little smaller than a key sheet's 45 mm.
    public static let shareCodeMinimumWidthMillimetres = 40.0
    public struct Content: Sendable {
        public var share: SLIP39Share
        /// The parent key's public key, for the check values.
        public var publicKey: PublicKey
        /// Who keeps this sheet, and who keeps the others (names only).
        public var holder: String?
        public var otherHolders: [String]
        public var label: String?
        /// `YYYY-MM-DD`; printed in the template's own style.
        public var date: String
        /// Whether restoring also needs the family's share passphrase.
        public var needsPassphrase: Bool
        /// The app's name as the family knows it, for the sheet's `{app}`.
        public var appName: String

        public init(share: SLIP39Share, publicKey: PublicKey, holder: String?, otherHolders: [String], label: String?,
                    date: String, needsPassphrase: Bool, appName: String = RecoverySheet.defaultAppName) {
            self.share = share
            self.publicKey = publicKey
            self.holder = holder
            self.otherHolders = otherHolders
            self.label = label
            self.date = date
            self.needsPassphrase = needsPassphrase
            self.appName = appName
        }
    }

    public static func render(_ content: Content, groups: [SLIP39.Group], paper: Paper, dotsPerInch: Int,
                              template: TextTemplate) throws -> RecoverySheet.Rendered {
        try PrintedText.check([(content.label, "the label"), (content.appName, "the app's name")]
                              + ([content.holder].compactMap { $0 } + content.otherHolders).map { ($0, "a holder's name") })
        // And each names a person, as a record's name does (a review: an empty holder printed
        // "kept by: , Cy." on a sheet; a combining mark alone, likewise nothing).
        for name in [content.holder].compactMap({ $0 }) + content.otherHolders { try RecordedText.checkName(name, field: "a holder's name") }
        let share = content.share
        let group = groups[share.groupIndex]
        let household = Household(parentPublicKey: content.publicKey)
        let twoLevels = share.groupCount > 1
        var values = [
            "number": String(share.memberIndex + 1), "count": String(group.count), "threshold": String(group.threshold),
            "set": String(share.identifier), "date": try template.printedDate(content.date), "app": content.appName,
            "group": String(share.groupIndex + 1), "groupCount": String(share.groupCount), "groupThreshold": String(share.groupThreshold),
        ]
        values["holder"] = content.holder ?? ""

        var page = try PageWriter(paper: paper, gridDotsPerInch: dotsPerInch)
        try page.paragraph("title", template.text(twoLevels ? "title.groups" : "title", values), style: .title)
        // The family's label and the holder share one line, and the date follows them, so the
        // page fits on Letter paper too.
        let holderLine = content.holder?.isEmpty == false ? try template.text("holder", values) : nil
        let subtitle = [content.label?.isEmpty == false ? content.label : nil, holderLine].compactMap { $0 }.joined(separator: " · ")
        if !subtitle.isEmpty { try page.paragraph("label", subtitle, style: .subtitle) }
        try page.paragraph("date", template.text("date", values), style: .body)
        page.space(millimetres: 3)
        let rule = try template.text(twoLevels ? "rule.groups" : "rule", values)
        try page.boxedParagraph("rule", content.needsPassphrase ? rule + " " + template.text("passphrase") : rule)
        page.space(millimetres: 4)

        // The share code on the left, its words beside it.
        let top = page.y
        let qrBottom = try page.qrCode("qr", code: QRCode(text: ShareCodes.shareCode(share), level: .medium), caption: template.text("qr.caption"),
                                      minimumWidthMillimetres: shareCodeMinimumWidthMillimetres)
        page.beginColumn(besideLastElement: 6)
        try page.paragraph("words.heading", template.text("words.heading"), style: .heading)
        try page.wordGrid("words", share.phrase(), columns: 3)
        page.endColumn()
        page.moveTo(y: max(qrBottom, page.y, top))
        page.space(millimetres: 3)
        let others = content.otherHolders.isEmpty ? "" : " " + (try template.text("others.heading")) + ": " + content.otherHolders.joined(separator: ", ") + "."
        try page.paragraph("set", template.text("set", values) + others, style: .body)
        page.space(millimetres: 3)

        // The public check code; beside it the values it stands for, then what to do in an
        // emergency (the column keeps the page to one sheet of Letter paper).
        let checkTop = page.y
        let checkBottom = try page.qrCode("check.qr", code: QRCode(text: ShareCodes.checkCode(set: share.identifier, household: household), level: .medium),
                                          caption: template.text("check.caption"), minimumWidthMillimetres: 0)
        page.beginColumn(besideLastElement: 6)
        page.moveTo(y: checkTop)
        try page.paragraph("check.heading", template.text("check.heading"), style: .heading)
        try page.labelledValues("check", [
            (try template.text("check.npub"), household.parentPublicKey.npub),
            (try template.text("check.household"), household.id.shortHex),
            (try template.text("check.code"), ShareCodes.checkCode(set: share.identifier, household: household)),
        ])
        page.space(millimetres: 3)
        try page.paragraph("emergency.heading", template.text("emergency.heading"), style: .heading)
        for step in ["emergency.1", "emergency.2", "emergency.3", "emergency.4"] {
            try page.paragraph(step, template.text(step, values), style: .small)
        }
        page.endColumn()
        page.moveTo(y: max(checkBottom, page.y, checkTop))
        page.space(millimetres: 3)
        try page.paragraph("keep.heading", template.text("keep.heading"), style: .heading)
        for item in ["keep.1", "keep.2", "keep.3", "keep.4"] {
            try page.paragraph(item, template.text(item, values), style: .small)
        }
        page.space(millimetres: 3)
        try page.paragraph("technical", template.text("technical", values), style: .technical)
        page.space(millimetres: 3)
        try page.scaleBar("scale", label: template.text("scale"))
        // The title names no holder and no share: the file's name and metadata say nothing a
        // photo of the screen would not.
        return RecoverySheet.Rendered(page: page.page, dotsPerInch: dotsPerInch,
                                      metadata: PDFMetadata(title: try template.text("pdf.title"), creator: "recovery-sheet split", date: content.date))
    }
}
