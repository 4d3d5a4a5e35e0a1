import Foundation

/// Temp-file-and-rename writing: the "nothing lost" rule of every output of the suite. The bytes
/// go to a temporary file in the target's folder, are flushed, and renamed over the target; a
/// failure or a kill leaves the old file (or none) and never a partial one. On Linux the
/// temporary file has no name until it is complete, so a kill leaves no temporary file either.
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
            throw alreadyExists(path)
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
        if try writeUnnamed(bytes, folder: folder, fileName: fileName, target: target, path: path, mode: mode, exclusive: exclusive) {
            return
        }
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
            try fill(descriptor, with: bytes, path: path, mode: mode)
        }
        if exclusive {
            // link(2) fails if the name exists, so a file that appeared meanwhile is not replaced.
            guard link(temporary, target) == 0 else {
                if errno == EEXIST { throw alreadyExists(path) }
                throw ioError("could not create '\(path)'")
            }
            unlink(temporary)
        } else {
            guard rename(temporary, target) == 0 else { throw ioError("could not replace '\(path)'") }
        }
        finished = true
        syncFolder(folder)
    }

    /// The usual way on Linux: the bytes go to an unnamed file (O_TMPFILE) that gets a name
    /// only once complete, so even SIGKILL or a power cut mid-write leaves nothing behind.
    /// Returns false, having changed nothing, where the file system or a missing /proc cannot.
    private static func writeUnnamed(_ bytes: UnsafeRawBufferPointer, folder: String, fileName: String, target: String, path: String,
                                     mode: mode_t, exclusive: Bool) throws -> Bool {
        // O_TMPFILE is __O_TMPFILE | O_DIRECTORY; the combined macro does not import into Swift.
        let descriptor = open(folder, __O_TMPFILE | O_DIRECTORY | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno
            if reason == EOPNOTSUPP || reason == EISDIR || reason == EINVAL { return false }
            throw ioError("could not create a temporary file in '\(folder)'")
        }
        defer { close(descriptor) }
        try fill(descriptor, with: bytes, path: path, mode: mode)
        let unnamed = "/proc/self/fd/\(descriptor)"
        if exclusive {
            // Naming fails if the name exists, so a file that appeared meanwhile is not replaced.
            guard linkat(AT_FDCWD, unnamed, AT_FDCWD, target, AT_SYMLINK_FOLLOW) == 0 else {
                if errno == EEXIST { throw alreadyExists(path) }
                if errno == ENOENT, access("/proc/self/fd", F_OK) != 0 { return false }
                throw ioError("could not create '\(path)'")
            }
        } else {
            // rename(2) is the only atomic replace, and it needs a name: the named moment lasts
            // from linkat to rename, not the whole write.
            var temporary = ""
            while true {
                temporary = folder + "/." + fileName + ".tmp-" + String((0..<6).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
                if linkat(AT_FDCWD, unnamed, AT_FDCWD, temporary, AT_SYMLINK_FOLLOW) == 0 { break }
                if errno == EEXIST { continue }
                if errno == ENOENT, access("/proc/self/fd", F_OK) != 0 { return false }
                throw ioError("could not create a temporary file in '\(folder)'")
            }
            guard rename(temporary, target) == 0 else {
                let failure = ioError("could not replace '\(path)'")
                unlink(temporary)
                throw failure
            }
        }
        syncFolder(folder)
        return true
    }

    /// Writes, sets the final mode and flushes: everything before the file gets its name.
    private static func fill(_ descriptor: Int32, with bytes: UnsafeRawBufferPointer, path: String, mode: mode_t) throws {
        try writeAll(bytes, to: descriptor, path: path)
        guard fchmod(descriptor, mode) == 0 else { throw ioError("could not set the mode of '\(path)'") }
        guard fsync(descriptor) == 0 else { throw ioError("could not flush '\(path)' to disk") }
    }

    private static func alreadyExists(_ path: String) -> VaultError {
        VaultError(.refused, "'\(path)' already exists; refusing to overwrite it", hint: "choose another file name, or move the old file away first")
    }

    /// Creates a folder and its missing parents (mkdir -p), failing with the system's reason.
    public static func createFolder(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + part
            if mkdir(prefix, 0o777) != 0, errno != EEXIST {
                throw ioError("could not create the folder '\(prefix)'")
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw VaultError(.io, "'\(path)' is not a folder")
        }
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
