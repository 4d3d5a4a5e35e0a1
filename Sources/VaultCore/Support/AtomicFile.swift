import Foundation

/// Temp-file-and-rename writing: the "nothing lost" rule of every output of the suite. The bytes
/// go to a temporary file in the target's folder, are flushed, and renamed over the target; a
/// failure or a kill leaves the old file (or none) and never a partial one.
public enum AtomicFile {
    /// The prefix and suffix of the temporary files, so a batch can clear what a killed run left.
    public static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(".") && name.count > 11 && name.dropLast(6).hasSuffix(".tmp-")
    }

    /// The process's umask, for outputs created with the usual 0666 less it.
    public static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }

    /// Writes `bytes` to `path` with `mode`. `exclusive` refuses an existing file, and keeps
    /// refusing if one appears meanwhile (the finished file is linked into place).
    public static func write(_ bytes: UnsafeRawBufferPointer, to path: String, mode: mode_t, exclusive: Bool) throws {
        var info = stat()
        let exists = lstat(path, &info) == 0
        if exists, exclusive {
            throw VaultError(.refused, "'\(path)' already exists; refusing to overwrite it", hint: "choose another file name, or move the old file away first")
        }
        // A device or FIFO (-o /dev/null) is written directly: renaming over it would replace it.
        if exists, (info.st_mode & S_IFMT) != S_IFREG, (info.st_mode & S_IFMT) != S_IFLNK {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw ioError("could not open '\(path)' for writing") }
            defer { close(descriptor) }
            try writeAll(bytes, to: descriptor, path: path)
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
        guard descriptor >= 0 else { throw ioError("could not create a temporary file in '\(folder)'") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var finished = false
        defer {
            if !finished { unlink(temporary) }
        }
        do {
            defer { close(descriptor) }
            try writeAll(bytes, to: descriptor, path: path)
            guard fchmod(descriptor, mode) == 0 else { throw ioError("could not set the mode of '\(path)'") }
            guard fsync(descriptor) == 0 else { throw ioError("could not flush '\(path)' to disk") }
        }
        if exclusive {
            // link(2) fails if the name exists, so a file that appeared meanwhile is not replaced.
            guard link(temporary, target) == 0 else {
                if errno == EEXIST { throw VaultError(.refused, "'\(path)' already exists; refusing to overwrite it") }
                throw ioError("could not create '\(path)'")
            }
            unlink(temporary)
        } else {
            guard rename(temporary, target) == 0 else { throw ioError("could not replace '\(path)'") }
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

    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t, exclusive: Bool) throws {
        try bytes.withUnsafeBytes { try write($0, to: path, mode: mode, exclusive: exclusive) }
    }

    /// Writes every byte to an open descriptor, retrying short writes and interruptions.
    /// `path` names the destination in errors.
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw ioError("could not write '\(path)'")
            }
            offset += written
        }
    }

    /// An I/O error naming what failed, with the C library's text for `errno`.
    public static func ioError(_ text: String) -> VaultError {
        VaultError(.io, "\(text): \((strerror(errno).flatMap { String(validatingCString: $0) } ?? "error \(errno)").lowercased())")
    }
}
