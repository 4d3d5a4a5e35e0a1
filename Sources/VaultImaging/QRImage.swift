import VaultCore

/// A QR code alone as an image: the symbol with a four-module quiet zone, at a resolution.
public enum QRImage {
    /// No module is smaller than this on paper or in a picture for a screen: the print-and-scan
    /// test (a 100 dpi scan, rotated, blurred, JPEG) reads 1.2 mm modules with both zbar and
    /// zxing-cpp, and not 0.85 mm ones.
    package static let minimumModuleMillimetres = 1.2

    /// The fewest pixels a module may have at `dotsPerInch` (15 at 300 dpi).
    package static func minimumModulePixels(dotsPerInch: Int) -> Int {
        Int((Double(dotsPerInch) * minimumModuleMillimetres / 25.4).rounded(.up))
    }

    /// A QR picture of a payload for a screen or a print: error correction Q, at 300 dpi with
    /// the smallest modules that still read after a 100 dpi scan.
    public static func picture(of payload: [UInt8]) throws -> GrayImage {
        let dotsPerInch = 300
        return render(try QRCode(payload: payload, level: .quartile), modulePixels: minimumModulePixels(dotsPerInch: dotsPerInch), dotsPerInch: dotsPerInch)
    }

    /// Modules of `modulePixels` pixels; `dotsPerInch` is recorded for printing.
    public static func render(_ code: QRCode, modulePixels: Int, dotsPerInch: Int) -> GrayImage {
        let side = (code.size + 8) * modulePixels
        var image = GrayImage(width: side, height: side, dotsPerInch: dotsPerInch)
        for y in 0..<code.size {
            for x in 0..<code.size where code.isDark(x: x, y: y) {
                image.fill(x: (x + 4) * modulePixels, y: (y + 4) * modulePixels, width: modulePixels, height: modulePixels, value: 0)
            }
        }
        return image
    }
}
