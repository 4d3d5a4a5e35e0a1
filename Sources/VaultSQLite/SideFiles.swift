import Glibc
import VaultCore

/// SQLite's side files of a database, claimed before it is opened, for reading too (issue 44):
/// SQLite takes a file at `NAME-journal` for a hot journal and deletes it, and overwrites one at
/// `NAME-wal` or `NAME-shm`, whatever it holds. A read-only `registry log` deleted a key file
/// copied there. So a side file that is there must be SQLite's own, by its header, or empty;
/// anything else (a key file, a report, a FIFO) is refused before SQLite sees it. The names
/// are the database's resolved path's: SQLite follows a symbolic link to the database and keeps
/// its side files beside the target.
package enum SideFiles {
    /// The side files of the database at `path`: its resolved path (when it exists) with each
    /// suffix.
    static func paths(of path: String) -> [(suffix: String, path: String)] {
        let target = resolved(path)
        return ["-journal", "-wal", "-shm"].map { ($0, target + $0) }
    }

    /// Refuses a side file of `path` that is not SQLite's.
    package static func claim(_ path: String) throws {
        for (suffix, side) in paths(of: path) {
            var info = stat()
            guard lstat(side, &info) == 0 else { continue }
            guard info.st_mode & S_IFMT == S_IFREG else { throw VaultError.foreignSideFile(side, of: path, "is not a regular file") }
            guard info.st_size > 0 else { continue }
            guard let start = readBytes(side, at: 0, count: SQLiteHeaders.sideFileStart),
                  SQLiteHeaders.isSideFile(start, size: Int(info.st_size), suffix: suffix) else {
                throw VaultError.foreignSideFile(side, of: path, "is not a file SQLite made")
            }
            // A journal ends with the name of a super-journal only in a transaction across
            // attached databases, which the suite never makes. Rolling such a journal back,
            // SQLite deletes the file it names: a crafted one named a key file beside it, and a
            // read-only `registry devices` deleted the key (a hostile trial).
            if suffix == "-journal", info.st_size >= 16, let end = readBytes(side, at: off_t(info.st_size) - 16, count: 16),
               SQLiteHeaders.namesSuperJournal(end: end) {
                throw VaultError.foreignSideFile(side, of: path, "names a super-journal, a file SQLite would delete after rolling it back (the suite never makes one)")
            }
        }
    }

    /// Up to `count` bytes of the file at `path` from `offset`; nil when none can be read.
    private static func readBytes(_ path: String, at offset: off_t, count: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
        guard read > 0 else { return nil }
        return Array(bytes.prefix(read))
    }

    /// A database named through a symbolic link has its side files beside the link's target;
    /// any other keeps the name given (a link among the folders leads to the same files).
    private static func resolved(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }
}

extension VaultError.Code {
    /// A file where SQLite keeps a database's journal, log or index is not SQLite's.
    public static let foreignSideFile = VaultError.Code(name: "foreignSideFile", category: .refused)
}

extension VaultError {
    static func foreignSideFile(_ side: String, of database: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.foreignSideFile, "'\(side)' \(problem), where SQLite keeps the side file of '\(database)' and would delete or overwrite it; nothing was opened",
                   hint: "move that file away (it may be a key or another program's file), then run the command again", file: file, line: line)
    }
}
