internal import CImagingLoad
internal import CQRencode
import VaultCore
import Glibc

/// A QR code symbol from libqrencode: a square of dark and light modules, no quiet zone.
public struct QRCode: Sendable {
    /// Error correction level. The recovery sheet uses `.quartile` or better (about 25% of the
    /// symbol may be lost and it still reads).
    public enum Level: Sendable { case low, medium, quartile, high }

    /// Modules per side.
    public let size: Int
    /// Row-major; true is a dark module.
    public let modules: [Bool]
    public let version: Int

    /// Encodes `payload` in byte mode at the smallest version that fits.
    public init(payload: [UInt8], level: Level) throws {
        try Self.requireLibrary()
        let code = payload.withUnsafeBufferPointer { QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, level.qrLevel) }
        try self.init(code, what: "\(payload.count) bytes", level: level)
    }

    /// Encodes text letting libqrencode choose the densest mode for each run (a string of
    /// digits, such as a Standard SeedQR, goes in numeric mode).
    public init(text: String, level: Level) throws {
        try Self.requireLibrary()
        let code = QRcode_encodeString(text, 0, level.qrLevel, QR_MODE_8, 1)
        try self.init(code, what: "\(text.utf8.count) characters", level: level)
    }

    /// ``init(text:level:)`` for a secret's text (a share code, a SeedQR): the C call reads a
    /// NUL-terminated copy in protected memory.
    public init(text: SecretBytes, level: Level) throws {
        try Self.requireLibrary()
        let terminated = try SecretBytes(count: text.count + 1) { buffer in text.withUnsafeBytes { buffer.copyMemory(from: $0) } }
        let code = terminated.withUnsafeBytes { QRcode_encodeString($0.baseAddress!.assumingMemoryBound(to: CChar.self), 0, level.qrLevel, QR_MODE_8, 1) }
        try self.init(code, what: "\(text.count) characters", level: level)
    }

    /// libqrencode, loaded on use (issue 48): only a command that draws a code maps it.
    private static func requireLibrary() throws {
        try LoadOnUse.require(OpaquePointer(hvt_library_qrencode()), feature: "drawing a QR code")
    }

    private init(_ code: UnsafeMutablePointer<QRcode>?, what: String, level: Level) throws {
        // ERANGE: more than the largest symbol holds, which the input made (a trial: a long
        // `--shared-zone-id` was an I/O failure, exit 1), not the system.
        guard let code else { throw errno == ERANGE ? VaultError.qrPayloadTooLarge(what, level: level) : VaultError.qrEncodingFailed(what) }
        defer { QRcode_free(code) }
        size = Int(code.pointee.width)
        version = Int(code.pointee.version)
        // Bit 0 of each byte is the module's colour; the other bits describe its role.
        modules = UnsafeBufferPointer(start: code.pointee.data, count: size * size).map { $0 & 1 == 1 }
    }

    public func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }
}

extension QRCode.Level {
    var qrLevel: QRecLevel {
        switch self {
        case .low: QR_ECLEVEL_L
        case .medium: QR_ECLEVEL_M
        case .quartile: QR_ECLEVEL_Q
        case .high: QR_ECLEVEL_H
        }
    }
}

extension QRCode.Level {
    /// The bytes the largest symbol (version 40) holds at this level, in byte mode.
    var mostBytes: Int {
        switch self {
        case .low: 2953
        case .medium: 2331
        case .quartile: 1663
        case .high: 1273
        }
    }

    var letter: String {
        switch self {
        case .low: "L"
        case .medium: "M"
        case .quartile: "Q"
        case .high: "H"
        }
    }
}

extension VaultError.Code {
    /// What a code would carry is more than one QR code holds.
    public static let qrPayloadTooLarge = VaultError.Code(name: "qrPayloadTooLarge", category: .usage)
}

extension VaultError {
    /// `size` (as "2215 bytes") is more than the largest QR code holds at `level`.
    static func qrPayloadTooLarge(_ size: String, level: QRCode.Level, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.qrPayloadTooLarge, "what the code would carry (\(size)) is more than one QR code holds at error correction level \(level.letter) (at most \(level.mostBytes) bytes); nothing was written",
                   hint: "give shorter values", file: file, line: line)
    }

    /// libqrencode returned no symbol for the payload (too long for any version, or out of memory);
    /// `size` is the payload's size, as "120 bytes".
    static func qrEncodingFailed(_ size: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError.libraryFailure("libqrencode", "could not encode \(size)", file: file, line: line)
    }
}
