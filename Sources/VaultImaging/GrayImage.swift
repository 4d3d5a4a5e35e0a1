internal import CImageCodecs
internal import CImagingLoad
import VaultCore

/// An 8-bit grayscale raster, 0 black to 255 white: a printed page, or a scan of one.
public struct GrayImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]
    /// Print resolution, when known (a PNG's pHYs chunk); 0 when not.
    public var dotsPerInch: Int

    public init(width: Int, height: Int, fill: UInt8 = 255, dotsPerInch: Int = 0) {
        precondition(width > 0 && height > 0)
        self.width = width
        self.height = height
        self.pixels = [UInt8](repeating: fill, count: width * height)
        self.dotsPerInch = dotsPerInch
    }

    init(width: Int, height: Int, pixels: [UInt8], dotsPerInch: Int) {
        precondition(pixels.count == width * height)
        self.width = width
        self.height = height
        self.pixels = pixels
        self.dotsPerInch = dotsPerInch
    }

    /// Fills a rectangle, clipped to the image.
    public mutating func fill(x: Int, y: Int, width rectWidth: Int, height rectHeight: Int, value: UInt8) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(width, x + rectWidth), y1 = min(height, y + rectHeight)
        guard x0 < x1, y0 < y1 else { return }
        pixels.withUnsafeMutableBufferPointer { buffer in
            for row in y0..<y1 {
                let start = row * width
                for column in x0..<x1 { buffer[start + column] = value }
            }
        }
    }

    /// Darkens the pixel at (x, y) by `coverage` (0…255 of ink), as text is drawn.
    package mutating func ink(x: Int, y: Int, coverage: UInt8) {
        guard x >= 0, y >= 0, x < width, y < height, coverage > 0 else { return }
        let index = y * width + x
        pixels[index] = UInt8(Int(pixels[index]) * (255 - Int(coverage)) / 255)
    }
}

// MARK: - PNG and JPEG

extension GrayImage {
    /// PNG, 8-bit gray, with a pHYs chunk when the resolution is known.
    public func pngData() throws -> [UInt8] {
        try LoadOnUse.require(OpaquePointer(hvt_library_png()), feature: "writing a PNG")
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var error = [CChar](repeating: 0, count: 256)
        let metres = UInt32((Double(dotsPerInch) / 0.0254).rounded())
        let status = pixels.withUnsafeBufferPointer {
            hvt_png_encode_gray8($0.baseAddress, UInt32(width), UInt32(height), metres, &out, &size, &error, error.count)
        }
        try checkCodec(status, error) { VaultError.libraryFailure("libpng", "failed encoding the PNG: \($0)") }
        defer { hvt_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    /// Whether `data` starts like a PNG or a JPEG (the signatures ``init(decoding:name:)`` tells
    /// them apart by), so a caller can tell a picture from a text file.
    public static func isPicture(_ data: [UInt8]) -> Bool { isPNG(data) || isJPEG(data) }

    /// A JPEG: in practice a phone photo, where a PNG is a scan or a screenshot.
    public static func isJPEG(_ data: [UInt8]) -> Bool { data.starts(with: [0xff, 0xd8]) }

    static func isPNG(_ data: [UInt8]) -> Bool { data.starts(with: [0x89, 0x50, 0x4e, 0x47]) }

    /// Decodes a PNG or JPEG (told apart by their signatures) into gray; `name` names it in messages. A picture whose header declares more
    /// than ``InputLimits/imagePixels`` pixels is refused before its pixels are allocated.
    public init(decoding data: [UInt8], name: String = "the image") throws {
        var out: UnsafeMutablePointer<UInt8>?
        var width: UInt32 = 0, height: UInt32 = 0, metres: UInt32 = 0
        var error = [CChar](repeating: 0, count: 256)
        let status: Int32
        let limit = UInt64(InputLimits.imagePixels)
        if Self.isPNG(data) {
            // libpng and libjpeg, loaded on use (issue 48), each when a picture of its kind comes.
            try LoadOnUse.require(OpaquePointer(hvt_library_png()), feature: "reading a PNG")
            status = data.withUnsafeBufferPointer { hvt_png_decode_gray8($0.baseAddress, $0.count, limit, &out, &width, &height, &metres, &error, error.count) }
        } else if Self.isJPEG(data) {
            try LoadOnUse.require(OpaquePointer(hvt_library_jpeg()), feature: "reading a JPEG")
            let coefficients = UInt64(InputLimits.jpegCoefficientBytes(forFileOf: data.count))
            status = data.withUnsafeBufferPointer {
                hvt_jpeg_decode_gray8($0.baseAddress, $0.count, limit, coefficients, Int32(InputLimits.jpegScans), &out, &width, &height, &error, error.count)
            }
        } else {
            throw VaultError.notAPicture(name)
        }
        if status == HVT_IMAGE_TOO_COSTLY {
            throw VaultError.pictureTooCostly(name, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        if status == HVT_IMAGE_TOO_LARGE {
            throw VaultError.pictureTooLarge(name, width: Int(width), height: Int(height))
        }
        try checkCodec(status, error) { VaultError.pictureUnreadable($0) }
        defer { hvt_free(out) }
        guard width > 0, height > 0 else { throw VaultError.emptyPicture() }
        self.init(width: Int(width), height: Int(height), pixels: Array(UnsafeBufferPointer(start: out, count: Int(width) * Int(height))),
                  dotsPerInch: Int((Double(metres) * 0.0254).rounded()))
    }
}

/// Every codec status goes through here: 0 is success, otherwise `failure` of the shim's message.
private func checkCodec(_ status: Int32, _ error: [CChar], _ failure: (String) -> VaultError) throws {
    guard status == 0 else {
        throw failure(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased())
    }
}

extension VaultError {
    /// A PNG or JPEG the codec could not decode, with the codec's reason.
    static func pictureUnreadable(_ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "decoding the image failed: \(reason)", file: file, line: line)
    }

    /// The bytes are neither a PNG nor a JPEG (told apart by their signatures).
    static func notAPicture(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(name) is neither a PNG nor a JPEG picture", file: file, line: line)
    }

    /// A JPEG that would cost more to decode than its size justifies (coefficients, scans), with
    /// the shim's reason.
    static func pictureTooCostly(_ name: String, _ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "\(name) is refused: \(reason)", file: file, line: line)
    }

    /// A picture whose header declares more than ``InputLimits/imagePixels`` pixels.
    static func pictureTooLarge(_ name: String, width: Int, height: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "\(name) is \(width) × \(height) pixels, more than the \(InputLimits.imagePixels / 1_000_000) million pixels a picture may have",
                   file: file, line: line)
    }

    /// A picture that decoded to no pixels.
    static func emptyPicture(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "the image is empty", file: file, line: line)
    }
}
