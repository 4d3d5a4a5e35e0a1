import Foundation
import VaultCore

/// What an output holds, which decides its file mode and whether a terminal may see it.
public enum OutputKind: Sendable {
    /// Text a person may read: 0666 less the umask, allowed on a terminal.
    case text
    /// Binary data (a vault): 0666 less the umask, refused on a terminal unless forced.
    case binary
    /// Key material: 0600, refused on a terminal unless forced.
    case secret
}

/// An output destination: `-o FILE`, or standard output when no file (or `-`) is given.
///
/// Files are written to a temporary file in the target folder, flushed and renamed over the
/// target, so a failure or a kill never leaves a partial or empty output (README "Conventions").
public struct OutputTarget: Sendable {
    public let path: String?

    public init(_ path: String?) {
        self.path = path == "-" ? nil : path
    }

    public var isStandardOutput: Bool { path == nil }
    public var displayName: String { path ?? "standard output" }

    /// Refuses an output that is the same file as one of the inputs.
    public func checkDistinct(fromInputs inputs: [String]) throws {
        guard let path else { return }
        var outputInfo = stat()
        guard stat(path, &outputInfo) == 0 else { return }
        for input in inputs where input != "-" {
            var inputInfo = stat()
            if stat(input, &inputInfo) == 0, inputInfo.st_dev == outputInfo.st_dev, inputInfo.st_ino == outputInfo.st_ino {
                throw ToolError(.refused, "output '\(path)' is the same file as input '\(input)'; inputs are never overwritten",
                                hint: "write to another file and rename it yourself")
            }
        }
    }

    /// Writes `bytes` in one go. `exclusive` refuses an existing file (O_EXCL semantics, kept by
    /// linking the finished temporary file into place).
    public func write(_ bytes: UnsafeRawBufferPointer, kind: OutputKind, force: Bool, exclusive: Bool = false) throws {
        guard let path else {
            if kind != .text, StandardStreams.outputIsTerminal, !force {
                throw ToolError(
                    .refused,
                    kind == .secret ? "refusing to write a secret to a terminal" : "refusing to write binary data to a terminal",
                    hint: "write it to a file with -o FILE, redirect standard output, or pass --force"
                )
            }
            try StandardStreams.write(bytes, to: STDOUT_FILENO)
            return
        }
        try AtomicFile.write(bytes, to: path, mode: kind == .secret ? 0o600 : 0o666 & ~AtomicFile.currentUmask(), exclusive: exclusive)
    }

    public func write(_ bytes: [UInt8], kind: OutputKind, force: Bool, exclusive: Bool = false) throws {
        try bytes.withUnsafeBytes { try write($0, kind: kind, force: force, exclusive: exclusive) }
    }
}
