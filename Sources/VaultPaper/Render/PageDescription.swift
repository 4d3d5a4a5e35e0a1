import VaultCore
import VaultImaging

/// A sheet laid out once, in points (1/72 inch) from the page's top-left corner: what the PDF
/// and the PNG renderer both draw (``PageRenderer``). Text is kept as text with its style and
/// the width it was set in, so both renderers break its lines where the layout did (the same
/// Pango layout, unhinted); QR codes are kept as modules, drawn as filled squares.
public struct PageDescription: Sendable {
    public let paper: Paper
    /// The resolution the layout snapped its QR modules to (whole pixels at this resolution,
    /// the PNG's; a PDF's by default 300 dpi).
    public let gridDotsPerInch: Int
    public private(set) var items: [Item] = []
    /// Where each named block landed: tests prove that none overlaps another or the margins.
    public private(set) var elements: [Element] = []

    public enum Item: Sendable {
        case text(Text)
        /// A filled rectangle (a rule, the scale bar), or a frame of `lineWidth`.
        case rectangle(Rectangle, frame: Double?)
        case qr(QR)
    }

    public struct Text: Sendable {
        public let x, y, width: Double
        public let text: String
        public let style: TextStyle
        public let centred: Bool
        /// False for a machine value (``PageWriter/machineValue``): its lines are set as
        /// given, never broken again, so no break or hyphen lands inside a group.
        public var wraps = true
    }

    public struct Rectangle: Sendable, Equatable {
        public let x, y, width, height: Double

        public func intersects(_ other: Rectangle) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
        }
    }

    public struct QR: Sendable {
        /// The symbol's top-left corner (inside its quiet zone) and one module's side.
        public let x, y, module: Double
        public let code: QRCode
    }

    public struct Element: Sendable {
        public let name: String
        public let box: Rectangle
    }

    public var widthPoints: Double { paper.widthMillimetres / 25.4 * 72 }
    public var heightPoints: Double { paper.heightMillimetres / 25.4 * 72 }

    init(paper: Paper, gridDotsPerInch: Int) {
        self.paper = paper
        self.gridDotsPerInch = gridDotsPerInch
    }

    mutating func add(_ item: Item) { items.append(item) }
    mutating func record(_ name: String, _ box: Rectangle) { elements.append(Element(name: name, box: box)) }

    /// The named block, for tests.
    public func element(_ name: String) -> Element? { elements.first { $0.name == name } }
}

/// The type styles of a sheet: DejaVu Sans and DejaVu Sans Mono (Debian's fonts-dejavu-core),
/// sizes in points.
public enum TextStyle: String, CaseIterable, Sendable {
    case title, subtitle, heading, emphasis, body, small, caption, mono, monoSmall, monoLarge, technical

    var family: String {
        switch self {
        case .mono, .monoSmall, .monoLarge: "DejaVu Sans Mono"
        default: "DejaVu Sans"
        }
    }

    var bold: Bool { [.title, .subtitle, .heading, .emphasis].contains(self) }

    var points: Double {
        switch self {
        case .title: 20
        case .subtitle: 14
        case .heading: 11.5
        case .emphasis: 10.5
        case .body: 9.5
        case .small, .caption: 8.5
        case .technical: 7
        case .mono: 10
        case .monoSmall: 8.5
        case .monoLarge: 13
        }
    }

    /// Pango's font description ("DejaVu Sans Bold 11.5").
    var fontDescription: String { "\(family)\(bold ? " Bold" : "") \(points)" }
}

extension PageDescription {
    /// The page as JSON: every item and named block, rounded to 0.01 pt. The golden page
    /// descriptions in the tests are this, so a change of layout is a reviewed diff.
    public func jsonValue() -> JSONValue {
        func number(_ value: Double) -> JSONValue { .number(String((value * 100).rounded() / 100)) }
        func box(_ r: Rectangle) -> [(key: String, value: JSONValue)] {
            [("x", number(r.x)), ("y", number(r.y)), ("width", number(r.width)), ("height", number(r.height))]
        }
        let items: [JSONValue] = items.map { item in
            switch item {
            case .text(let text):
                .object([("text", .string(text.text)), ("style", .string(text.style.rawValue)), ("x", number(text.x)), ("y", number(text.y)),
                         ("width", number(text.width)), ("centred", .bool(text.centred))] + (text.wraps ? [] : [("wraps", .bool(false))]))
            case .rectangle(let rectangle, let frame):
                .object([("rectangle", .object(box(rectangle)))] + (frame.map { [("frame", number($0))] } ?? []))
            case .qr(let qr):
                .object([("qr", .int(qr.code.size)), ("x", number(qr.x)), ("y", number(qr.y)), ("module", number(qr.module))])
            }
        }
        return .object([
            ("paper", .string(paper.rawValue)), ("gridDotsPerInch", .int(gridDotsPerInch)),
            ("items", .array(items)),
            ("elements", .array(elements.map { .object([("name", .string($0.name))] + box($0.box)) })),
        ])
    }
}
