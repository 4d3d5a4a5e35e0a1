import Foundation
internal import CFileSystem

/// The file-system helpers of the write path (docs/conventions.md, "Nothing lost"). Every output of the suite
/// is an ``OutputLocation`` resolved before anything is written and a ``StagedOutput`` (an
/// unnamed, flushed file) given its name only when complete, so a failure or a kill leaves the
/// old file (or none) and never a partial one.
public enum AtomicFile {
    /// A short temporary name (17 bytes), so that an output name of up to 255 bytes still works.
    static func temporaryName() -> String {
        ".hvt-" + randomNamePart(8) + ".tmp"
    }

    /// The letters and digits a temporary name's random part is made of.
    package static let nameAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

    /// `count` random letters and digits (``nameAlphabet``), for a temporary name.
    package static func randomNamePart(_ count: Int) -> String {
        String((0..<count).map { _ in nameAlphabet.randomElement()! })
    }

    /// The process's umask, for outputs created with the usual 0666 less it.
    public static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }

    /// Writes one output on its own: resolve, stage, publish. `exclusive` refuses an existing
    /// file, and keeps refusing if one appears meanwhile.
    public static func write(_ bytes: UnsafeRawBufferPointer, to path: String, mode: mode_t, exclusive: Bool) throws {
        let location = try OutputLocation(path)
        if exclusive, location.exists { throw VaultError.alreadyExists(path) }
        try StagedOutput(location, bytes: bytes, mode: mode).publish(exclusive: exclusive)
    }

    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t, exclusive: Bool) throws {
        try bytes.withUnsafeBytes { try write($0, to: path, mode: mode, exclusive: exclusive) }
    }

    /// Creates a folder and its missing parents (mkdir -p), failing with the system's reason.
    public static func createFolder(_ path: String) throws {
        var made: [String] = []
        try createFolder(path, made: &made)
    }

    /// The same, adding each folder it makes to `made`, outermost first, as it makes it: a
    /// failure part-way still says what was made.
    static func createFolder(_ path: String, made: inout [String]) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + part
            if mkdir(prefix, 0o777) == 0 {
                made.append(prefix)
            } else if errno != EEXIST {
                throw ioError("could not create the folder '\(prefix)'")
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw VaultError.notAFolder(path)
        }
    }

    /// Whether `path` is a folder this process can list: what a census walks, or where a check
    /// finds its keys.
    package static func isListableFolder(_ path: String) -> Bool {
        guard let directory = opendir(path) else { return false }
        closedir(directory)
        return true
    }

    /// Flushes the whole file system `descriptor` is on (syncfs(2)): how a group of outputs is
    /// made durable at once. Also what `vault-floor` times as the floor's durability.
    package static func syncFileSystem(_ descriptor: Int32) -> Bool { hvt_syncfs(descriptor) == 0 }

    /// Makes a rename or link in an opened folder durable; false when that failed (a single
    /// output is complete and named either way; a batch must not record it done).
    @discardableResult
    package static func syncFolder(_ folder: Int32) -> Bool {
        // An O_PATH descriptor cannot be synced; open the folder itself through it.
        let descriptor = openat(folder, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
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

extension VaultError {
    /// A path that should be (or was just made) a folder is something else.
    static func notAFolder(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "'\(path)' is not a folder", file: file, line: line)
    }
}
