import VaultCore
import VaultImaging

/// Page sizes the recovery sheet prints on.
public enum Paper: String, CaseIterable, Sendable {
    /// 210 × 297 mm.
    case a4
    /// US Letter, 8.5 × 11 in.
    case letter

    /// The resolutions a sheet is drawn at: below 72 the text breaks up; above 1200 a page is
    /// over a hundred million pixels.
    public static let dotsPerInch = 72...1200

    public var widthMillimetres: Double { self == .a4 ? 210 : 215.9 }
    public var heightMillimetres: Double { self == .a4 ? 297 : 279.4 }
}

/// Millimetres and points to pixels at a resolution.
struct PageScale {
    let dotsPerInch: Int

    func pixels(millimetres: Double) -> Int { Int((millimetres / 25.4 * Double(dotsPerInch)).rounded()) }
    func pixels(points: Double) -> Int { max(1, Int((points / 72 * Double(dotsPerInch)).rounded())) }
}

/// The three DejaVu faces a sheet uses (Debian package fonts-dejavu-core).
public struct SheetFonts: Sendable {
    public let regular: String
    public let bold: String
    public let mono: String

    public static let debianFolder = "/usr/share/fonts/truetype/dejavu"

    public init(folder: String = debianFolder) {
        regular = folder + "/DejaVuSans.ttf"
        bold = folder + "/DejaVuSans-Bold.ttf"
        mono = folder + "/DejaVuSansMono.ttf"
    }
}
