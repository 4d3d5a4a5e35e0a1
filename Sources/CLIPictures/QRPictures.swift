import CLISupport
import FoundationEssentials
import VaultCore
import VaultImaging

/// QR codes on screens and paper, as the tools read and make them.
public enum QRPictures {
    /// Reads a document (a PDF) as a picture; nil when the bytes are not one it reads.
    public typealias DocumentReader = ([UInt8], String) throws -> GrayImage?

    /// The payload of the one QR code in a picture; none or several is an error. `typedInstead`
    /// says how to go on without the code (type what the page prints beside it), for the hint.
    ///
    /// `reads` says which kinds of code the command reads (``PrintedCode``): a picture whose
    /// codes are all of other kinds is refused naming what it is, and the command that reads
    /// it; of several codes, the one of the right kind is taken (a share sheet also carries its
    /// check code).
    ///
    /// `documents` turns a file that is no picture (a sheet's PDF) into one, or gives nil.
    public static func singleQR(_ path: String, reads: (PrintedCode) -> Bool, expected: String, typedInstead: String? = nil,
                                documents: DocumentReader? = nil) throws -> [UInt8] {
        let name = InputFiles.displayName(path)
        let bytes = try InputFiles.readImage(path)
        let image = try documents?(bytes, name) ?? GrayImage(decoding: bytes, name: "the picture \(FileNames.quoted(name))")
        let all = try QRScanner.scan(image)
        let payloads = all.filter { reads(PrintedCode.classify($0)) }
        if payloads.isEmpty, case let found = PrintedCode.mostTelling(all), found != .other {
            throw VaultError.wrongKindOfCode(found, expected: expected, name: FileNames.quoted(name)).withContext(hint: commandReading(found).map { "read it with \($0)" })
        }
        guard let payload = payloads.first else {
            // A photo fails on light, angle and framing; a scan on resolution.
            let retake = GrayImage.isJPEG(bytes)
                ? "take the photo again in even light without glare or shadow, the page flat, the whole code in the frame and in focus"
                : "scan at 300 dpi or more, flat, in focus, with the whole code in the picture"
            throw VaultError.noQRCode(in: name, hint: retake + (typedInstead.map { "; or \($0)" } ?? ""))
        }
        guard payloads.count == 1 else {
            throw VaultError.severalQRCodes(in: name, count: payloads.count)
        }
        return payload
    }

    /// The command that reads a kind of code: one table for the suite, since a code of one
    /// tool is often handed to another by mistake.
    public static func commandReading(_ kind: PrintedCode) -> String? {
        switch kind {
        case .recoveryKey: "recovery-sheet scan (or verify)"
        case .share, .shareCheck: "recovery-sheet combine, or verify --shares"
        case .recoveryCode: "recovery-sheet code unwrap --sheet (or code verify)"
        case .deviceLink: "device-link read"
        case .pairing: "device-link pairing read"
        case .other: nil
        }
    }
}

extension VaultError.Code {
    /// A picture in which no QR code reads.
    public static let noQRCode = VaultError.Code(name: "noQRCode", category: .invalidInput)
    /// A picture holding several different QR codes.
    public static let severalQRCodes = VaultError.Code(name: "severalQRCodes", category: .invalidInput)
}

extension VaultError {
    static func noQRCode(in name: String, hint: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noQRCode, "no QR code found in \(FileNames.quoted(name))", hint: hint, file: file, line: line)
    }

    static func severalQRCodes(in name: String, count: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.severalQRCodes, "\(FileNames.quoted(name)) holds \(count) different QR codes; expected one", hint: "crop the picture to the code", file: file, line: line)
    }
}
