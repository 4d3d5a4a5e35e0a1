import Glibc
import Synchronization
import VaultCore

/// The local files this run read whole, each as it was when read: an output that replaces one
/// of them replaces that file only while it is still as read, a compare-and-swap for files as an
/// object's write is one by its version (a trial: a vault saved over the one `--in-place` read,
/// while the change was being made, was replaced and lost, exit 0).
public enum FilesRead {
    /// What changes when a file is written or replaced: its size, when its data changed, when
    /// its inode did (a write, a truncation, a rename onto it, a chmod).
    struct Version: Equatable {
        let size: Int64
        let modified: timespec
        let changed: timespec

        init(_ info: stat) {
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }

        static func == (one: Version, other: Version) -> Bool {
            one.size == other.size && one.modified.tv_sec == other.modified.tv_sec && one.modified.tv_nsec == other.modified.tv_nsec
                && one.changed.tv_sec == other.changed.tv_sec && one.changed.tv_nsec == other.changed.tv_nsec
        }
    }

    private static let versions = Mutex<[FileIdentity: Version]>([:])

    /// Reads the regular file open at `descriptor` whole (`read`), and records it as it was
    /// before the read began: a file written to while it was read is changed since (a hostile
    /// trial: a byte changed between the read and a stat after it was taken for the file read).
    /// As first read: a run that reads a file again (a log, read for the change and again beside
    /// the vault staged) made its change from the first, so a file changed between the two is
    /// changed since.
    public static func reading<T>(_ descriptor: Int32, _ read: () throws -> T) rethrows -> T {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return try read() }
        let identity = FileIdentity(info)
        let result = try read()
        versions.withLock { if $0[identity] == nil { $0[identity] = Version(info) } }
        return result
    }

    /// The version of the file `identity` when this run read it, if it did.
    static func version(of identity: FileIdentity) -> Version? {
        versions.withLock { $0[identity] }
    }

    /// Forgets what was read of the file `identity` had: for a test that made a new file, whose
    /// inode another test of the same process may have read under another name and removed
    /// (the record is the process's, and an inode number is used again once freed).
    package static func forget(_ identity: FileIdentity) {
        _ = versions.withLock { $0.removeValue(forKey: identity) }
    }
}

extension OutputLocation {
    /// Refuses to replace the file that was here when the output was resolved, if this run read
    /// it, unless it is still that file as read: not removed, replaced or written since
    /// (``FilesRead``). Asked before anything of a run is published, and again just before the
    /// rename that replaces it.
    public func refuseChangedSinceRead() throws {
        guard exists, let read = FilesRead.version(of: identity), let descriptor = folder.existing else { return }
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
              FileIdentity(info) == identity,
              FilesRead.Version(info) == read else {
            throw VaultError.changedSinceRead(FileNames.quoted(path))
        }
    }
}

extension VaultError.Code {
    /// What was read (a file, an object) changed before it was replaced; nothing was written.
    public static let changedSinceRead = VaultError.Code(name: "changedSinceRead", category: .refused)
}

extension VaultError {
    /// `name` (quoted as messages quote it) changed since this run read it.
    public static func changedSinceRead(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.changedSinceRead, "\(name) changed since it was read; nothing was written", hint: "run it again: it reads the version there now",
                   file: file, line: line)
    }

    /// `name` changed since this run read it, and was not replaced; `written` (quoted), published
    /// before it, stay as written: a household log among them holds one event more than its
    /// vault, which the vault's next change gives up.
    public static func changedSinceRead(_ name: String, afterWriting written: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.changedSinceRead, "\(name) changed since it was read and was not replaced, but \(written.joined(separator: ", ")) had been written before it",
                   hint: "run it again: it reads the version there now, and a household log written ahead of its vault gives that event up at the vault's next change",
                   file: file, line: line)
    }
}
