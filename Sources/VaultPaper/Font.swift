internal import CFreeType
import VaultCore
import VaultImaging

/// One font face at one pixel size, rendered with FreeType. Owns its FreeType library and face.
public final class Font: @unchecked Sendable {
    // @unchecked: FreeType objects are not thread-safe; a Font is used by one renderer at a time.
    private var library: FT_Library?
    private var face: FT_Face?
    /// Advance widths by glyph: line wrapping measures the same letters many times, and loading
    /// a hinted glyph each time was a fifth of a sheet's instructions (scripts/bench profile).
    private var advances: [FT_UInt: Int] = [:]
    public let pixelSize: Int
    /// Pixels above the baseline for the tallest glyphs, and below it (positive).
    public let ascent: Int
    public let descent: Int

    /// Loads the font file; a missing file names the Debian package that provides DejaVu.
    public init(path: String, pixelSize: Int) throws {
        self.pixelSize = pixelSize
        try Self.check(FT_Init_FreeType(&library), "initialising FreeType")
        guard FT_New_Face(library, path, 0, &face) == 0, let face else {
            FT_Done_FreeType(library)
            throw VaultError.fontMissing(path)
        }
        try Self.check(FT_Set_Pixel_Sizes(face, 0, FT_UInt(pixelSize)), "setting the font size")
        let metrics = face.pointee.size.pointee.metrics
        ascent = Int(metrics.ascender + 63) >> 6
        descent = Int(-metrics.descender + 63) >> 6
    }

    deinit {
        FT_Done_Face(face)
        FT_Done_FreeType(library)
    }

    public var lineHeight: Int { ascent + descent }

    /// The advance width of `text` in pixels.
    public func width(of text: String) -> Int {
        var width = 0
        forEachGlyph(text, render: false) { advance, _ in width += advance }
        return width
    }

    /// Draws `text` with its baseline at `baseline`, starting at `x`. Returns the width drawn.
    @discardableResult
    public func draw(_ text: String, x: Int, baseline: Int, into image: inout GrayImage) -> Int {
        var penX = x
        forEachGlyph(text, render: true) { advance, glyph in
            guard let glyph else { penX += advance; return }
            let bitmap = glyph.pointee.bitmap
            let left = penX + Int(glyph.pointee.bitmap_left), top = baseline - Int(glyph.pointee.bitmap_top)
            if let buffer = bitmap.buffer {
                for row in 0..<Int(bitmap.rows) {
                    for column in 0..<Int(bitmap.width) {
                        image.ink(x: left + column, y: top + row, coverage: buffer[row * Int(bitmap.pitch) + column])
                    }
                }
            }
            penX += advance
        }
        return penX - x
    }

    /// Calls `body` with each glyph's advance (kerning included) and, when rendering, its slot.
    private func forEachGlyph(_ text: String, render: Bool, _ body: (Int, FT_GlyphSlot?) -> Void) {
        guard let face else { return }
        let hasKerning = face.pointee.face_flags & FT_Long(FT_FACE_FLAG_KERNING) != 0
        var previous: FT_UInt = 0
        for scalar in text.unicodeScalars {
            let index = FT_Get_Char_Index(face, FT_ULong(scalar.value))
            var kerning = 0
            if hasKerning, previous != 0, index != 0 {
                var delta = FT_Vector()
                if FT_Get_Kerning(face, previous, index, FT_UInt(FT_KERNING_DEFAULT.rawValue), &delta) == 0 {
                    kerning = Int(delta.x) >> 6
                }
            }
            previous = index
            if !render, let advance = advances[index] {
                body(kerning + advance, nil)
                continue
            }
            guard FT_Load_Glyph(face, index, render ? Int32(FT_LOAD_RENDER) : Int32(FT_LOAD_DEFAULT)) == 0 else { continue }
            let slot = face.pointee.glyph!
            let advance = Int(slot.pointee.advance.x >> 6)
            advances[index] = advance
            body(kerning + advance, render ? slot : nil)
        }
    }

    private static func check(_ status: FT_Error, _ operation: String) throws {
        guard status == 0 else { throw VaultError.freeTypeFailed(operation, status: Int(status)) }
    }
}

extension VaultError {
    /// The sheet's font file is missing or not a font.
    static func fontMissing(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "cannot load the font '\(path)'", hint: "install the Debian package fonts-dejavu-core", file: file, line: line)
    }

    /// A FreeType call that should not fail did.
    static func freeTypeFailed(_ operation: String, status: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "FreeType failed \(operation) (error \(status))", file: file, line: line)
    }
}
