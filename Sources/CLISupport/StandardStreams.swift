import Foundation

/// Raw writes to standard output and error, and terminal checks.
public enum StandardStreams {
    public static func writeOutput(_ bytes: [UInt8]) { _ = try? write(bytes, to: STDOUT_FILENO) }
    public static func writeError(_ bytes: [UInt8]) { _ = try? write(bytes, to: STDERR_FILENO) }

    public static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    public static var errorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Writes everything, retrying short writes and interruptions.
    static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw ToolError(.operational, "could not write: \(systemErrorText())")
            }
            offset += written
        }
    }

    static func write(_ bytes: [UInt8], to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { try write($0, to: descriptor) }
    }
}

/// The C library's text for `errno`, lowercased to fit our messages.
func systemErrorText(_ code: Int32 = errno) -> String {
    (strerror(code).flatMap { String(validatingCString: $0) } ?? "error \(code)").lowercased()
}
