import FoundationEssentials
import Glibc
internal import CFileSystem
import VaultCore

/// The file-system helpers of the write path (docs/conventions.md, "Nothing lost"). Every output of the suite
/// is an ``OutputLocation`` resolved before anything is written and a ``StagedOutput`` (an
/// unnamed, flushed file) given its name only when complete, so a failure or a kill leaves the
/// old file (or none) and never a partial one.
public enum AtomicFile {
    /// A short temporary name (17 bytes), so that an output name of up to 255 bytes still works.
    static func temporaryName() -> String {
        ".hvt-" + randomNamePart(8) + ".tmp"
    }

    /// The temporary name a write of the output `name` tries first: derived from the name, so
    /// that a run killed between naming its temporary and the rename that replaces the output
    /// leaves a file the next run writing that output knows as its own and takes back
    /// (``removeAbandonedTemporary(_:in:)``): a run cut off anywhere, run again, leaves nothing.
    static func temporaryName(for name: String) -> String {
        ".hvt-" + Hex.encode(Array(SHA256.hash(Array(name.utf8)).prefix(4))) + ".tmp"
    }

    /// Removes the temporary `name` in `folder` when no live run holds it: a staged output is
    /// locked (flock(2)) from its creation to its name, and the lock ends with the process that
    /// took it, so an unlocked one was left by a run that was killed. Only a regular file of
    /// one link, owned by this user, still there by the inode opened, holding no key, is
    /// removed. Whether the name is free now.
    static func removeAbandonedTemporary(_ name: String, in folder: Int32) -> Bool {
        var named = stat()
        guard fstatat(folder, name, &named, AT_SYMLINK_NOFOLLOW) == 0 else { return errno == ENOENT }
        guard isLoneRegularFile(named), named.st_uid == geteuid() else { return false }
        let descriptor = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_ino == named.st_ino, opened.st_dev == named.st_dev,
              flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        // Only a staged output of the suite's, by its mark: a key written there by hand
        // (`keygen -o .hvt-….tmp`) was removed (a re-trial). Where no mark can be kept, only
        // what holds no key, by the rule every output obeys.
        switch KeyHoldingFile.isMarkedTemporary(descriptor) {
        case true?: break
        case false?: return false
        case nil:
            // An empty one may be a run's, made a moment ago and not yet locked.
            guard opened.st_size > 0, !KeyHoldingFile.holdsKey(name, in: folder, size: Int(opened.st_size)) else { return false }
        }
        return unlinkat(folder, name, 0) == 0
    }

    /// Whether the file at `path` is a regular file of one link: never a symbolic link, never
    /// one name among others of a file (a backup that is the vault itself under another name).
    public static func isLoneRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && isLoneRegularFile(info)
    }

    static func isLoneRegularFile(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG && info.st_nlink == 1 }

    /// The letters and digits a temporary name's random part is made of.
    package static let nameAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

    /// `count` random letters and digits (``nameAlphabet``), for a temporary name.
    package static func randomNamePart(_ count: Int) -> String {
        String((0..<count).map { _ in nameAlphabet.randomElement()! })
    }

    /// The mode of an output that holds no secret: 0666 less the process's umask, as a shell
    /// redirection makes it. Read once: reading the umask means setting it, which races with any
    /// other thread creating a file meanwhile.
    public static let publicFileMode: mode_t = {
        let mask = umask(0o022)
        umask(mask)
        return 0o666 & ~mask
    }()

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
    /// `secret`: each folder it makes is 0700 whatever the umask (a umask of 000 would make
    /// 0777 folders of shares or keys); folders that exist are left as they are.
    static func createFolder(_ path: String, made: inout [String], secret: Bool = false) throws {
        guard !VaultLocation.isSpelledAsURL(path) else { throw VaultError.urlAsLocalPath(path, what: "the folder") }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + part
            if mkdir(prefix, secret ? 0o700 : 0o777) == 0 {
                made.append(prefix)
                guard !secret || chmod(prefix, 0o700) == 0 else { throw ioError(errno: errno, "could not make the folder '\(prefix)' private") }
            } else if errno != EEXIST {
                throw ioError(errno: errno, "could not create the folder '\(prefix)'")
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw VaultError.notAFolder(path)
        }
    }

    /// Opens a file to read, refusing anything but a regular file (a FIFO, a device, a socket, a
    /// folder) before a byte is read (issue 37): opening a FIFO waits for a writer and reading a
    /// device may never end, so a manifest line or an option naming one would hang the tool. A
    /// path that is not a regular file is refused before it is opened (a device is never
    /// opened); the open cannot wait (non-blocking) and the kind is checked again on what was
    /// opened, so a file swapped for a FIFO in between is refused too. Standard input (`-`) is
    /// the caller's to handle.
    /// `handedOn`: whether the descriptor may reach another reader (a child, a library), for
    /// which O_NONBLOCK is cleared; a caller that reads the file whole and closes it spares the
    /// two calls (a batch's vaults, issue 48).
    public static func openForReading(_ path: String, what: String, handedOn: Bool = true) throws -> Int32 {
        var info = stat()
        if stat(path, &info) == 0 { try requireRegularFile(info.st_mode, path, what: what) }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let number = errno
            let failure = ioError(errno: number, "could not open \(what) '\(path)'")
            // `S3://b/k` or `https://…`: a file by that name is missing, and a URL was meant.
            guard number == ENOENT, VaultLocation.isSpelledAsURL(path) else { throw failure }
            throw failure.withContext(hint: VaultError.urlAsLocalPath(path, what: what).hint)
        }
        do {
            guard fstat(descriptor, &info) == 0 else { throw ioError(errno: errno, "could not read \(what) '\(path)'") }
            try requireRegularFile(info.st_mode, path, what: what)
        } catch {
            close(descriptor)
            throw error
        }
        // A regular file ignores O_NONBLOCK; cleared all the same for whoever reads it next.
        if handedOn { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK) }
        return descriptor
    }

    /// Refuses a path that exists and is not a regular file, for what a library opens itself
    /// (SQLite opens a registry): a FIFO there would block its first read forever.
    public static func requireRegularFileIfPresent(_ path: String, what: String) throws {
        var info = stat()
        if stat(path, &info) == 0 { try requireRegularFile(info.st_mode, path, what: what) }
    }

    /// Whether `path` is a regular file here whose first bytes are `prefix`, read without
    /// waiting: a FIFO is never opened.
    public static func regularFile(_ path: String, beginsWith prefix: [UInt8]) -> Bool {
        var info = stat()
        guard !VaultLocation.isSpelledAsURL(path), stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: prefix.count)
        let count = head.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count == prefix.count && head == prefix
    }

    private static func requireRegularFile(_ mode: mode_t, _ path: String, what: String) throws {
        switch mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: throw VaultError.inputIsAFolder(what, path)
        default: throw VaultError.inputNotARegularFile(what, path, kind: OutputLocation.kindName(mode))
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

    /// Makes a rename or link in an opened folder durable: 0, or the `errno` of the call that
    /// failed (a single output is complete and named either way; a batch must not record it done).
    @discardableResult
    package static func syncFolder(_ folder: Int32) -> Int32 {
        // An O_PATH descriptor cannot be synced; open the folder itself through it.
        let descriptor = openat(folder, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno }
        let failure = fsync(descriptor) == 0 ? 0 : errno
        close(descriptor)
        return failure
    }

    /// Writes every byte to an open descriptor, retrying short writes and interruptions.
    /// `path` names the destination in errors.
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
        let failure = writeAll(bytes, to: descriptor)
        guard failure == 0 else {
            throw ioError(errno: failure, "could not write '\(path)'")
        }
    }

    /// The same loop, returning 0 or the `errno` of the write that failed, for a caller that
    /// words some failures itself (a closed pipe on standard output).
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// An I/O error naming what failed, with the C library's text for `code`: the `errno` of
    /// the call that failed, read by the caller right after it (issue 44: read here, it was
    /// whatever a later call had left).
    public static func ioError(errno code: Int32, _ text: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "\(text): \(ErrnoText.of(code))", file: file, line: line)
    }
}

extension VaultError.Code {
    /// An input names a FIFO, a device or a socket, which the suite never reads.
    public static let notARegularFile = VaultError.Code(name: "notARegularFile", category: .invalidInput)
}

extension VaultError {
    /// An input that is a folder where a file belongs: refused as every input that is not a
    /// regular file is (exit 2), whichever input it is.
    static func inputIsAFolder(_ what: String, _ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notARegularFile, "\(what) '\(path)' is a directory, not a regular file", file: file, line: line)
    }

    /// An input that is not a regular file: reading it could wait forever.
    static func inputNotARegularFile(_ what: String, _ path: String, kind: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notARegularFile, "\(what) '\(path)' is \(kind), not a regular file; refusing to read it, since it could wait forever",
                   hint: "give a regular file, or pipe the data in as standard input (-) where the option takes it", file: file, line: line)
    }

    /// A path that should be (or was just made) a folder is something else.
    static func notAFolder(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "'\(path)' is not a folder", file: file, line: line)
    }
}
