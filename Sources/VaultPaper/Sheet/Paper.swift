import VaultCore
import VaultImaging

/// Page sizes the recovery sheet prints on.
public enum Paper: String, CaseIterable, Sendable {
    /// 210 × 297 mm.
    case a4
    /// US Letter, 8.5 × 11 in.
    case letter

    /// The resolutions a sheet is drawn at: below 72 the text breaks up; above 800 a page is
    /// more than the 64 million pixels `scan` reads (``InputLimits/imagePixels``: A4 passes
    /// it at 814), and a sheet the tool made must read back with it (issue 37). A PDF needs no
    /// more: a 300 dpi grid prints sharp on 600 and 1200 dpi printers too.
    public static let dotsPerInch = 72...800

    public var widthMillimetres: Double { self == .a4 ? 210 : 215.9 }
    public var heightMillimetres: Double { self == .a4 ? 297 : 279.4 }
}
