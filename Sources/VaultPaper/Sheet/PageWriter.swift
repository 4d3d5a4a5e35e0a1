import VaultCore
import VaultImaging

/// Lays a page out from top to bottom into a ``PageDescription``, in points: Pango measures and
/// breaks the text, and every block's box is recorded. Anything that would cross the margins
/// is an error, never a clipped page.
struct PageWriter {
    private(set) var page: PageDescription
    private(set) var y: Double
    private let margin: Double
    private var x: Double
    private var width: Double

    /// `gridDotsPerInch`: the resolution QR modules are whole pixels at: the PNG's, and a PDF's
    /// too (`--dpi`, 300 by default, which printers of 300, 600 and 1200 dpi print sharp).
    init(paper: Paper, gridDotsPerInch: Int) throws {
        guard Paper.dotsPerInch.contains(gridDotsPerInch) else {
            throw VaultError.outOfRange("the resolution", "\(Paper.dotsPerInch.lowerBound) to \(Paper.dotsPerInch.upperBound) dpi, not \(gridDotsPerInch)")
        }
        try PageRenderer.requireLibraries()
        for style in [TextStyle.body, .mono] where PageRenderer.resolvedFamily(style) != style.family {
            throw VaultError.fontMissing(style.family)
        }
        page = PageDescription(paper: paper, gridDotsPerInch: gridDotsPerInch)
        margin = Self.points(millimetres: RecoverySheet.marginMillimetres)
        x = margin
        y = margin
        width = page.widthPoints - 2 * margin
    }

    static func points(millimetres: Double) -> Double { millimetres / 25.4 * 72 }

    mutating func space(millimetres: Double) { y += Self.points(millimetres: millimetres) }
    mutating func moveTo(y newY: Double) { y = newY }

    // MARK: Blocks

    /// Points in small print, 1 mm apart so each reads as one point (a sheet's "keep" list).
    mutating func points(_ items: [(name: String, text: String)]) throws {
        for (index, item) in items.enumerated() {
            if index > 0 { space(millimetres: 1) }
            try paragraph(item.name, item.text, style: .small)
        }
    }

    mutating func paragraph(_ name: String, _ text: String, style: TextStyle) throws {
        let size = PageRenderer.measure(text, style: style, width: width)
        try record(name, x: x, y: y, width: size.width, height: size.height)
        page.add(.text(.init(x: x, y: y, width: width, text: text, style: style, centred: false)))
        y += size.height
    }

    /// A bold paragraph inside a ruled frame: the page's warning.
    mutating func boxedParagraph(_ name: String, _ text: String) throws {
        let padding = Self.points(millimetres: 2.5), rule = Self.points(millimetres: 0.5)
        let size = PageRenderer.measure(text, style: .emphasis, width: width - 2 * padding)
        let height = size.height + 2 * padding
        try record(name, x: x, y: y, width: width, height: height)
        page.add(.rectangle(.init(x: x, y: y, width: width, height: height), frame: rule))
        page.add(.text(.init(x: x + padding, y: y + padding, width: width - 2 * padding, text: text, style: .emphasis, centred: false)))
        y += height
    }

    /// The QR symbol at the left, at least `minimumWidthMillimetres` across, with a full quiet
    /// zone and its caption below. Modules are whole pixels at the layout's grid and no smaller
    /// than the minimum that survives a 100 dpi scan of a print (a long ncryptsec needs a larger
    /// symbol than an nsec). Does not move the cursor; returns the bottom of the block.
    mutating func qrCode(_ name: String, code: QRCode, caption: String,
                         minimumWidthMillimetres: Double = RecoverySheet.minimumQRWidthMillimetres) throws -> Double {
        let grid = Double(page.gridDotsPerInch)
        let minimumPixels = Self.points(millimetres: minimumWidthMillimetres) / 72 * grid
        let modulePixels = max(Int((minimumPixels / Double(code.size)).rounded(.up)), QRImage.minimumModulePixels(dotsPerInch: page.gridDotsPerInch))
        let module = Double(modulePixels) * 72 / grid
        let side = Double(code.size + 2 * RecoverySheet.quietZoneModules) * module
        // The symbol's corner on the grid, so each module covers whole pixels.
        let left = ((x + Double(RecoverySheet.quietZoneModules) * module) / 72 * grid).rounded() * 72 / grid
        let top = ((y + Double(RecoverySheet.quietZoneModules) * module) / 72 * grid).rounded() * 72 / grid
        try record(name, x: x, y: y, width: side, height: side)
        page.add(.qr(.init(x: left, y: top, module: module, code: code)))
        let captionSize = PageRenderer.measure(caption, style: .caption, width: side, centred: true)
        try record(name + ".caption", x: x, y: y + side, width: side, height: captionSize.height)
        page.add(.text(.init(x: x, y: y + side, width: side, text: caption, style: .caption, centred: true)))
        lastSide = side
        return y + side + captionSize.height
    }

    private var lastSide = 0.0
    private var savedColumn: (x: Double, width: Double)?

    /// Narrows the writer to the space right of the QR code, `gap` millimetres from it.
    mutating func beginColumn(besideLastElement gap: Double) {
        savedColumn = (x, width)
        let offset = lastSide + Self.points(millimetres: gap)
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

    /// Numbered words in columns, read down each column, from a phrase (words one space apart)
    /// in protected memory. The page keeps each entry as text to set it: the words are in the
    /// page either way.
    mutating func wordGrid(_ name: String, _ phrase: SecretBytes, columns: Int) throws {
        let words = phrase.withUnsafeBytes { $0.split(separator: 0x20).map { String(decoding: $0, as: UTF8.self) } }
        let rows = (words.count + columns - 1) / columns
        let columnWidth = width / Double(columns)
        let entries = words.enumerated().map { (index, word) in (index < 9 ? " " : "") + "\(index + 1) \(word)" }
        let sizes = entries.map { PageRenderer.measure($0, style: .mono, width: .infinity) }
        guard let widest = sizes.map(\.width).max(), widest <= columnWidth else { throw overflow(name) }
        let rowAdvance = (sizes.map(\.height).max() ?? 0) * 1.1
        let top = y + Self.points(millimetres: 1)
        try record(name, x: x, y: top, width: columnWidth * Double(columns - 1) + widest, height: Double(rows) * rowAdvance)
        for (index, entry) in entries.enumerated() {
            page.add(.text(.init(x: x + Double(index / rows) * columnWidth, y: top + Double(index % rows) * rowAdvance, width: columnWidth,
                                 text: entry, style: .mono, centred: false, wraps: false)))
        }
        y = top + Double(rows) * rowAdvance
    }

    /// The key in groups of four characters, as many groups a line as fit, for typing by hand.
    mutating func groupedKey(_ name: String, _ text: String) throws {
        let lines = try machineLines(name, text, style: .monoLarge, width: width, separator: " ")
        let size = PageRenderer.measure(lines.joined(separator: "\n"), style: .monoLarge, width: .infinity)
        try record(name, x: x, y: y, width: size.width, height: size.height)
        page.add(.text(.init(x: x, y: y, width: width, text: lines.joined(separator: "\n"), style: .monoLarge, centred: false, wraps: false)))
        y += size.height
    }

    /// Label and value rows, each label on its value's first baseline. A value too wide for
    /// its column breaks between its groups of four (``machineLines``), never inside one.
    mutating func labelledValues(_ name: String, _ rows: [(String, String)]) throws {
        let labelWidth = (rows.map { PageRenderer.advance($0.0, style: .body) }.max() ?? 0) + Self.points(millimetres: 3)
        let valueWidth = width - labelWidth
        let top = y
        var used = 0.0
        for (label, value) in rows {
            // Printed as a screen shows it where it fits, so a parent compares it character
            // by character; broken only at its groups where it does not.
            let valueText = try machineLines(name, value, style: .monoSmall, width: valueWidth, separator: "").joined(separator: "\n")
            let labelSize = PageRenderer.measure(label, style: .body, width: labelWidth)
            let valueSize = PageRenderer.measure(valueText, style: .monoSmall, width: .infinity)
            let labelY = y + max(0, valueSize.baseline - labelSize.baseline), valueY = y + max(0, labelSize.baseline - valueSize.baseline)
            page.add(.text(.init(x: x, y: labelY, width: labelWidth, text: label, style: .body, centred: false)))
            page.add(.text(.init(x: x + labelWidth, y: valueY, width: valueWidth, text: valueText, style: .monoSmall, centred: false, wraps: false)))
            used = max(used, labelWidth + valueSize.width)
            y = max(labelY + labelSize.height, valueY + valueSize.height)
        }
        try record(name, x: x, y: top, width: used, height: y - top)
    }

    /// A machine value (a key, an npub, an id, a path, a check code) as lines to print
    /// (issue 37): broken only between its groups of four characters, counted from its start
    /// and again after each `/` and each of its own spaces; as many whole groups a line as fit
    /// in `width`; and never a lone short group on a last line of its own. `separator` joins
    /// groups within a line (a space for a key typed by hand, nothing for a value compared
    /// with a screen); the value's own spaces stay. So the lines are the value's characters
    /// plus spaces and line breaks at group boundaries, nothing else: no hyphen, no orphan.
    func machineLines(_ name: String, _ value: String, style: TextStyle, width: Double, separator: String) throws -> [String] {
        var groups: [(text: String, spaced: Bool)] = []
        var current = "", spaced = false
        func flush() {
            if !current.isEmpty { groups.append((current, spaced)) }
            current = ""
            spaced = false
        }
        for character in value {
            if character == " " { flush(); spaced = true; continue }
            current.append(character)
            if current.count == 4 || character == "/" { flush() }
        }
        flush()
        func line(_ part: ArraySlice<(text: String, spaced: Bool)>) -> String {
            part.enumerated().map { ($0.offset == 0 ? "" : $0.element.spaced ? " " : separator) + $0.element.text }.joined()
        }
        func fits(_ part: ArraySlice<(text: String, spaced: Bool)>) -> Bool { PageRenderer.advance(line(part), style: style) <= width }
        var lines: [Range<Int>] = []
        var start = 0
        while start < groups.count {
            var end = start + 1
            guard fits(groups[start..<end]) else { throw overflow(name) }
            while end < groups.count, fits(groups[start...end]) { end += 1 }
            lines.append(start..<end)
            start = end
        }
        // A last line of one short group (an npub's final three characters) reads as a stray:
        // it takes the group before it along.
        if lines.count > 1, let last = lines.last, last.count == 1, groups[last.lowerBound].text.count < 4, lines[lines.count - 2].count > 1,
           fits(groups[(last.lowerBound - 1)..<last.upperBound]) {
            lines[lines.count - 2] = lines[lines.count - 2].lowerBound..<(last.lowerBound - 1)
            lines[lines.count - 1] = (last.lowerBound - 1)..<last.upperBound
        }
        return lines.map { line(groups[$0]) }
    }

    /// A line exactly 50 mm long with its label, at the foot of the page: a parent measures it
    /// to see that the printer did not shrink the page (the QR codes and the words need it as
    /// printed).
    mutating func scaleBar(_ name: String, label: String) throws {
        let length = Self.points(millimetres: 50), thickness = Self.points(millimetres: 0.6), tick = Self.points(millimetres: 3)
        let labelSize = PageRenderer.measure(label, style: .small, width: width - length - Self.points(millimetres: 4))
        let height = max(tick, labelSize.height)
        try record(name, x: x, y: y, width: length + Self.points(millimetres: 4) + labelSize.width, height: height)
        let middle = y + height / 2
        page.add(.rectangle(.init(x: x, y: middle - thickness / 2, width: length, height: thickness), frame: nil))
        for end in [x, x + length - thickness] {
            page.add(.rectangle(.init(x: end, y: middle - tick / 2, width: thickness, height: tick), frame: nil))
        }
        page.add(.text(.init(x: x + length + Self.points(millimetres: 4), y: middle - labelSize.height / 2, width: width - length - Self.points(millimetres: 4),
                             text: label, style: .small, centred: false)))
        y += height
    }

    /// The cursor for a block of `height` that must end at the bottom margin.
    func bottom(leaving height: Double) -> Double { page.heightPoints - margin - height }

    // MARK: Helpers

    private mutating func record(_ name: String, x: Double, y: Double, width: Double, height: Double) throws {
        let slack = 0.01  // points: rounding in Pango's units
        guard x >= margin - slack, y >= margin - slack, x + width <= page.widthPoints - margin + slack, y + height <= page.heightPoints - margin + slack else {
            throw overflow(name)
        }
        page.record(name, .init(x: x, y: y, width: width, height: height))
    }

    private func overflow(_ name: String) -> VaultError { .sheetDoesNotFit(paper: page.paper, block: name) }
}

extension VaultError.Code {
    /// What a sheet must print does not fit on its page.
    public static let sheetDoesNotFit = VaultError.Code(name: "sheetDoesNotFit", category: .refused)
}

extension VaultError {
    /// A block of the sheet would run off its page. The block is the layout's (`label` holds
    /// a share's holder too), so the hint names every text a person gives (a trial: a holder's
    /// long name was blamed on the label).
    static func sheetDoesNotFit(paper: Paper, block: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.sheetDoesNotFit, "the sheet does not fit on one \(paper.rawValue) page: '\(block)' would run off it",
                   hint: "shorten what is printed as given (the label, a holder's name, the app's name, the user id), or use the other paper size", file: file, line: line)
    }
}
