import VaultCore
import VaultImaging

/// The parent's paper backup (issue 3; seed 000, "nsec Loss Prevention"): one page with the key
/// as a QR code, as 24 BIP-39 words and as grouped text, the public values that prove which
/// household it restores, and instructions. Or, encrypted, the NIP-49 `ncryptsec` instead.
/// It speaks to a parent: what to do in an emergency comes first, how to keep the page next,
/// and the technical details last, in small print.
public enum RecoverySheet {
    /// The QR symbol (quiet zone excluded) is at least this wide on paper.
    public static let minimumQRWidthMillimetres = 45.0
    public static let quietZoneModules = 4
    public static let marginMillimetres = 15.0

    public enum Secret: Sendable {
        case plain(SecretKey)
        /// A NIP-49 string and the public key of the key inside it.
        case encrypted(ncryptsec: String, publicKey: PublicKey)

        var publicKey: PublicKey {
            switch self {
            case .plain(let key): key.publicKey
            case .encrypted(_, let publicKey): publicKey
            }
        }

        /// What the QR code and the typed text carry: `nsec1…` or `ncryptsec1…`, lowercase.
        func qrPayload() throws -> String {
            switch self {
            case .plain(let key): String(decoding: try key.nsec().withUnsafeBytes { Array($0) }, as: UTF8.self)
            case .encrypted(let ncryptsec, _): ncryptsec.lowercased()
            }
        }
    }

    /// The key behind a sheet's QR payload: `nsec1…`, or `ncryptsec1…` decrypted with the
    /// passphrase `passphrase` gives (asked only for an encrypted sheet). `name` says in
    /// messages where the payload came from.
    public static func key(fromPayload payload: [UInt8], name: String, passphrase: () throws -> SecretBytes?) throws -> (key: SecretKey, encrypted: Bool) {
        // Only an ncryptsec (encrypted, not secret) becomes a String; an nsec stays bytes.
        if payload.startsWithFolded("ncryptsec1") {
            guard let passphrase = try passphrase() else { throw VaultError.passphraseNeeded("the sheet's key is encrypted (ncryptsec); it needs the passphrase") }
            return (try NIP49.decrypt(String(decoding: payload, as: UTF8.self), passphrase: passphrase).key, true)
        }
        guard payload.startsWithFolded("nsec1") else { throw VaultError.noKeyInPayload(name) }
        return (try SecretKey(parsing: payload.withUnsafeBytes { try SecretBytes(copying: $0) }, what: name), false)
    }

    /// The key behind text a person typed from a sheet: the 24 words (numbered or not, in any
    /// order when numbered), or the key as printed, `nsec1` or `ncryptsec1` in groups of four
    /// (the spaces are ignored; an ncryptsec asks `passphrase` for its passphrase).
    /// Unnumbered words typed row by row across the printed grid are recognised (`order`
    /// says so); when both orders pass the checksum, the refusal names both public keys, so the
    /// person can pick by the npub printed on the sheet.
    public static func key(fromTyped text: SecretBytes, passphrase: () throws -> SecretBytes?) throws -> (key: SecretKey, encrypted: Bool, order: WordOrder?) {
        var joined = text.withUnsafeBytes(withoutWhiteSpace)
        defer { joined.zeroize() }
        if joined.startsWithFolded("nsec1") || joined.startsWithFolded("ncryptsec1") {
            let found = try key(fromPayload: joined, name: "the typed key", passphrase: passphrase)
            return (found.key, found.encrypted, nil)
        }
        let readings = try BIP39.readings(fromWords: text)
        guard readings[0].entropy.count == 32 else { throw VaultError.wordsHoldNoKey(byteCount: readings[0].entropy.count) }
        let keys = try readings.map { try SecretKey(secret: $0.entropy) }
        guard keys.count == 1 else { throw VaultError.ambiguousWordOrder(identities: keys.map(\.publicKey.npub)) }
        return (keys[0], false, readings[0].order)
    }

    /// The typed text without its white space (the groups a key is printed in), as bytes.
    private static func withoutWhiteSpace(_ text: UnsafeRawBufferPointer) -> [UInt8] {
        var kept: [UInt8] = []
        kept.reserveCapacity(text.count)  // no regrowth: no partial copies left in freed memory
        var iterator = text.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): if !scalar.properties.isWhitespace { UTF8.encode(scalar) { kept.append($0) } }
            case .error: kept.append(0xff)  // not UTF-8: kept, so the text is refused as it is
            case .emptyInput: return kept
            }
        }
    }

    /// The app a family knows, named on the sheet when the caller names none (seed 000: the
    /// family app the key belongs to).
    public static let defaultAppName = "MyTube"

    public struct Content: Sendable {
        public var secret: Secret
        public var label: String?
        /// `YYYY-MM-DD`; printed in the template's own style ("22 November 2026").
        public var date: String
        /// The app's name as the family knows it, for the sheet's `{app}`.
        public var appName: String

        public init(secret: Secret, label: String?, date: String, appName: String = RecoverySheet.defaultAppName) {
            self.secret = secret
            self.label = label
            self.date = date
            self.appName = appName
        }
    }

    /// Where each block landed, in pixels at the sheet's resolution, so tests can prove nothing
    /// overlaps or leaves the page.
    public struct Element: Sendable, Equatable {
        public let name: String
        public let x, y, width, height: Int

        public func intersects(_ other: Element) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
        }
    }

    /// A sheet laid out once (``PageDescription``), to be written as a picture at its
    /// resolution or as a PDF.
    public struct Rendered: Sendable {
        public let page: PageDescription
        public let dotsPerInch: Int
        let metadata: PDFMetadata

        /// The page as a picture (PNG) at the resolution asked for.
        public func image() throws -> GrayImage { try PageRenderer.image(page, dotsPerInch: dotsPerInch) }

        /// The page as a one-page PDF of the paper's size.
        public func pdf() throws -> [UInt8] { try PageRenderer.pdf(page, metadata: metadata) }

        /// Every named block, in pixels of ``image()``.
        public var elements: [Element] {
            let scale = Double(dotsPerInch) / 72
            return page.elements.map { element in
                let box = element.box
                let left = Int((box.x * scale).rounded(.down)), top = Int((box.y * scale).rounded(.down))
                return Element(name: element.name, x: left, y: top,
                               width: Int(((box.x + box.width) * scale).rounded(.up)) - left, height: Int(((box.y + box.height) * scale).rounded(.up)) - top)
            }
        }
    }

    public static func render(_ content: Content, paper: Paper, dotsPerInch: Int, template: TextTemplate) throws -> Rendered {
        try PrintedText.check([(content.label, "the label"), (content.appName, "the app's name")])
        var page = try PageWriter(paper: paper, gridDotsPerInch: dotsPerInch)
        let household = Household(parentPublicKey: content.secret.publicKey)
        let encrypted = if case .encrypted = content.secret { true } else { false }
        // Where an encrypted sheet must say something else (the passphrase), its template
        // text is under the same key with ".encrypted" appended.
        func variant(_ key: String) -> String { encrypted ? key + ".encrypted" : key }
        let values = ["app": content.appName]

        // What the page is, then what to do with it in an emergency, before any detail.
        try page.paragraph("title", template.text("title"), style: .title)
        if let label = content.label, !label.isEmpty { try page.paragraph("label", label, style: .subtitle) }
        try page.paragraph("date", template.text("date", ["date": template.printedDate(content.date)]), style: .body)
        page.space(millimetres: 3)
        try page.boxedParagraph("warning", template.text(variant("warning"), values))
        page.space(millimetres: 3)
        try page.paragraph("emergency.heading", template.text("emergency.heading"), style: .heading)
        for step in ["emergency.1", variant("emergency.2"), "emergency.3"] {
            try page.paragraph(step, template.text(step, values), style: .body)
        }
        page.space(millimetres: 3)

        // The QR code on the left; beside it the words and the key to type or, on an encrypted
        // sheet (no words, and a larger code), the encrypted key to type and the check values,
        // which keeps the page to one sheet of Letter paper.
        let payload = try content.secret.qrPayload()
        let top = page.y
        let qrBottom = try page.qrCode("qr", code: QRCode(payload: Array(payload.utf8), level: .quartile), caption: template.text("qr.caption"))
        page.beginColumn(besideLastElement: 6)
        switch content.secret {
        case .plain(let key):
            try page.paragraph("words.heading", template.text("words.heading"), style: .heading)
            try page.wordGrid("words", key.withUnsafeBytes { try BIP39.phrase(for: SecretBytes(copying: $0)) }, columns: 3)
            page.space(millimetres: 2)
            try page.paragraph("key.heading", template.text("key.heading"), style: .heading)
            try page.groupedKey("key", payload)
        case .encrypted:
            try page.paragraph("encrypted.heading", template.text("encrypted.heading"), style: .heading)
            try page.groupedKey("key", payload)
            page.space(millimetres: 3)
            try checkValues(&page, household: household, template: template)
        }
        page.endColumn()
        page.moveTo(y: max(qrBottom, page.y, top))
        page.space(millimetres: 3)

        // Where to keep it and where not, who never asks for it, what to do if it is lost or
        // seen, and the yearly fire drill (issue "The suite as its users meet it").
        try page.paragraph("keep.heading", template.text("keep.heading"), style: .heading)
        let keep = ["keep.1"] + (encrypted ? ["keep.passphrase"] : []) + ["keep.2", "keep.3", variant("keep.4")]
        try page.points(keep.map { ($0, try template.text($0, values)) })
        page.space(millimetres: 3)

        if !encrypted {
            try checkValues(&page, household: household, template: template)
            page.space(millimetres: 3)
        }
        try page.paragraph("technical", template.text(variant("technical.key")) + " " + template.text("technical.derivation", [
            "vaultSalt": Derivation.vaultKeySalt, "subkeyInfo": Derivation.deviceSubkeyInfo,
        ]) + " " + template.text("technical.support"), style: .technical)
        page.space(millimetres: 3)
        try page.scaleBar("scale", label: template.text("scale"))
        return Rendered(page: page.page, dotsPerInch: dotsPerInch, metadata: PDFMetadata(title: try template.text("title"), creator: "recovery-sheet", date: content.date))
    }

    /// The public values that show which household the page restores.
    private static func checkValues(_ page: inout PageWriter, household: Household, template: TextTemplate) throws {
        try page.paragraph("check.heading", template.text("check.heading"), style: .heading)
        try page.labelledValues("check", [
            (try template.text("check.npub"), household.parentPublicKey.npub),
            (try template.text("check.household"), household.id.shortHex),
            (try template.text("check.path"), household.vaultPath),
        ])
    }
}

extension VaultError {
    /// A QR payload or typed text that holds neither an nsec nor an ncryptsec.
    static func noKeyInPayload(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(name) does not hold a key (nsec1… or ncryptsec1…)", file: file, line: line)
    }

    /// Valid words of another length than a key's 24.
    static func wordsHoldNoKey(byteCount: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "these words hold \(byteCount) bytes; a key is 32 bytes (24 words)", file: file, line: line)
    }
}
