internal import CFileSystem
import FoundationEssentials
import Glibc
import VaultCore

/// The identity of a file on this machine: its device and inode, or, for a file that does not
/// exist yet, its folder's device and inode and its name there. Two paths with one identity are
/// one file however they are spelled: another path, a symbolic link, a hard link (issue 16).
public struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64
    /// Set only for a file that does not exist yet: the rest of its path below the folder.
    package let pendingName: String?

    /// The identity of an open descriptor's file, when it is a regular file; nil otherwise.
    public static func of(descriptor: Int32) -> FileIdentity? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileIdentity(info)
    }

    /// The identity of an existing file, following symbolic links; nil when there is none.
    public static func of(existing path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    /// The identity a file that does not exist would have in its existing folder, as an output
    /// there gets it; nil when the folder does not exist either.
    public static func of(missing path: String) -> FileIdentity? {
        guard let resolved = ResolvedPath(path) else { return nil }
        guard let pending = resolved.pendingPath else { return of(existing: resolved.existing) }
        guard let base = of(existing: resolved.existing) else { return nil }
        return FileIdentity(device: base.device, inode: base.inode, pendingName: pending)
    }
}

extension FileIdentity {
    /// The identity of the file a `stat` describes.
    init(_ info: stat) {
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), pendingName: nil)
    }
}

/// A path resolved against what exists, as the kernel will resolve it once its missing folders
/// are made: the deepest existing entry along it (its real path, symbolic links followed) and
/// the names still to be made below that. "x/../store" with no "x" is the existing "./store",
/// not a folder "store" still to be made: tidying the text alone let such a spelling past the
/// same-file rules and replace an input. Each ".." is applied to the real path where the
/// folders exist (a link's ".." is its target's parent) and to the pending names below them.
package struct ResolvedPath {
    /// An absolute path without symbolic links, of an entry that exists.
    let existing: String
    /// The names below ``existing`` that do not exist yet, without "." or "..".
    let pending: [String]

    var pendingPath: String? { pending.isEmpty ? nil : pending.joined(separator: "/") }
    /// The whole path, absolute.
    package var path: String { ([existing == "/" ? "" : existing] + pending).joined(separator: "/") }

    /// Nil when the path cannot name a file: a dangling link, a file used as a folder, a part
    /// that cannot be looked up (permissions).
    package init?(_ path: String) {
        guard !path.isEmpty, let start = path.utf8.first == UInt8(ascii: "/") ? "/" : Self.realPath(".") else { return nil }
        var existing = start
        var pending: [String] = []
        for part in path.utf8.split(separator: UInt8(ascii: "/")).map({ String(decoding: $0, as: UTF8.self) }) where part != "." {
            if part == ".." {
                if pending.isEmpty {
                    // "file/.." is not a folder: the kernel says ENOTDIR, and so does this.
                    var info = stat()
                    guard stat(existing, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
                    existing = OutputLocation.split(existing).folder
                } else {
                    pending.removeLast()
                }
                continue
            }
            guard pending.isEmpty else { pending.append(part); continue }
            let candidate = existing == "/" ? "/" + part : existing + "/" + part
            var info = stat()
            guard lstat(candidate, &info) == 0 else {
                guard errno == ENOENT else { return nil }
                pending.append(part)
                continue
            }
            guard let real = Self.realPath(candidate) else { return nil }
            existing = real
        }
        self.existing = existing
        self.pending = pending
    }

    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(validatingCString: resolved)
    }
}

/// A folder outputs go to, opened once (O_PATH) so that a folder renamed or a link planted
/// afterwards cannot redirect a write; shared by every output in it (a batch writes thousands).
/// A folder that does not exist yet is made when the first output is staged in it, not before,
/// so a refused command leaves nothing behind.
public final class OutputFolder: @unchecked Sendable {
    public let path: String
    private var descriptor: Int32
    /// The folder's identity, or, while it does not exist, the nearest existing folder's.
    let identity: FileIdentity
    /// While the folder does not exist: its path below the nearest existing folder.
    let pendingPath: String?
    /// Whether a missing folder may be made (`--out-dir`); otherwise a missing folder is an error.
    private let mayCreate: Bool
    /// Where a missing folder is made: the resolved path, so only the folders it lacks are made
    /// (never the "x" of "x/../store").
    private let creationPath: String
    /// The nearest folder that exists, itself when it does.
    private let nearestExisting: String
    /// The folders this object made, outermost first, so a refused run can remove them again.
    private var made: [String] = []
    /// Folders made for it are 0700: it holds secrets (shares, keys).
    private let secret: Bool

    /// The folder does not exist and may not be made.
    public var isMissing: Bool { descriptor < 0 && !mayCreate }

    public init(_ path: String, create: Bool, secret: Bool = false) throws {
        guard !VaultLocation.isSpelledAsURL(path) else { throw VaultError.urlAsLocalPath(path, what: "the folder") }
        self.path = path
        mayCreate = create
        self.secret = secret
        descriptor = open(path, __O_PATH | O_DIRECTORY | O_CLOEXEC)
        if descriptor < 0 {
            // The kernel cannot open "missing/../store", yet making "missing" would make it name
            // "./store": the path is resolved against what exists, and an existing folder is
            // opened by its real path, so the same-file rules see the files in it.
            let failure = errno
            guard failure == ENOENT, let resolved = ResolvedPath(path) else { throw AtomicFile.ioError(errno: failure, "could not open the folder '\(path)'") }
            creationPath = resolved.path
            nearestExisting = resolved.existing
            if let pending = resolved.pendingPath {
                // A missing folder still has an identity (below its nearest existing folder), so
                // that the same-file rules run before anything reports the folder missing.
                guard let found = FileIdentity.of(existing: resolved.existing) else { throw AtomicFile.ioError(errno: errno, "could not open the folder '\(path)'") }
                identity = found
                pendingPath = pending
                return
            }
            descriptor = open(resolved.existing, __O_PATH | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw AtomicFile.ioError(errno: errno, "could not open the folder '\(path)'") }
        } else {
            creationPath = path
            nearestExisting = path
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw AtomicFile.ioError(errno: errno, "could not open the folder '\(path)'") }
        identity = FileIdentity(info)
        pendingPath = nil
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// The opened folder, made first (with its missing parents) when it did not exist.
    package func opened() throws -> Int32 {
        if descriptor < 0 {
            guard mayCreate else { throw VaultError.folderMissing(path) }
            try AtomicFile.createFolder(creationPath, made: &made, secret: secret)
            descriptor = open(creationPath, __O_PATH | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw AtomicFile.ioError(errno: errno, "could not open the folder '\(path)'") }
        }
        return descriptor
    }

    /// Refuses a folder that cannot be written, or, still to be made, whose nearest existing
    /// folder cannot be: checked before a batch starts, so it fails before any work.
    public func requireWritable(what: String = "the folder") throws {
        guard let failure = writeFailure else { return }
        // Named as it was given; a folder still to be made is made in the nearest existing one.
        let place = descriptor >= 0 || pendingPath == nil ? "" : " in \(FileNames.quoted(nearestExisting))"
        throw AtomicFile.ioError(errno: failure, "cannot write in \(what) \(FileNames.quoted(path))\(place)")
    }

    /// Why the folder (or, still to be made, its nearest existing folder) cannot be written: the
    /// `errno` of access(2), or nil when it can be.
    var writeFailure: Int32? { access(nearestExisting, W_OK | X_OK) == 0 ? nil : errno }

    /// Removes the folders this object made while they are still empty (rmdir never removes
    /// anything else): a refused run leaves nothing it made.
    public func removeIfMadeAndEmpty() {
        for folder in made.reversed() where rmdir(folder) != 0 { break }
        made = []
    }

    /// Whether the folder holds nothing (or is still to be made), read through the folder the
    /// path resolved to, so "missing/../fleet" is the existing "fleet".
    public func isEmptyOrMissing() throws -> Bool {
        guard let folder = existing else { return true }
        var empty = true
        try forEachName(in: folder) { _ in
            empty = false
            return false
        }
        return empty
    }

    /// Removes what a killed run left here: the files whose names `madeByTheRun` knows from the
    /// run's own record, and only regular files with one link owned by this user. Never a
    /// folder or a link, and nothing merely shaped like a temporary name: what the tool did not
    /// make is not its own.
    public func removeLeftoverTemporaryFiles(madeByTheRun: (String) -> Bool) throws {
        let folder = try opened()
        try forEachName(in: folder) { name in
            var info = stat()
            if madeByTheRun(name), fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG,
               info.st_nlink == 1, info.st_uid == getuid() {
                unlinkat(folder, name, 0)
            }
            return true
        }
    }

    /// Hands `body` each name in the opened folder but "." and "..", until it returns false.
    private func forEachName(in folder: Int32, _ body: (String) -> Bool) throws {
        let listing = openat(folder, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard listing >= 0, let stream = fdopendir(listing) else {
            let failure = errno
            if listing >= 0 { close(listing) }
            throw AtomicFile.ioError(errno: failure, "could not list the folder '\(path)'")
        }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != ".", name != "..", !body(name) { return }
        }
    }

    /// The folder if it exists now; nil while it is still to be made.
    var existing: Int32? { descriptor >= 0 ? descriptor : nil }
}

/// Where an output goes, resolved once before anything is written: its opened folder and its
/// final name.
///
/// A symbolic link given as the output is resolved here, by the tool, to the regular file it
/// names; the write then replaces that file by name inside its folder, never following a link
/// that appears later. An existing output that is not a regular file (a FIFO, a device, a
/// folder, a link to one of those, such as `/dev/stdout` on a pipe or `/dev/tty`) is refused:
/// replacing it would break it, and writing into it would bypass the rules for terminals.
public final class OutputLocation: @unchecked Sendable {
    /// The path as the user wrote it, for messages.
    public let path: String
    let folder: OutputFolder
    /// The final name inside the folder.
    let name: String
    public let identity: FileIdentity
    /// Whether a file is there now.
    public let exists: Bool
    /// Whether the file there holds a key (``KeyHoldingFile``): it is never replaced.
    public let holdsKey: Bool
    /// What of the suite's own stores the file there is, by its first bytes (nil for anything
    /// else): only an output of the same kind replaces it (``DeclaredOutput``).
    public private(set) var stored: StoredData?

    /// A file whose loss no other copy makes good: a vault or a household log (the envelope's
    /// magic), or a database SQLite keeps (a registry, a batch journal) or one of its side files.
    /// A hostile trial's `--ops keep.vault` replaced a family's vault with operations, exit 0.
    public enum StoredData: Sendable {
        case vault, householdLog, database

        public var description: String {
            switch self {
            case .vault: "a vault"
            case .householdLog: "a household log"
            case .database: "a SQLite database"
            }
        }
    }

    fileprivate static func storedData(_ name: String, in folder: Int32) -> StoredData? {
        let descriptor = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: 96)
        let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let start = head.prefix(count)
        if start.starts(with: VaultEnvelope.magic) { return .vault }
        if isLogEvent(start) { return .householdLog }
        return head.withUnsafeBytes { SQLiteHeaders.isSQLiteFile(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) } ? .database : nil
    }

    /// A household log's first line as the suite writes its events: `{"id":"<64 hex>","pubkey":"`.
    private static func isLogEvent(_ start: ArraySlice<UInt8>) -> Bool {
        let id = Array(#"{"id":""#.utf8), pubkey = Array(#"","pubkey":""#.utf8)
        guard start.count >= id.count + 64 + pubkey.count, start.starts(with: id) else { return false }
        let digits = start.dropFirst(id.count).prefix(64)
        return digits.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } && start.dropFirst(id.count + 64).starts(with: pubkey)
    }
    /// The permissions and owners of the file there now, which a file replacing it keeps
    /// (``StagedOutput``).
    public private(set) var existingPermissions: FilePermissions?
    /// The output's folder does not exist and may not be made.
    public var folderIsMissing: Bool { folder.isMissing }

    /// Why the output could not be written, as the `errno` the write would meet, or nil: its
    /// folder (or, still to be made, the nearest existing one) cannot be written (EACCES,
    /// EROFS); or the file there belongs to another user and the folder is sticky, so it may
    /// not be replaced by this user (EPERM, as rename(2) would say). Root is bound by neither.
    public var writeFailure: Int32? {
        if let failure = folder.writeFailure { return failure }
        guard exists, let descriptor = folder.existing else { return nil }
        let user = geteuid()
        var folderInfo = stat(), fileInfo = stat()
        guard user != 0, fstat(descriptor, &folderInfo) == 0, folderInfo.st_mode & S_ISVTX != 0,
              fstatat(descriptor, name, &fileInfo, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return fileInfo.st_uid == user || folderInfo.st_uid == user ? nil : EPERM
    }

    /// Makes the output's folder (and its missing parents) now, for a file another library opens
    /// by its path (a SQLite journal); ``removeMadeFolders()`` takes them away again.
    package func makeFolder() throws { _ = try folder.opened() }

    /// Removes the folders ``makeFolder()`` made while they are still empty.
    package func removeMadeFolders() { folder.removeIfMadeAndEmpty() }

    /// Resolves `path`. `createFolders` allows a folder that does not exist yet; without
    /// `followLink`, a symbolic link at `path` is refused (a name the tool chose itself).
    /// `secret`: folders made for it are 0700. `what` names the output in a refusal ("output",
    /// "--ops", "backup").
    public convenience init(_ path: String, createFolders: Bool = false, followLink: Bool = true, secret: Bool = false, what: String = "output") throws {
        guard !VaultLocation.isSpelledAsURL(path) else { throw VaultError.urlAsLocalPath(path, what: what) }
        var target = path
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
            guard followLink else { throw VaultError.refusedOutput(path, "is a symbolic link the tool would have to follow or replace", what: what) }
            // stat follows the link even where realpath cannot name the end (/dev/stdout on a pipe).
            guard stat(path, &info) == 0 else { throw VaultError.refusedOutput(path, "is a symbolic link to nothing", what: what) }
            guard (info.st_mode & S_IFMT) == S_IFREG, let resolved = Self.realPath(path) else {
                throw VaultError.refusedOutput(path, "is a symbolic link to \(Self.kindName(info.st_mode)), not to a regular file", what: what)
            }
            target = resolved
        }
        let (folderPath, name) = Self.split(target)
        try self.init(path: path, name: name, in: OutputFolder(folderPath, create: createFolders, secret: secret), what: what)
    }

    /// A file named `name` in an opened folder. A symbolic link already there is refused, not
    /// followed and not replaced: the tool did not resolve it, so it may have been planted in a
    /// shared output folder to redirect the write (issue 16).
    public init(path: String, name: String, in folder: OutputFolder, what: String = "output") throws {
        guard !name.isEmpty, name != ".", name != "..", !name.utf8.contains(UInt8(ascii: "/")) else {
            throw VaultError.refusedOutput(path, "names a folder, not a file", what: what)
        }
        self.path = path
        self.folder = folder
        self.name = name
        guard let descriptor = folder.existing else {
            identity = FileIdentity(device: folder.identity.device, inode: folder.identity.inode, pendingName: folder.pendingPath! + "/" + name)
            exists = false
            holdsKey = false
            return
        }
        var info = stat()
        exists = fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0
        if exists {
            let kind = info.st_mode & S_IFMT
            guard kind != S_IFLNK else {
                throw VaultError.refusedOutput(path, "is a symbolic link the tool would have to follow or replace", what: what)
            }
            guard kind == S_IFREG else {
                throw VaultError.refusedOutput(path, "is \(Self.kindName(info.st_mode)), not a regular file", what: what)
            }
            identity = FileIdentity(info)
            holdsKey = KeyHoldingFile.holdsKey(name, in: descriptor, size: Int(info.st_size))
            existingPermissions = FilePermissions(info)
            stored = Self.storedData(name, in: descriptor)
        } else {
            identity = FileIdentity(device: folder.identity.device, inode: folder.identity.inode, pendingName: name)
            holdsKey = false
        }
    }

    /// The bytes of the file there now, if any, read through the opened folder.
    public func currentContents(limit: Int, whole: Bool = true) throws -> [UInt8]? {
        guard let folder = folder.existing else { return nil }
        let descriptor = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw AtomicFile.ioError(errno: errno, "could not read '\(path)'")
        }
        defer { close(descriptor) }
        guard whole else {
            // Its first `limit` bytes (a vault's header), however long it is.
            var head = [UInt8](repeating: 0, count: limit)
            let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            guard count >= 0 else { throw AtomicFile.ioError(errno: errno, "could not read '\(path)'") }
            return Array(head.prefix(count))
        }
        return try BoundedRead.all(from: descriptor, limit: limit, name: path, what: "file")
    }

    /// Splits a path at its last "/" byte, ignoring trailing slashes; the folder of a bare
    /// name is ".". Bytes, not Characters: a "/" followed by a combining mark is still a "/".
    public static func split(_ path: String) -> (folder: String, name: String) {
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return (".", String(decoding: bytes, as: UTF8.self)) }
        return (slash == 0 ? "/" : String(decoding: bytes[..<slash], as: UTF8.self), String(decoding: bytes[(slash + 1)...], as: UTF8.self))
    }

    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    private static func realPath(_ path: String) -> String? { ResolvedPath.realPath(path) }
}

/// One output's bytes, written and flushed to disk but not yet visible under its name. Staging
/// every output of a command first, then publishing them in a chosen order, means a failure
/// while writing leaves no output at all, and the order of publishing decides what a failure
/// between two publications can leave (issue 16: never an old secret made useless before what
/// replaces it is on disk). An unpublished stage vanishes with the object, or with the process.
public final class StagedOutput: @unchecked Sendable {
    public let location: OutputLocation
    private var descriptor: Int32
    /// Set when the file system has no unnamed files (O_TMPFILE), or once the file is linked
    /// for a replacing rename: the temporary name used.
    private var temporaryName: String?
    /// The name to give the file before it has its own, when a caller records it (a batch, so
    /// that a rerun after a kill removes exactly what it made); otherwise a random one.
    private let recordedTemporaryName: String?
    /// The staged file's inode, and whether it was published as a new name (link(2), refusing
    /// an existing file): only such a file is this run's own to withdraw.
    private var inode: UInt64 = 0
    /// The file system it is on, for ``publishTogether(_:exclusive:)``'s one flush each.
    private var device: UInt64 = 0
    private var publishedNew = false

    /// Writes `bytes` to an unnamed file beside the location and, unless `flush` is false,
    /// flushes it to disk. An output staged without its flush must be published with
    /// ``publishTogether(_:)``, which flushes before naming. `temporaryName`, when given, is
    /// the only name the file may have before its own.
    /// `mode` is the file's for a new file; one that replaces a file keeps that file's
    /// permissions and owners (``FilePermissions/kept(forSecret:ceiling:by:)``), as does a copy
    /// of another file, `keeping` its permissions (a backup). `holdsSecret` marks the file as
    /// the suite's own secret (``KeyHoldingFile``), so that no later output replaces it, however
    /// it is spelled, and keeps it no more open than `mode`.
    public convenience init(_ location: OutputLocation, bytes: UnsafeRawBufferPointer, mode requestedMode: mode_t, flush: Bool = true,
                            temporaryName: String? = nil, holdsSecret: Bool = false, keeping: FilePermissions? = nil) throws {
        try self.init(location, mode: requestedMode, flush: flush, temporaryName: temporaryName, marking: holdsSecret ? bytes : nil,
                      keeping: keeping) { try $0(bytes) }
    }

    /// Stages an output from the pieces `produce` hands its argument, as they come: an output
    /// as large as a registry (a batch's operations) is never held whole. Never a secret (a
    /// secret's file is marked with a digest of its bytes, ``KeyHoldingFile``).
    public convenience init(_ location: OutputLocation, mode: mode_t, keeping: FilePermissions? = nil,
                            producing produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        try self.init(location, mode: mode, flush: true, temporaryName: nil, marking: nil, keeping: keeping, produce)
    }

    private init(_ location: OutputLocation, mode requestedMode: mode_t, flush: Bool, temporaryName: String?, marking secret: UnsafeRawBufferPointer?,
                 keeping: FilePermissions?, _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        let kept = keeping ?? location.existingPermissions
        self.location = location
        recordedTemporaryName = temporaryName
        let folder = try location.folder.opened()
        // Unnamed until published, so a kill while a batch group is staged leaves nothing behind
        // (a file created under its temporary name saved a link per output, issue 29, but left
        // the whole group's temporaries to the next run). O_TMPFILE is __O_TMPFILE | O_DIRECTORY,
        // and O_PATH is __O_PATH: Glibc defines both only under _GNU_SOURCE, which Swift does
        // not import, so the underlying names are used.
        // Unnamed, it can be made with its final mode at once: no one can open it by a name.
        descriptor = openat(folder, ".", __O_TMPFILE | O_DIRECTORY | O_WRONLY | O_CLOEXEC, kept == nil ? requestedMode & 0o777 : 0o600)
        if descriptor < 0 {
            let failure = errno
            do {
                guard [EOPNOTSUPP, EISDIR, EINVAL].contains(failure) else {
                    throw AtomicFile.ioError(errno: failure, "could not create a temporary file beside '\(location.path)'")
                }
                (descriptor, self.temporaryName) = try Self.namedTemporary(in: folder, for: location, recorded: temporaryName)
            } catch {
                location.folder.removeIfMadeAndEmpty()
                throw error
            }
        }
        do {
            var info = stat()
            if fstat(descriptor, &info) == 0 { (inode, device) = (UInt64(info.st_ino), UInt64(info.st_dev)) }
            if temporaryName == nil { KeyHoldingFile.markTemporary(descriptor, true) }
            let descriptor = descriptor
            try produce { try AtomicFile.writeAll($0, to: descriptor, path: location.path) }
            // Owners first: a change of owner clears the set-id bits the mode then puts back.
            let mode = kept?.kept(forSecret: secret != nil, ceiling: requestedMode, by: descriptor) ?? requestedMode
            // A new file made with the mode it is to have (the umask and the folder's default
            // ACL spared it, seen by the fstat above) needs no fchmod: one call fewer an output
            // in a batch (issue 48).
            if kept != nil || info.st_mode & 0o7777 != mode {
                guard fchmod(descriptor, mode) == 0 else { throw AtomicFile.ioError(errno: errno, "could not set the mode of '\(location.path)'") }
            }
            if let secret { KeyHoldingFile.mark(descriptor, secret) }
            guard !flush || fsync(descriptor) == 0 else { throw AtomicFile.ioError(errno: errno, "could not flush '\(location.path)' to disk") }
        } catch {
            // Nothing of a stage that failed is left, the folders made for it included (a
            // trial: `split` onto a full disk left the empty folder it made for its sheets).
            abandon()
            throw error
        }
    }

    deinit { discard() }

    /// Drops a stage that will not be published, and the folders made for it while they are
    /// empty: a command that fails before publishing leaves nothing it made.
    public func abandon() {
        discard()
        location.folder.removeIfMadeAndEmpty()
    }

    /// Whether this stage was published as a new name, and so may be taken back (``withdraw()``).
    public var isWithdrawable: Bool { publishedNew }

    /// Takes back a file this stage published as a new name (never one it replaced: the old
    /// file is gone), when what had to follow it failed: the file there must still be the one
    /// it wrote. Then the folders made for it, while empty.
    public func withdraw() {
        guard publishedNew, let folder = location.folder.existing else { return }
        var info = stat()
        if fstatat(folder, location.name, &info, AT_SYMLINK_NOFOLLOW) == 0, UInt64(info.st_ino) == inode {
            unlinkat(folder, location.name, 0)
        }
        publishedNew = false
        location.folder.removeIfMadeAndEmpty()
    }

    /// Gives the staged file its name. `exclusive` refuses a file that exists by then (the name
    /// is made by link(2), which never replaces); otherwise rename(2) replaces atomically.
    public func publish(exclusive: Bool) throws {
        try publish(exclusive: exclusive, syncingFolder: true)
    }

    /// Publishes many staged outputs (replacing, or with `exclusive` each refusing a file that is
    /// there) as one group: one syncfs(2)
    /// makes every staged file durable before any is named, then each is renamed into place,
    /// then each folder is synced once. A kill at any moment leaves each output old or new and
    /// complete; a batch records its jobs done only after this returns.
    public static func publishTogether(_ outputs: [StagedOutput], exclusive: Bool = false) throws {
        // One syncfs per file system the outputs are on (a folder may be a mount point).
        for output in outputs { try output.location.refuseChangedSinceRead() }
        var flushed: Set<UInt64> = []
        for output in outputs where output.descriptor >= 0 {
            guard flushed.insert(output.device).inserted else { continue }
            guard AtomicFile.syncFileSystem(output.descriptor) else { throw AtomicFile.ioError(errno: errno, "could not flush '\(output.location.path)' to disk") }
        }
        var folders: [ObjectIdentifier: (descriptor: Int32, path: String)] = [:]
        for output in outputs {
            try output.publish(exclusive: exclusive, syncingFolder: false)
            folders[ObjectIdentifier(output.location.folder)] = (try output.location.folder.opened(), output.location.folder.path)
        }
        // The names must be durable before a batch records its jobs done: a failed sync fails the group.
        for folder in folders.values {
            let failure = AtomicFile.syncFolder(folder.descriptor)
            guard failure == 0 else { throw AtomicFile.ioError(errno: failure, "could not flush the folder '\(folder.path)' to disk") }
        }
    }

    private func publish(exclusive: Bool, syncingFolder: Bool) throws {
        let folder = try location.folder.opened()
        let path = location.path
        if !exclusive { try location.refuseChangedSinceRead() }
        var appearedMeanwhile = false
        if temporaryName == nil {
            let unnamed = "/proc/self/fd/\(descriptor)"
            // link(2) never replaces: it refuses an existing file where `exclusive` asks it to,
            // and where nothing was there when the output was resolved it names the file as
            // atomically as a rename would, sparing a temporary name and a rename a file (a
            // batch of new outputs, issue 48). A file there by now is replaced, as below.
            if exclusive || !location.exists {
                if linkat(AT_FDCWD, unnamed, folder, location.name, AT_SYMLINK_FOLLOW) == 0 {
                    publishedNew = true
                    unmarkStaged()
                    discard()
                    if syncingFolder { AtomicFile.syncFolder(folder) }
                    return
                }
                guard errno == EEXIST else { throw AtomicFile.ioError(errno: errno, "could not create '\(path)'") }
                if exclusive { throw VaultError.alreadyExists(path) }
                // Made there since the output was resolved: replaced as any output is, never a
                // key (a hostile review: a key saved there meanwhile was replaced), and not this
                // run's to take back.
                var info = stat()
                if fstatat(folder, location.name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG,
                   KeyHoldingFile.holdsKey(location.name, in: folder, size: Int(info.st_size)) {
                    throw VaultError.wouldReplaceKey(path)
                }
                // Nor a vault, a household log or a database, which only an output that was
                // compared with it may replace (a hostile trial: a household log saved there
                // meanwhile was replaced by a migration's new log without a word).
                if OutputLocation.storedData(location.name, in: folder) != nil { throw VaultError.alreadyExists(path) }
                appearedMeanwhile = true
            }
            // rename(2) is the only atomic replace, and it needs a name: a short one, so that an
            // output name of up to 255 bytes still fits. Locked before it has that name, and
            // held until the process ends: a temporary by this output's name that is not locked
            // was left by a killed run (``AtomicFile/removeAbandonedTemporary(_:in:)``), which
            // its mark tells from a file someone saved there. (Unnamed, no other run can see it.)
            _ = flock(descriptor, LOCK_EX | LOCK_NB)
            temporaryName = try Self.link(unnamed, into: folder, for: location, recorded: recordedTemporaryName)
        }
        guard let temporaryName else { return }
        if exclusive {
            guard linkat(folder, temporaryName, folder, location.name, 0) == 0 else {
                if errno == EEXIST { throw VaultError.alreadyExists(path) }
                throw AtomicFile.ioError(errno: errno, "could not create '\(path)'")
            }
            publishedNew = true
        } else {
            // Whichever door the output came through, and whatever its flags (issue 37).
            guard !location.holdsKey else { throw VaultError.wouldReplaceKey(path) }
            // Checked again as late as can be; a refusal leaves no temporary behind.
            do {
                try location.refuseChangedSinceRead()
            } catch {
                abandon()
                throw error
            }
            guard renameat(folder, temporaryName, folder, location.name) == 0 else { throw AtomicFile.ioError(errno: errno, "could not replace '\(path)'") }
            self.temporaryName = nil
            // Nothing was there when the output was resolved, nor when it was named: the file is
            // new, this run's to take back.
            publishedNew = !location.exists && !appearedMeanwhile
        }
        unmarkStaged()
        discard()
        if syncingFolder { AtomicFile.syncFolder(folder) }
    }

    /// Named as the output: no longer a temporary a later run would take back (the mark stays
    /// while it has a temporary name, so that a kill there leaves one that is taken back).
    private func unmarkStaged() {
        if recordedTemporaryName == nil, descriptor >= 0 { KeyHoldingFile.markTemporary(descriptor, false) }
    }

    private func discard() {
        if let temporaryName, let folder = location.folder.existing { unlinkat(folder, temporaryName, 0) }
        temporaryName = nil
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    /// A recorded name is tried once: another file by that name is not this run's to replace.
    /// Otherwise the output's own temporary name first (``AtomicFile/temporaryName(for:)``),
    /// taking it back from a run killed while it held it, then random ones.
    private static func link(_ unnamed: String, into folder: Int32, for location: OutputLocation, recorded: String?) throws -> String {
        try Self.temporary(in: folder, for: location, recorded: recorded) { name in
            linkat(AT_FDCWD, unnamed, folder, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : -1
        }
    }

    private static func namedTemporary(in folder: Int32, for location: OutputLocation, recorded: String?) throws -> (Int32, String) {
        var descriptor: Int32 = -1
        let name = try Self.temporary(in: folder, for: location, recorded: recorded) { name in
            descriptor = openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            // Locked at once, waiting out a run that is looking at it (which holds it only to
            // look): named, it must not look abandoned to another run for a moment.
            if descriptor >= 0 { while flock(descriptor, LOCK_EX) != 0, errno == EINTR {} }
            return descriptor
        }
        return (descriptor, name)
    }

    /// Gives `create` temporary names until one is free: `create` returns a negative number and
    /// leaves errno set when the name could not be made. A recorded name is tried once; else
    /// the output's own name, once more after a leftover there is taken back, then random ones.
    private static func temporary(in folder: Int32, for location: OutputLocation, recorded: String?, _ create: (String) -> Int32) throws -> String {
        func failed(_ name: String) -> VaultError {
            AtomicFile.ioError(errno: errno, "could not create the temporary file '\(name)' beside '\(location.path)'")
        }
        if let recorded {
            guard create(recorded) >= 0 else { throw failed(recorded) }
            return recorded
        }
        let own = AtomicFile.temporaryName(for: location.name)
        if create(own) >= 0 { return own }
        guard errno == EEXIST else { throw failed(own) }
        if AtomicFile.removeAbandonedTemporary(own, in: folder), create(own) >= 0 { return own }
        while true {
            let name = AtomicFile.temporaryName()
            if create(name) >= 0 { return name }
            guard errno == EEXIST else { throw failed(name) }
        }
    }
}

extension VaultError {
    /// A folder an output goes into does not exist, and the command may not create it.
    static func folderMissing(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "the folder '\(path)' does not exist", file: file, line: line)
    }
}
