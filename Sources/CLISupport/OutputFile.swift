import Foundation

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
        try AtomicFile.write(bytes, to: path, mode: kind == .secret ? 0o600 : 0o666 & ~currentUmask(), exclusive: exclusive)
    }

    public func write(_ bytes: [UInt8], kind: OutputKind, force: Bool, exclusive: Bool = false) throws {
        try bytes.withUnsafeBytes { try write($0, kind: kind, force: force, exclusive: exclusive) }
    }

    private func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }
}

/// Temp-file-and-rename writing.
enum AtomicFile {
    static func write(_ bytes: UnsafeRawBufferPointer, to path: String, mode: mode_t, exclusive: Bool) throws {
        var info = stat()
        let exists = lstat(path, &info) == 0
        if exists, exclusive {
            throw ToolError(.refused, "'\(path)' already exists; refusing to overwrite it", hint: "choose another file name, or move the old file away first")
        }
        // A device or FIFO (-o /dev/null) is written directly: renaming over it would replace it.
        if exists, (info.st_mode & S_IFMT) != S_IFREG, (info.st_mode & S_IFMT) != S_IFLNK {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw InputFiles.ioError("could not open '\(path)' for writing") }
            defer { close(descriptor) }
            try StandardStreams.write(bytes, to: descriptor)
            return
        }
        // Write through a symbolic link to the file it names, as a plain open would.
        let target = exists && (info.st_mode & S_IFMT) == S_IFLNK ? (resolvedPath(path) ?? path) : path
        // Split as text, not through URL, so messages show the path as the user wrote it.
        let slash = target.lastIndex(of: "/")
        let folder = slash.map { String(target[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let fileName = slash.map { String(target[target.index(after: $0)...]) } ?? target
        var template = Array((folder + "/." + fileName + ".tmp-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }  // created 0600
        guard descriptor >= 0 else { throw InputFiles.ioError("could not create a temporary file in '\(folder)'") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var finished = false
        defer {
            if !finished { unlink(temporary) }
        }
        do {
            defer { close(descriptor) }
            try StandardStreams.write(bytes, to: descriptor)
            guard fchmod(descriptor, mode) == 0 else { throw InputFiles.ioError("could not set the mode of '\(path)'") }
            guard fsync(descriptor) == 0 else { throw InputFiles.ioError("could not flush '\(path)' to disk") }
        } catch let error as ToolError {
            throw ToolError(error.status, error.reason.replacingOccurrences(of: "could not write", with: "could not write '\(path)'"))
        }
        if exclusive {
            // link(2) fails if the name exists, so a file that appeared meanwhile is not replaced.
            guard link(temporary, target) == 0 else {
                if errno == EEXIST { throw ToolError(.refused, "'\(path)' already exists; refusing to overwrite it") }
                throw InputFiles.ioError("could not create '\(path)'")
            }
            unlink(temporary)
        } else {
            guard rename(temporary, target) == 0 else { throw InputFiles.ioError("could not replace '\(path)'") }
        }
        finished = true
        syncFolder(folder)
    }

    private static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(validatingCString: resolved)
    }

    /// Makes the rename itself durable.
    private static func syncFolder(_ folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
