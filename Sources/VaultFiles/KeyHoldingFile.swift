import Glibc
import VaultCore

/// Whether a file an output would replace holds a key (docs/conventions.md, "Nothing lost"): a
/// key file is never replaced, whatever the flags, since it may be the family's only copy of its
/// key and the new contents another key altogether (`-o parent.nsec` typed for `-o sheet.pdf`).
/// Only small files are read, as a key file is; what counts as a key is VaultCore's rule
/// (``KeyText``).
enum KeyHoldingFile {
    /// Reads `name` in `folder` when it is a regular file of at most a key file's size, and says
    /// whether it holds a key. The bytes are read into protected memory and compared there.
    static func holdsKey(_ name: String, in folder: Int32, size: Int) -> Bool {
        guard size > 0, size <= InputLimits.keyFile else { return false }
        let descriptor = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var length = 0
        guard let contents = try? SecretBytes(count: size, initialize: { buffer in
            length = read(descriptor, buffer.baseAddress!, buffer.count)
        }), length > 0 else { return false }
        return contents.withUnsafeBytes { KeyText.holdsKey(UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
    }
}

extension VaultError {
    /// An output would replace a file that holds a key.
    package static func wouldReplaceKey(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outputExists, "'\(path)' holds a key; a file holding a key is never replaced, whatever the flags",
                   hint: "write to another file; to retire that key, move it away knowingly first",
                   file: file, line: line)
    }
}
