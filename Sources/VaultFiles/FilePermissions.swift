import Glibc

/// A file's permissions and owners, which a file written in its place keeps (issue 44: an
/// in-place rewrite turned a 0660 vault shared with a group into 0640, dropped its set-group-id
/// bit and, under another umask, made it 0600 or 0644): as `sed -i` and editors replace a file,
/// the new one is the old one's in everything but its contents.
public struct FilePermissions: Sendable, Equatable {
    /// The permission bits, the set-id and sticky bits included.
    public let mode: mode_t
    public let owner: uid_t
    public let group: gid_t

    public init(_ info: stat) {
        mode = info.st_mode & 0o7777
        owner = info.st_uid
        group = info.st_gid
    }

    /// The permissions of the file at `path` (followed), or nil when there is none.
    public static func of(_ path: String) -> FilePermissions? {
        var info = stat()
        return stat(path, &info) == 0 ? FilePermissions(info) : nil
    }

    /// Gives the open file these owners where the process may, and returns the mode it is to
    /// have: these permissions, and for a secret no more open than `ceiling` (0600: a key
    /// never inherits a readable file's mode). Where the group cannot be kept (a user not in
    /// it), its bits would speak for the process's group instead, so they are dropped with the
    /// set-group-id bit; where the owner cannot be kept, the set-user-id bit.
    func kept(forSecret: Bool, ceiling: mode_t, by descriptor: Int32) -> mode_t {
        var mode = forSecret ? self.mode & ceiling : self.mode
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return mode & 0o700 }
        if info.st_uid != owner || info.st_gid != group {
            if fchown(descriptor, owner, group) != 0 {
                if info.st_gid != group, fchown(descriptor, uid_t.max, group) != 0 { mode &= ~(0o070 | S_ISGID) }
                mode &= ~S_ISUID
            }
        }
        return mode
    }
}
