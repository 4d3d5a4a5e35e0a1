import Foundation
import VaultCore

/// Raw writes to standard output and error, and terminal checks.
public enum StandardStreams {
    public static func writeOutput(_ bytes: [UInt8]) { _ = try? write(bytes, to: STDOUT_FILENO) }
    public static func writeError(_ bytes: [UInt8]) { _ = try? write(bytes, to: STDERR_FILENO) }

    public static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    public static var errorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether standard output and standard error are one terminal: then a line written to
    /// standard output lands in the middle of a progress bar drawn on standard error.
    public static var outputAndErrorShareTerminal: Bool {
        guard outputIsTerminal, errorIsTerminal else { return false }
        var output = stat(), error = stat()
        guard fstat(STDOUT_FILENO, &output) == 0, fstat(STDERR_FILENO, &error) == 0 else { return false }
        return output.st_rdev == error.st_rdev
    }

    /// The mode of standard output when it is a regular file that others may read (a shell
    /// redirection under the usual umask makes it 0644); nil otherwise.
    public static var outputFileReadableByOthers: mode_t? {
        var info = stat()
        guard fstat(STDOUT_FILENO, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o077 != 0 else { return nil }
        return info.st_mode & 0o7777
    }

    /// Writes everything, retrying short writes and interruptions (VaultCore's loop).
    static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws {
        try AtomicFile.writeAll(bytes, to: descriptor, path: descriptor == STDOUT_FILENO ? "standard output" : "standard error")
    }

    static func write(_ bytes: [UInt8], to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { try write($0, to: descriptor) }
    }
}
