internal import CFileSystem
import Glibc
import VaultCore

/// Whether a file an output would replace holds a key (docs/conventions.md, "Nothing lost"): a
/// key file is never replaced, whatever the flags, since it may be the family's only copy of its
/// key and the new contents another key altogether (`-o parent.nsec` typed for `-o sheet.pdf`).
/// Only small files are read, as a key file is; what counts as a key is VaultCore's rule
/// (``KeyText``).
package enum KeyHoldingFile {
    /// The extended attribute the suite sets on every secret file it writes (a key, words, a
    /// revealed document, shares): such a file holds a key whatever its spelling (issue 44), as
    /// long as it still holds what the suite wrote (the attribute is the SHA-256 of its start
    /// and its size: a file rewritten since by something else is judged by its contents). Where
    /// the file system keeps no user attributes, the contents alone decide.
    static let secretAttribute = "user.household-vault-tools.secret"
    /// How much of a file is read for a key: a key file, or the start of a larger one (a key
    /// with a comment, JSON or an `export` line around it).
    static let readLimit = 64 << 10

    /// Reads the start of `name` in `folder` when it is a regular file, and says whether it
    /// holds a key: the suite's own mark, still true of it, or a key in any spelling the suite
    /// reads (``KeyText``), or a picture or page of a kind `scan` reads a key from, whose key
    /// would be in a QR code no text rule reads. The bytes are read into protected memory and
    /// compared there. A file that cannot be read to tell (another user's 0600 key in a shared
    /// folder, a mode 000 sheet: a hostile trial replaced both) is held as one.
    static func holdsKey(_ name: String, in folder: Int32, size: Int) -> Bool {
        let descriptor = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return errno != ENOENT }
        defer { close(descriptor) }
        var mark = [UInt8](repeating: 0, count: 64)
        let markLength = mark.withUnsafeMutableBytes { hvt_get_attribute(descriptor, secretAttribute, $0.baseAddress, UInt($0.count)) }
        guard size > 0 else { return markLength >= 0 }
        var length = 0, unreadable = false
        guard let contents = try? SecretBytes(count: min(size, readLimit), initialize: { buffer in
            while length < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + length, buffer.count - length)
                if count < 0, errno == EINTR { continue }
                unreadable = count < 0
                guard count > 0 else { break }
                length += count
            }
        }), !unreadable else { return true }  // no protected memory to look in, or a read failed: assume the worst
        return contents.withUnsafeBytes { all in
            let start = UnsafeRawBufferPointer(rebasing: all.prefix(length))
            if markLength > 0, Array(mark.prefix(markLength)) == fingerprint(start, size: size) { return true }
            // A database SQLite keeps (a registry, a journal) and its side files are SQLite's
            // pages, whatever text the rows hold (a device named like a key locked the registry
            // against its own revocations): SideFiles claims those before SQLite opens them.
            if SQLiteHeaders.isSQLiteFile(start) { return false }
            // A copy of a sheet, shares' sheet or code loses the mark and, copied, downloaded or
            // mailed, its mode: whether its QR code holds a key would take the imaging stack
            // to tell, so every picture or page the suite can read a key from is held as one
            // (a hostile trial replaced 0644 copies of each with a key or a vault).
            if isPicture(start) { return true }
            if length == size, isBareKey(start) { return true }
            return KeyText.holdsKey(start)
        }
    }

    /// A whole small file that is one 32-byte key and nothing else, as other tools write one
    /// (a hostile trial: each was replaced): its raw bytes (`head -c 32 /dev/urandom`); 64 hex
    /// digits broken over lines or split by colons (`xxd -p` breaks after 60); base64
    /// wrapped over lines; a JSON array of its 32 byte values.
    /// Random bytes are told from a small struct, a text or a list of scores by their spread:
    /// 32 random bytes hold about 30 values, fewer than 16 once in a billion.
    static func isBareKey(_ whole: UnsafeRawBufferPointer) -> Bool {
        guard whole.count <= 4096 else { return false }
        // How many values the bytes take, counted in a table zeroed after (no Set of a key's bytes).
        func spread(_ bytes: some Collection<UInt8>) -> Bool {
            var seen = [Bool](repeating: false, count: 256)
            defer { for index in seen.indices { seen[index] = false } }
            for byte in bytes { seen[Int(byte)] = true }
            return seen.filter { $0 }.count >= 16
        }
        // 32 raw bytes (a final line end aside) that are no UTF-8 text ("Grüße aus München…").
        let raw = whole.count == 33 && whole.last == 0x0a ? UnsafeRawBufferPointer(rebasing: whole.prefix(32)) : whole
        if raw.count == 32 { return !isUTF8(raw) && spread(raw) }
        let isText = whole.allSatisfy { (0x20...0x7e).contains($0) || [0x09, 0x0a, 0x0d].contains($0) }
        guard isText else { return false }
        // Copies of what may be a key, zeroed when read.
        var kept = whole.filter { ![0x20, 0x09, 0x0a, 0x0d].contains($0) }
        // Hex, an optional 0x, colons between digits (not dashes: two UUIDs are 64 digits too).
        var digits = kept.dropFirst(kept.starts(with: Array("0x".utf8)) ? 2 : 0).filter { $0 != UInt8(ascii: ":") }
        defer { kept.zeroize(); digits.zeroize() }
        if digits.count == 64, digits.allSatisfy({ Hex.value($0) != nil }) { return true }
        // `xxd`'s dump: `OFFSET: HEX GROUPS  TEXT` lines, its hex groups 64 digits in all;
        // `xxd -i`: `0xHH,` 32 times; groups of one size joined by dashes (not a UUID's).
        if let dump = xxdDumpDigits(whole) {
            var dumped = dump
            defer { dumped.zeroize() }
            if dumped.count == 64 { return true }
        }
        let cBytes = kept.split(separator: UInt8(ascii: ",")).filter { !$0.isEmpty }
        if cBytes.count == 32, cBytes.allSatisfy({ $0.count == 4 && $0.starts(with: Array("0x".utf8)) && $0.dropFirst(2).allSatisfy { Hex.value($0) != nil } }) { return true }
        let groups = kept.split(separator: UInt8(ascii: "-"))
        if groups.count > 2, Set(groups.map(\.count)).count == 1, groups.reduce(0, { $0 + $1.count }) == 64, groups.allSatisfy({ $0.allSatisfy { Hex.value($0) != nil } }) { return true }
        // Base32 of 32 bytes (`base32`): 52 characters, and `====` or not.
        let base32 = kept.count == 56 && kept.suffix(4).allSatisfy({ $0 == UInt8(ascii: "=") }) ? kept.prefix(52) : kept[...]
        if base32.count == 52, base32.allSatisfy({ (0x41...0x5a).contains($0) || (0x32...0x37).contains($0) }) { return true }
        // Base64 of 32 bytes: 43 characters and one `=`, lines joined.
        let base64Alphabet = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_".utf8))
        if kept.count == 44, kept.last == UInt8(ascii: "="), kept.dropLast().allSatisfy(base64Alphabet.contains) { return true }
        if kept.count == 43, kept.allSatisfy(base64Alphabet.contains), whole.contains(0x0a) { return true }
        // [1, 2, …]: 32 numbers 0 to 255.
        if kept.first == UInt8(ascii: "["), kept.last == UInt8(ascii: "]") {
            let numbers = kept.dropFirst().dropLast().split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            var values = numbers.compactMap { number -> UInt8? in
                guard (1...3).contains(number.count), number.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
                return UInt8(exactly: number.reduce(0) { $0 * 10 + Int($1 - 0x30) })
            }
            defer { values.zeroize() }
            return numbers.count == 32 && values.count == 32 && spread(values)
        }
        return false
    }

    /// The hex digits of an `xxd` dump (each line `OFFSET: GROUPS  TEXT`, the offset 8 hex
    /// digits and a colon, the groups up to the two spaces before the text), or nil when a line
    /// is not one.
    private static func xxdDumpDigits(_ whole: UnsafeRawBufferPointer) -> [UInt8]? {
        var digits: [UInt8] = []
        for line in whole.split(separator: 0x0a) where !line.isEmpty {
            guard line.count > 10, line.prefix(8).allSatisfy({ Hex.value($0) != nil }), line.dropFirst(8).starts(with: [0x3a, 0x20]) else {
                digits.zeroize()
                return nil
            }
            let rest = line.dropFirst(10)
            let groupsEnd = rest.firstRange(of: [0x20, 0x20])?.lowerBound ?? rest.endIndex
            digits += rest[..<groupsEnd].filter { $0 != 0x20 && Hex.value($0) != nil }
        }
        return digits.isEmpty ? nil : digits
    }

    /// Whether `bytes` are UTF-8, decoded in place (no String of what may be a key).
    private static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var iterator = bytes.makeIterator(), decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// A PNG, a JPEG or a PDF: the pictures and pages the suite reads a key from (`scan`, by
    /// the same signatures: ``GrayImage`` and ``SheetPDF``). A PDF's `%PDF-` anywhere in its
    /// first KiB, as PDF readers take it: a page with bytes before it still prints its key (a
    /// hostile trial).
    private static func isPicture(_ start: UnsafeRawBufferPointer) -> Bool {
        pictureSignatures.contains { start.starts(with: $0) } || start.prefix(1024).firstRange(of: pdfSignature) != nil
    }

    private static let pictureSignatures: [[UInt8]] = [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0xff, 0xd8]]
    private static let pdfSignature = Array("%PDF-".utf8)

    /// The extended attribute a staged output carries until it has its name: a file at an
    /// output's own temporary name that carries it was left by a killed run of the suite, and
    /// is the next run's to take back (``AtomicFile/removeAbandonedTemporary(_:in:)``), whatever
    /// it holds; one without it (a key saved there by hand) is not.
    static let temporaryAttribute = "user.household-vault-tools.temporary"

    /// Marks an open file as a staged output, or, `staged` false, no longer one.
    static func markTemporary(_ descriptor: Int32, _ staged: Bool) {
        if staged {
            _ = hvt_set_attribute(descriptor, temporaryAttribute, [UInt8(ascii: "1")], 1)
        } else {
            _ = hvt_remove_attribute(descriptor, temporaryAttribute)
        }
    }

    /// Whether an open file carries the staged output's mark: true, false, or nil where the
    /// file system keeps no user attributes.
    static func isMarkedTemporary(_ descriptor: Int32) -> Bool? {
        var value: UInt8 = 0
        if hvt_get_attribute(descriptor, temporaryAttribute, &value, 1) >= 0 { return true }
        return errno == ENOTSUP ? nil : false
    }

    /// Marks an open file as the suite's secret holding `bytes`; a file system without user
    /// attributes keeps no mark, and the contents decide alone.
    static func mark(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) {
        let value = fingerprint(UnsafeRawBufferPointer(rebasing: bytes.prefix(readLimit)), size: bytes.count)
        _ = value.withUnsafeBytes { hvt_set_attribute(descriptor, secretAttribute, $0.baseAddress, UInt($0.count)) }
    }

    /// What the mark says of a file: the SHA-256 of its first ``readLimit`` bytes, then its size.
    private static func fingerprint(_ start: UnsafeRawBufferPointer, size: Int) -> [UInt8] {
        SHA256.hash(start) + Array("\(size)".utf8)
    }
}

extension VaultError {
    /// An output would replace a file that holds a key.
    package static func wouldReplaceKey(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outputExists, "'\(path)' holds a key, a secret the suite wrote or a picture or page that may hold one in a QR code (a sheet, shares, a code), or cannot be read to tell; such a file is never replaced, whatever the flags",
                   hint: "write to another file; to retire that key, move it away knowingly first",
                   file: file, line: line)
    }
}
