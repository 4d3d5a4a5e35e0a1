import ArgumentParser
import Foundation
import VaultCore

/// A secret as one line of text (a key file's contents), in protected memory.
public func secretLine(_ secret: SecretBytes) throws -> SecretBytes {
    try SecretBytes(count: secret.count + 1) { buffer in
        secret.withUnsafeBytes { buffer.copyMemory(from: $0) }
        buffer[secret.count] = 0x0a
    }
}

/// `--now`, or the current time.
public func time(_ text: String?) throws -> Timestamp {
    guard let text else { return currentTime() }
    guard let time = Timestamp(rfc3339: text) else { throw ValidationError("--now takes an RFC 3339 time such as 2026-11-22T10:00:00Z") }
    return time
}

/// QR codes on screens and paper, as the tools read and make them.
public enum QRPictures {
    /// The payload of the one QR code in a picture; none or several is an error.
    public static func singleQR(_ path: String) throws -> [UInt8] {
        let name = InputFiles.displayName(path)
        let image = try GrayImage(decoding: InputFiles.readImage(path), name: "the picture '\(name)'")
        let payloads = try QRScanner.scan(image)
        guard let payload = payloads.first else {
            throw ToolError(.invalidInput, "no QR code found in '\(name)'", hint: "scan at 300 dpi or more, flat, in focus, with the whole code in the picture")
        }
        guard payloads.count == 1 else {
            throw ToolError(.invalidInput, "'\(name)' holds \(payloads.count) different QR codes; expected one", hint: "crop the picture to the code")
        }
        return payload
    }

    /// A QR image of a payload: error correction Q, at 300 dpi with modules no smaller than
    /// the sheets' minimum (1.2 mm, 15 pixels), so a print still reads after a 100 dpi scan.
    public static func image(_ payload: [UInt8]) throws -> GrayImage {
        let dotsPerInch = 300
        let modulePixels = Int((Double(dotsPerInch) * RecoverySheet.minimumModuleMillimetres / 25.4).rounded(.up))
        return QRImage.render(try QRCode(payload: payload, level: .quartile), modulePixels: modulePixels, dotsPerInch: dotsPerInch)
    }
}
