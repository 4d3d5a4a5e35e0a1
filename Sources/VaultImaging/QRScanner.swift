internal import CImagingLoad
internal import CZBar
import VaultCore

/// Finds QR codes in an image with zbar.
public enum QRScanner {
    /// The payloads of every QR code zbar finds, in its order, duplicates removed.
    public static func scan(_ image: GrayImage) throws -> [[UInt8]] {
        // zbar, loaded on use (issue 48): only a command that reads a code maps it.
        try LoadOnUse.require(OpaquePointer(hvt_library_zbar()), feature: "reading a QR code")
        guard let scanner = zbar_image_scanner_create() else {
            throw VaultError.zbarCannotCreateScanner()
        }
        defer { zbar_image_scanner_destroy(scanner) }
        // Only QR codes: other symbologies would only add false positives.
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        // The bytes as the code holds them: every code the suite and the app write is UTF-8
        // (or ASCII), and zbar's guess at a character set otherwise turns "León" into
        // "Le籀n" and "\\/" into "¥/" (it takes short byte runs for Shift JIS).
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        guard let zbarImage = zbar_image_create() else {
            throw VaultError.zbarCannotCreateImage()
        }
        defer { zbar_image_destroy(zbarImage) }
        zbar_image_set_format(zbarImage, hvt_zbar_format_gray8())
        zbar_image_set_size(zbarImage, UInt32(image.width), UInt32(image.height))
        var found: [[UInt8]] = []
        try image.pixels.withUnsafeBufferPointer { pixels in
            // zbar only reads the buffer during zbar_scan_image; no cleanup handler is needed.
            zbar_image_set_data(zbarImage, pixels.baseAddress, UInt(pixels.count), nil)
            guard zbar_scan_image(scanner, zbarImage) >= 0 else {
                throw VaultError.zbarScanFailed()
            }
            var symbol = zbar_image_first_symbol(zbarImage)
            while let current = symbol {
                if zbar_symbol_get_type(current) == ZBAR_QRCODE, let data = zbar_symbol_get_data(current) {
                    let length = Int(zbar_symbol_get_data_length(current))
                    let payload = data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
                    if !found.contains(payload) { found.append(payload) }
                }
                symbol = zbar_symbol_next(current)
            }
            zbar_image_set_data(zbarImage, nil, 0, nil)
        }
        return found
    }
}

extension VaultError {
    /// zbar could not allocate its image scanner.
    static func zbarCannotCreateScanner(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError.libraryFailure("zbar", "could not create a scanner", file: file, line: line)
    }

    /// zbar could not allocate the image it scans.
    static func zbarCannotCreateImage(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError.libraryFailure("zbar", "could not create an image", file: file, line: line)
    }

    /// zbar reported an error while scanning (not "no code found", which is an empty result).
    static func zbarScanFailed(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError.libraryFailure("zbar", "failed while scanning the image", file: file, line: line)
    }
}
