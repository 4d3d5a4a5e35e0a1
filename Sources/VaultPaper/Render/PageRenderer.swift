internal import CCairo
internal import CPaperLoad
import Synchronization
import VaultCore
import VaultImaging

/// The one owner of cairo, Pango and poppler: text is measured and set by Pango (HarfBuzz
/// shaping: kerning, ligatures, line breaking), pages are drawn by cairo to a PDF (vector: text
/// as embedded, subset fonts; QR modules as filled squares) or to a picture, and a PDF is read
/// back as a picture by poppler.
///
/// Layout and drawing share one Pango context with hinting off and unrounded glyph positions,
/// so a line breaks at the same word in the PDF and at every resolution of the PNG.
enum PageRenderer {
    // MARK: Text

    /// A paragraph's size as Pango sets it in `width` points.
    struct TextSize {
        let width: Double
        let height: Double
        let lines: Int
        /// The first line's baseline, down from the paragraph's top: text of two styles side
        /// by side (a label and its value) is aligned on it.
        let baseline: Double
    }

    /// `width` infinite: the text is set as given, one line per line of `text`, never broken.
    static func measure(_ text: String, style: TextStyle, width: Double, centred: Bool = false) -> TextSize {
        Typesetter.shared.withLayout(text, style: style, width: width, centred: centred) { layout in
            var logicalWidth: Int32 = 0, logicalHeight: Int32 = 0
            pango_layout_get_size(layout, &logicalWidth, &logicalHeight)
            let unit = Double(hvt_pango_scale())
            return TextSize(width: Double(logicalWidth) / unit, height: Double(logicalHeight) / unit, lines: Int(pango_layout_get_line_count(layout)),
                            baseline: Double(pango_layout_get_baseline(layout)) / unit)
        }
    }

    /// The advance of `text` on one line, in points: the kerning test compares it with
    /// HarfBuzz's own shaping of the same font and size.
    static func advance(_ text: String, style: TextStyle) -> Double {
        measure(text, style: style, width: .infinity).width
    }

    /// The family Pango resolves a style's font to: "DejaVu Sans" unless fontconfig has no
    /// DejaVu and substituted another.
    static func resolvedFamily(_ style: TextStyle) -> String {
        Typesetter.shared.resolvedFamily(style)
    }

    /// cairo, Pango, GLib and (to read a PDF back) poppler, loaded on use (issue 48): only a
    /// command that lays out, draws or reads a page maps them. Every path into them comes
    /// here first: ``PageWriter``'s start (measuring text), drawing, reading.
    static func requireLibraries(reading: Bool = false) throws {
        // Reading draws the page with poppler into a cairo surface; no text is laid out.
        let libraries = [hvt_library_glib(), hvt_library_gobject(), hvt_library_cairo()]
            + (reading ? [hvt_library_poppler()] : [hvt_library_pango(), hvt_library_pangocairo()])
        for library in libraries {
            try LoadOnUse.require(OpaquePointer(library), feature: reading ? "reading a PDF" : "laying out a sheet")
        }
    }

    // MARK: Drawing

    /// The page as a one-page PDF of the paper's exact size. `metadata` holds nothing secret.
    static func pdf(_ page: PageDescription, metadata: PDFMetadata) throws -> [UInt8] {
        try requireLibraries()
        let sink = ByteSink()
        // cairo calls back into `sink` until the surface is destroyed, also when drawing failed
        // and the surface is only torn down: it lives until then.
        return try withExtendedLifetime(sink) {
            let surface = cairo_pdf_surface_create_for_stream({ closure, data, length in
                guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
                Unmanaged<ByteSink>.fromOpaque(closure).takeUnretainedValue().bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
                return CAIRO_STATUS_SUCCESS
            }, Unmanaged.passUnretained(sink).toOpaque(), page.widthPoints, page.heightPoints)!
            defer { cairo_surface_destroy(surface) }
            try check(cairo_surface_status(surface), "creating a PDF")
            cairo_pdf_surface_restrict_to_version(surface, CAIRO_PDF_VERSION_1_5)
            cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, metadata.title)
            cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, metadata.creator)
            // The sheet's own date, not the clock's: the same sheet gives the same bytes.
            cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATE_DATE, metadata.date + "T00:00:00")
            try draw(page, on: surface)
            cairo_surface_finish(surface)
            try check(cairo_surface_status(surface), "writing the PDF")
            return sink.bytes
        }
    }

    /// The page as a gray picture at `dotsPerInch`.
    static func image(_ page: PageDescription, dotsPerInch: Int) throws -> GrayImage {
        try requireLibraries()
        let width = Int((page.widthPoints / 72 * Double(dotsPerInch)).rounded())
        let height = Int((page.heightPoints / 72 * Double(dotsPerInch)).rounded())
        // cairo never returns NULL: a failure is an error surface, whose status says why.
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))!
        defer { cairo_surface_destroy(surface) }
        try check(cairo_surface_status(surface), "creating a picture")
        try draw(page, on: surface, scale: Double(dotsPerInch) / 72)
        return gray(surface, dotsPerInch: dotsPerInch)
    }

    private static func draw(_ page: PageDescription, on surface: OpaquePointer, scale: Double = 1) throws {
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        try check(cairo_status(cr), "drawing")
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_paint(cr)
        cairo_scale(cr, scale, scale)
        cairo_set_source_rgb(cr, 0, 0, 0)
        for item in page.items {
            switch item {
            case .text(let text):
                Typesetter.shared.withLayout(text.text, style: text.style, width: text.wraps ? text.width : .infinity, centred: text.centred) { layout in
                    cairo_move_to(cr, text.x, text.y)
                    pango_cairo_show_layout(cr, layout)
                }
            case .rectangle(let box, let frame):
                if let frame {
                    cairo_set_line_width(cr, frame)
                    cairo_rectangle(cr, box.x + frame / 2, box.y + frame / 2, box.width - frame, box.height - frame)
                    cairo_stroke(cr)
                } else {
                    cairo_rectangle(cr, box.x, box.y, box.width, box.height)
                    cairo_fill(cr)
                }
            case .qr(let qr):
                // Each row's runs of dark modules as one rectangle each, filled without
                // anti-aliasing: edges fall on the layout's pixel grid, sharp in a picture.
                cairo_save(cr)
                cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE)
                for row in 0..<qr.code.size {
                    var column = 0
                    while column < qr.code.size {
                        guard qr.code.isDark(x: column, y: row) else { column += 1; continue }
                        let start = column
                        while column < qr.code.size, qr.code.isDark(x: column, y: row) { column += 1 }
                        cairo_rectangle(cr, qr.x + Double(start) * qr.module, qr.y + Double(row) * qr.module, Double(column - start) * qr.module, qr.module)
                    }
                }
                cairo_fill(cr)
                cairo_restore(cr)
            }
        }
        try check(cairo_status(cr), "drawing the page")
    }

    /// An RGB24 surface (black on white) as gray pixels.
    private static func gray(_ surface: OpaquePointer, dotsPerInch: Int) -> GrayImage {
        cairo_surface_flush(surface)
        let width = Int(cairo_image_surface_get_width(surface)), height = Int(cairo_image_surface_get_height(surface))
        let stride = Int(cairo_image_surface_get_stride(surface))
        var image = GrayImage(width: width, height: height, dotsPerInch: dotsPerInch)
        let data = cairo_image_surface_get_data(surface)!
        image.pixels.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<height {
                let row = data + y * stride
                for x in 0..<width {
                    // xRGB in native (little-endian) order: B, G, R, unused.
                    let b = Int(row[4 * x]), g = Int(row[4 * x + 1]), r = Int(row[4 * x + 2])
                    pixels[y * width + x] = UInt8((r * 299 + g * 587 + b * 114 + 500) / 1000)
                }
            }
        }
        return image
    }

    // MARK: Reading a PDF back

    /// The one page of a PDF as a picture at `dotsPerInch` (poppler), so a sheet can be
    /// checked before it is printed. Nil when `bytes` are not a PDF.
    static func rasterize(pdf bytes: [UInt8], name: String, dotsPerInch: Int) throws -> GrayImage? {
        guard isPDF(bytes) else { return nil }
        try requireLibraries(reading: true)
        let data = bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        var error: UnsafeMutablePointer<GError>?
        guard let document = poppler_document_new_from_bytes(data, nil, &error) else {
            let reason = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unreadable"
            if let error { g_error_free(error) }
            throw VaultError.unreadablePDF(name, reason: reason)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(document)) }
        let pages = Int(poppler_document_get_n_pages(document))
        guard pages == 1 else { throw VaultError.notOnePage(name, pages: pages) }
        guard let page = poppler_document_get_page(document, 0) else { throw VaultError.unreadablePDF(name, reason: "its page cannot be read") }
        defer { g_object_unref(UnsafeMutableRawPointer(page)) }
        var widthPoints = 0.0, heightPoints = 0.0
        poppler_page_get_size(page, &widthPoints, &heightPoints)
        let scale = Double(dotsPerInch) / 72
        let width = (widthPoints * scale).rounded(), height = (heightPoints * scale).rounded()
        // The page's size comes from the file: bounded as any picture is, before drawing.
        guard width >= 1, height >= 1, width * height <= Double(InputLimits.imagePixels) else {
            throw VaultError.pageTooLarge(name, widthPoints: widthPoints, heightPoints: heightPoints, dotsPerInch: dotsPerInch)
        }
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))!
        defer { cairo_surface_destroy(surface) }
        try check(cairo_surface_status(surface), "creating a picture")
        let cr = cairo_create(surface)!
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_paint(cr)
        cairo_scale(cr, scale, scale)
        poppler_page_render_for_printing(page, cr)
        let status = cairo_status(cr)
        cairo_destroy(cr)
        try check(status, "drawing '\(name)'")
        return gray(surface, dotsPerInch: dotsPerInch)
    }

    static func isPDF(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array("%PDF-".utf8)) }

    private static func check(_ status: cairo_status_t, _ operation: String) throws {
        guard status == CAIRO_STATUS_SUCCESS else {
            throw VaultError.cairoFailed("\(operation): \(String(cString: cairo_status_to_string(status)))")
        }
    }

    private final class ByteSink {
        var bytes: [UInt8] = []
    }
}

/// A printed sheet's PDF, read back as a picture: the file a parent is about to print can be
/// scanned and checked like a photo of the page.
public enum SheetPDF {
    /// The resolution a PDF is drawn at to be read: a 300 dpi scan.
    public static let readingDotsPerInch = 300

    /// The one page of `bytes` as a picture; nil when `bytes` are not a PDF.
    public static func picture(of bytes: [UInt8], name: String) throws -> GrayImage? {
        try PageRenderer.rasterize(pdf: bytes, name: name, dotsPerInch: readingDotsPerInch)
    }

    public static func isPDF(_ bytes: [UInt8]) -> Bool { PageRenderer.isPDF(bytes) }

    /// Loads the libraries reading a PDF needs (poppler, cairo, GLib), or says which is missing:
    /// for a caller that reads PDFs in a child process, before it starts one.
    public static func requireReader() throws { try PageRenderer.requireLibraries(reading: true) }
}

/// What a sheet's PDF says of itself: nothing secret (the kind of sheet, the tool, the date).
struct PDFMetadata: Sendable {
    let title: String
    let creator: String
    /// `YYYY-MM-DD`, the sheet's printed date.
    let date: String
}

/// Pango's context, made once: a cairo font map, 72 units to the inch (a unit is a point), no
/// hinting, unrounded glyph positions. Pango objects are not thread-safe; the mutex keeps each
/// use to one thread.
private final class Typesetter: @unchecked Sendable {
    // @unchecked: the context is only touched while the mutex is held.
    static let shared = Typesetter()

    private let context: OpaquePointer
    private let lock = Mutex(())

    private init() {
        // The libraries are loaded by whoever reaches here first: `PageWriter` has loaded them
        // (and reported a missing one as exit 69); a caller that measures text directly (a
        // test) loads them here, and a failure then is a defect of that caller.
        do { try PageRenderer.requireLibraries() } catch { fatalError("measuring text without the page libraries: \(error)") }
        let fontMap = pango_cairo_font_map_new()
        context = pango_font_map_create_context(fontMap)
        let options = cairo_font_options_create()
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        pango_cairo_context_set_font_options(context, options)
        cairo_font_options_destroy(options)
        pango_cairo_context_set_resolution(context, 72)
        pango_context_set_round_glyph_positions(context, 0)
    }

    func withLayout<T>(_ text: String, style: TextStyle, width: Double, centred: Bool, _ body: (OpaquePointer) throws -> T) rethrows -> T {
        try lock.withLock { _ in
            let layout = pango_layout_new(context)!
            defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
            let font = pango_font_description_from_string(style.fontDescription)
            pango_layout_set_font_description(layout, font)
            pango_font_description_free(font)
            if width.isFinite { pango_layout_set_width(layout, Int32(width * Double(hvt_pango_scale()))) }
            pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
            pango_layout_set_alignment(layout, centred ? PANGO_ALIGN_CENTER : PANGO_ALIGN_LEFT)
            pango_layout_set_line_spacing(layout, 1.15)
            // Where a word is broken between characters, Pango 1.50 adds a hyphen that is not
            // in the text: on a key, an npub or a path a parent would copy it (issue 37).
            // Machine values are broken by PageWriter at their groups and never reach this;
            // prose keeps its own hyphens only.
            let attributes = pango_attr_list_new()
            pango_attr_list_insert(attributes, pango_attr_insert_hyphens_new(0))
            pango_layout_set_attributes(layout, attributes)
            pango_attr_list_unref(attributes)
            pango_layout_set_text(layout, text, -1)
            return try body(layout)
        }
    }

    func resolvedFamily(_ style: TextStyle) -> String {
        lock.withLock { _ in
            let wanted = pango_font_description_from_string(style.fontDescription)
            defer { pango_font_description_free(wanted) }
            guard let font = pango_context_load_font(context, wanted) else { return "" }
            defer { g_object_unref(UnsafeMutableRawPointer(font)) }
            let found = pango_font_describe(font)
            defer { pango_font_description_free(found) }
            return pango_font_description_get_family(found).map { String(cString: $0) } ?? ""
        }
    }
}

extension VaultError.Code {
    /// A PDF given as a sheet has another number of pages than one.
    public static let notOnePage = VaultError.Code(name: "notOnePage", category: .invalidInput)
}

extension VaultError {
    /// Fontconfig has no DejaVu: Pango would set the sheet in another font.
    static func fontMissing(_ family: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "the font '\(family)' is not installed; the sheets are set in it", hint: "install the Debian package fonts-dejavu-core", file: file, line: line)
    }

    /// cairo failed where it should not (memory, a write to the stream).
    static func cairoFailed(_ operation: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError.libraryFailure("cairo", "failed \(operation)", file: file, line: line)
    }

    /// A file that starts as a PDF but that poppler cannot read.
    static func unreadablePDF(_ name: String, reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "'\(name)' is not a readable PDF: \(reason.prefix(200))", file: file, line: line)
    }

    /// A PDF of several sheets, or of none.
    static func notOnePage(_ name: String, pages: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notOnePage, "'\(name)' has \(pages) pages; a sheet is one page", file: file, line: line)
    }

    /// A PDF page too large to draw within the picture limit.
    static func pageTooLarge(_ name: String, widthPoints: Double, heightPoints: Double, dotsPerInch: Int,
                             file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "'\(name)' has a page of \(Int(widthPoints)) × \(Int(heightPoints)) points, more than a picture may be at \(dotsPerInch) dpi",
                   file: file, line: line)
    }
}
