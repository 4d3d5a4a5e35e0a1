import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// Reading inputs: `-` is standard input, `s3://BUCKET/KEY` an object (its version is kept for a
/// write back), anything else a path. Secrets are read straight into protected memory, and only
/// from local files.
public enum InputFiles {
    /// The most a key file may hold; a larger one is certainly not a key.
    static let keyFileLimit = InputLimits.keyFile

    /// A display name for messages: the path, or "standard input".
    public static func displayName(_ path: String) -> String { FileNames.display(path) }

    /// A path as a message names it: quoted, or standard input as words. Quoted, "standard
    /// input" read as two words of the recovery-word list, and the redaction of quoted secrets
    /// withheld it ("devices file (not shown: …) lists nothing").
    public static func quotedName(_ path: String) -> String { FileNames.quoted(FileNames.display(path)) }

    /// Reads a whole public input (a vault, a JSON document), refusing one larger than `limit`
    /// (docs/conventions.md, "Limits") before holding more than that.
    public static func read(_ path: String, what: String, limit: Int = InputLimits.document) throws -> [UInt8] {
        if let name = try object(path, what: what) {
            return try ObjectStores.shared(for: name).read(name, what: what, limit: limit)
        }
        let descriptor = try openForReading(path, what: what)
        defer { if path != "-" { close(descriptor) } }
        guard path != "-" else { return try BoundedRead.all(from: descriptor, limit: limit, name: displayName(path), what: what) }
        // An output that replaces this file replaces it only as read (FilesRead).
        return try FilesRead.reading(descriptor) { try BoundedRead.all(from: descriptor, limit: limit, name: displayName(path), what: what) }
    }

    /// The object `path` names, nil for a file or standard input; a prefix, which names no one
    /// object, is refused before the store is reached (or libcurl loaded).
    static func object(_ path: String, what: String) throws -> S3ObjectName? {
        guard case .object(let name) = try VaultLocation(path) else { return nil }
        guard !name.isPrefix else { throw VaultError.prefixGivenAsObject(path, what: what) }
        return name
    }

    /// Reads a picture (PNG or JPEG), within the picture limits.
    public static func readImage(_ path: String) throws -> [UInt8] {
        try read(path, what: "picture", limit: InputLimits.imageFile)
    }

    /// Calls `body` with each line of a JSON Lines or list file, read a piece at a time so a
    /// file of any length takes bounded memory; a line over the line limit is refused.
    public static func forEachLine(_ path: String, what: String, _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
        let descriptor = try openForReading(path, what: what)
        defer { if path != "-" { close(descriptor) } }
        var reader = LineReader(descriptor: descriptor, name: "\(what) \(InputFiles.quotedName(path))")
        while let line = try reader.next() {
            // Decoded with repair, a byte that is no UTF-8 would make the line another text, and
            // an entry would match a device named so (a re-trial: `Den\xfe` revoked `Den\u{fffd}`).
            guard line.allSatisfy({ $0 < 0x80 }) || String(validating: line, as: UTF8.self) != nil else {
                throw VaultError.lineNotUTF8(what, InputFiles.displayName(path), line: reader.lineNumber)
            }
            try body(reader.lineNumber, line)
        }
    }

    /// Says now what reading `path` later would say of a missing or unreadable file: for a
    /// command that streams an input only once it has reached a server (a trial: `registry
    /// import --devices missing.jsonl` loaded libpq and tried the server first). A pipe or FIFO
    /// is left alone (opened and closed, its writer would lose its reader), as is standard
    /// input but a terminal, which reading refuses.
    public static func requireReadable(_ path: String, what: String) throws {
        var info = stat()
        if path != "-", stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFIFO { return }
        let descriptor = try openForReading(path, what: what)
        if path != "-" { close(descriptor) }
    }

    /// Reads a key file into protected memory and warns when others may read it.
    public static func readSecret(_ path: String, what: String, diagnostics: Diagnostics) throws -> SecretBytes {
        // A bucket is no place for a key: its objects are not 0600, and listing shows them.
        guard !VaultLocation.isObject(path) else {
            throw VaultError.keyInObjectStore(what, path)
        }
        let descriptor = try openForReading(path, what: what)
        defer { if path != "-" { close(descriptor) } }
        if path != "-" {
            var info = stat()
            if fstat(descriptor, &info) == 0, info.st_mode & 0o077 != 0, (info.st_mode & S_IFMT) == S_IFREG {
                diagnostics.warning("\(what) '\(path)' can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))); run: chmod 600 \(ShellWord.path(path))")
            }
        }
        // One byte more than the limit, so a file that is too large is noticed.
        var length = 0
        let buffer = try SecretBytes(count: keyFileLimit + 1) { buffer in
            var filled = 0
            while filled < buffer.count {
                let count = Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ioError(errno: errno, "could not read \(what) \(InputFiles.quotedName(path))")
                }
                if count == 0 { break }
                filled += count
            }
            guard filled <= keyFileLimit else {
                throw VaultError.notAKeyFileBySize(what, displayName(path), limit: keyFileLimit)
            }
            length = filled
        }
        return try buffer.slice(0..<length)
    }

    private static func openForReading(_ path: String, what: String) throws -> Int32 {
        if path == "-" {
            // Waiting silently on a terminal helps nobody, and a key typed there would echo.
            guard isatty(STDIN_FILENO) == 0 else {
                throw VaultError.secretFromTerminalInput(what)
            }
            return STDIN_FILENO
        }
        return try AtomicFile.openForReading(path, what: what)
    }

    static func ioError(errno code: Int32, _ text: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        AtomicFile.ioError(errno: code, text, file: file, line: line)
    }
}

/// Runs `body`, and says which input an error is about: for commands that read several inputs
/// of one kind (`diff`, `merge`, `verify`), "wrong key" alone does not say which file.
public func about<T>(_ label: String, _ path: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as VaultError {
        let name = "\(label) \(InputFiles.quotedName(path))"
        guard !error.reason.contains(InputFiles.quotedName(path)) else { throw error }
        throw error.withContext(prefix: "\(name): ")
    }
}

extension VaultError.Code {
    /// A line of a text input is not valid UTF-8.
    public static let lineNotUTF8 = VaultError.Code(name: "lineNotUTF8", category: .invalidInput)
}

extension VaultError {
    /// A line of a text input that is not valid UTF-8: refused, never read as another text.
    static func lineNotUTF8(_ what: String, _ name: String, line: Int, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.lineNotUTF8, "line \(line) of the \(what) \(FileNames.quoted(name)) is not valid UTF-8 (a byte that is part of no character); nothing was changed",
                   hint: "save the file as UTF-8", file: file, line: sourceLine)
    }
}
