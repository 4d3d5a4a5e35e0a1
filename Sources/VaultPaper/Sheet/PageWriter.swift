import VaultCore
import VaultImaging

/// Lays a page out from top to bottom: wraps text, draws it with FreeType, and records the box
/// of every block. Anything that would cross the margins is an error, never a clipped page.
struct PageWriter {
    enum Style: CaseIterable {
        case title, subtitle, heading, emphasis, body, small, mono, monoSmall, monoLarge

        /// (face, size in points)
        var face: (KeyPath<SheetFonts, String>, Double) {
            switch self {
            case .title: (\.bold, 20)
            case .subtitle: (\.bold, 14)
            case .heading: (\.bold, 11.5)
            case .emphasis: (\.bold, 10.5)
            case .body: (\.regular, 9.5)
            case .small: (\.regular, 8.5)
            case .mono: (\.mono, 10)
            case .monoSmall: (\.mono, 8.5)
            case .monoLarge: (\.mono, 13)
            }
        }
    }

    private(set) var image: GrayImage
    private(set) var elements: [RecoverySheet.Element] = []
    private(set) var y: Int
    private let scale: PageScale
    private let paper: Paper
    private let margin: Int
    private let fonts: [Style: Font]
    private var x: Int
    private var width: Int

    init(paper: Paper, dotsPerInch: Int, fonts paths: SheetFonts) throws {
        guard Paper.dotsPerInch.contains(dotsPerInch) else {
            throw VaultError.outOfRange("the resolution", "\(Paper.dotsPerInch.lowerBound) to \(Paper.dotsPerInch.upperBound) dpi, not \(dotsPerInch)")
        }
        scale = PageScale(dotsPerInch: dotsPerInch)
        self.paper = paper
        image = GrayImage(width: scale.pixels(millimetres: paper.widthMillimetres), height: scale.pixels(millimetres: paper.heightMillimetres),
                          dotsPerInch: dotsPerInch)
        margin = scale.pixels(millimetres: RecoverySheet.marginMillimetres)
        x = margin
        y = margin
        width = image.width - 2 * margin
        var fonts: [Style: Font] = [:]
        for style in Style.allCases {
            fonts[style] = try Font(path: paths[keyPath: style.face.0], pixelSize: scale.pixels(points: style.face.1))
        }
        self.fonts = fonts
    }

    mutating func space(millimetres: Double) { y += scale.pixels(millimetres: millimetres) }
    mutating func moveTo(y newY: Int) { y = newY }

    private func font(_ style: Style) -> Font { fonts[style]! }
    private func advance(_ font: Font) -> Int { font.lineHeight * 23 / 20 }

    // MARK: Blocks

    /// Points in small print, 1 mm apart so each reads as one point (a sheet's "keep" list).
    mutating func points(_ items: [(name: String, text: String)]) throws {
        for (index, item) in items.enumerated() {
            if index > 0 { space(millimetres: 1) }
            try paragraph(item.name, item.text, style: .small)
        }
    }

    mutating func paragraph(_ name: String, _ text: String, style: Style) throws {
        let font = font(style)
        let lines = wrap(text, font: font, width: width)
        let used = lines.map { font.width(of: $0) }.max() ?? 0
        try record(name, x: x, y: y, width: used, height: lines.count * advance(font))
        for line in lines {
            font.draw(line, x: x, baseline: y + font.ascent, into: &image)
            y += advance(font)
        }
    }

    /// A bold paragraph inside a ruled box: the page's warning.
    mutating func boxedParagraph(_ name: String, _ text: String) throws {
        let font = font(.emphasis)
        let padding = scale.pixels(millimetres: 2.5), rule = max(2, scale.pixels(millimetres: 0.5))
        let lines = wrap(text, font: font, width: width - 2 * padding)
        let height = lines.count * advance(font) + 2 * padding
        try record(name, x: x, y: y, width: width, height: height)
        image.fill(x: x, y: y, width: width, height: height, value: 0)
        image.fill(x: x + rule, y: y + rule, width: width - 2 * rule, height: height - 2 * rule, value: 255)
        var lineY = y + padding
        for line in lines {
            font.draw(line, x: x + padding, baseline: lineY + font.ascent, into: &image)
            lineY += advance(font)
        }
        y += height
    }

    /// The QR symbol at the left, at least 45 mm wide, with a full quiet zone, and its caption
    /// below. Does not move the cursor; returns the bottom of the block.
    mutating func qrCode(_ name: String, payload: [UInt8], caption: String) throws -> Int {
        try qrCode(name, code: QRCode(payload: payload, level: .quartile), caption: caption)
    }

    /// The same for an already encoded symbol (a numeric SeedQR, for example). A small public
    /// code (a share sheet's check code) may ask for less than the 45 mm a key's code gets.
    mutating func qrCode(_ name: String, code: QRCode, caption: String,
                         minimumWidthMillimetres: Double = RecoverySheet.minimumQRWidthMillimetres) throws -> Int {
        // At least 45 mm across, and modules no smaller than the minimum that survives a 100 dpi
        // scan of a print (a long ncryptsec needs a larger symbol than an nsec).
        let moduleSize = max(Int((Double(scale.pixels(millimetres: minimumWidthMillimetres)) / Double(code.size)).rounded(.up)),
                             QRImage.minimumModulePixels(dotsPerInch: scale.dotsPerInch))
        let quiet = RecoverySheet.quietZoneModules * moduleSize
        let side = code.size * moduleSize + 2 * quiet
        try record(name, x: x, y: y, width: side, height: side)
        for row in 0..<code.size {
            for column in 0..<code.size where code.isDark(x: column, y: row) {
                image.fill(x: x + quiet + column * moduleSize, y: y + quiet + row * moduleSize, width: moduleSize, height: moduleSize, value: 0)
            }
        }
        let font = font(.small)
        let lines = wrap(caption, font: font, width: side)
        let captionY = y + side
        try record(name + ".caption", x: x, y: captionY, width: side, height: lines.count * advance(font))
        for (index, line) in lines.enumerated() {
            font.draw(line, x: x + (side - font.width(of: line)) / 2, baseline: captionY + index * advance(font) + font.ascent, into: &image)
        }
        lastSide = side
        return captionY + lines.count * advance(font)
    }

    private var lastSide = 0
    private var savedColumn: (x: Int, y: Int, width: Int)?

    /// Narrows the writer to the space right of the QR code, `gap` millimetres from it.
    mutating func beginColumn(besideLastElement gap: Double) {
        savedColumn = (x, y, width)
        let offset = lastSide + scale.pixels(millimetres: gap)
        x += offset
        width -= offset
    }

    /// Back to the full width; the cursor stays where the column ended.
    mutating func endColumn() {
        guard let saved = savedColumn else { return }
        x = saved.x
        width = saved.width
        savedColumn = nil
    }

    /// Numbered words in columns, read down each column, from a phrase (words one space
    /// apart) in protected memory. The glyph calls take `String`s, so each word is one while
    /// the page is drawn: the words end up in the page's pixels either way.
    mutating func wordGrid(_ name: String, _ phrase: SecretBytes, columns: Int) throws {
        let words = phrase.withUnsafeBytes { $0.split(separator: 0x20).map { String(decoding: $0, as: UTF8.self) } }
        let font = font(.mono)
        let rows = (words.count + columns - 1) / columns
        let columnWidth = width / columns
        let entries = words.enumerated().map { (index, word) in (index < 9 ? " " : "") + "\(index + 1) \(word)" }
        guard let widest = entries.map({ font.width(of: $0) }).max(), widest <= columnWidth else {
            throw overflow(name)
        }
        let top = y + scale.pixels(millimetres: 1)
        let rowAdvance = advance(font) * 5 / 4
        try record(name, x: x, y: top, width: columnWidth * (columns - 1) + widest, height: rows * rowAdvance)
        for (index, entry) in entries.enumerated() {
            font.draw(entry, x: x + (index / rows) * columnWidth, baseline: top + (index % rows) * rowAdvance + font.ascent, into: &image)
        }
        y = top + rows * rowAdvance
    }

    /// The key in groups of four characters, as many groups a line as fit, for typing by hand.
    mutating func groupedKey(_ name: String, _ text: String) throws {
        let font = font(.monoLarge)
        let groups = stride(from: 0, to: text.count, by: 4).map { start in
            String(text.dropFirst(start).prefix(4))
        }
        let groupWidth = font.width(of: "0000 ")
        let perLine = max(1, (width + font.width(of: " ")) / groupWidth)
        let lines = stride(from: 0, to: groups.count, by: perLine).map { groups[$0..<min($0 + perLine, groups.count)].joined(separator: " ") }
        let rowAdvance = advance(font) * 5 / 4
        try record(name, x: x, y: y, width: lines.map { font.width(of: $0) }.max() ?? 0, height: lines.count * rowAdvance)
        for line in lines {
            font.draw(line, x: x, baseline: y + font.ascent, into: &image)
            y += rowAdvance
        }
    }

    /// Label and value rows; a value too wide for its column breaks between characters.
    mutating func labelledValues(_ name: String, _ rows: [(String, String)]) throws {
        let labelFont = font(.body), valueFont = font(.monoSmall)
        let labelWidth = (rows.map { labelFont.width(of: $0.0) }.max() ?? 0) + scale.pixels(millimetres: 3)
        let valueWidth = width - labelWidth
        let rowAdvance = max(advance(labelFont), advance(valueFont))
        let top = y
        var used = 0
        for (label, value) in rows {
            let lines = breakCharacters(value, font: valueFont, width: valueWidth)
            labelFont.draw(label, x: x, baseline: y + labelFont.ascent, into: &image)
            for line in lines {
                used = max(used, labelWidth + valueFont.width(of: line))
                valueFont.draw(line, x: x + labelWidth, baseline: y + valueFont.ascent, into: &image)
                y += rowAdvance
            }
        }
        try record(name, x: x, y: top, width: used, height: y - top)
    }

    // MARK: Helpers

    /// Greedy word wrap; a word wider than the line is broken between characters.
    private func wrap(_ text: String, font: Font, width: Int) -> [String] {
        var lines: [String] = [], current = ""
        for word in text.split(separator: " ").map(String.init) {
            let candidate = current.isEmpty ? word : current + " " + word
            if font.width(of: candidate) <= width {
                current = candidate
            } else {
                if !current.isEmpty { lines.append(current) }
                let pieces = breakCharacters(word, font: font, width: width)
                lines.append(contentsOf: pieces.dropLast())
                current = pieces.last ?? ""
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    private func breakCharacters(_ text: String, font: Font, width: Int) -> [String] {
        var lines: [String] = [], current = ""
        for character in text {
            if !current.isEmpty, font.width(of: current + String(character)) > width {
                lines.append(current)
                current = ""
            }
            current.append(character)
        }
        return lines + (current.isEmpty ? [] : [current])
    }

    private mutating func record(_ name: String, x: Int, y: Int, width: Int, height: Int) throws {
        guard x >= margin, y >= margin, x + width <= image.width - margin, y + height <= image.height - margin else {
            throw overflow(name)
        }
        elements.append(RecoverySheet.Element(name: name, x: x, y: y, width: width, height: height))
    }

    private func overflow(_ name: String) -> VaultError {
        VaultError(.sheetDoesNotFit, "the sheet does not fit on one \(paper.rawValue) page: '\(name)' would run off it", hint: "shorten the label, or use the other paper size")
    }
}

extension VaultError.Code {
    /// What a sheet must print does not fit on its page.
    public static let sheetDoesNotFit = VaultError.Code(name: "sheetDoesNotFit", category: .refused)
}
