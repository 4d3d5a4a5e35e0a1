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
