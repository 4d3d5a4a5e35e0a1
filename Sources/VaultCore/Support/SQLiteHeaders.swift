/// How SQLite's files begin, the rule over bytes: a database, its rollback journal, its
/// write-ahead log and the log's index. One list for the two places that tell SQLite's files from
/// others: VaultSQLite's `SideFiles` (a side file that is not SQLite's is refused before SQLite
/// would delete it) and VaultFiles' `KeyHoldingFile` (a database is not a key file, whatever its
/// rows hold). Reading the bytes is theirs.
package enum SQLiteHeaders {
    static let database = Array("SQLite format 3\u{0}".utf8)
    static let journal: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
    static let logs: [[UInt8]] = [[0x37, 0x7f, 0x06, 0x82], [0x37, 0x7f, 0x06, 0x83]]
    /// The log index's version, 3007000, in either byte order.
    static let indexes: [[UInt8]] = {
        let little = (0..<4).map { UInt8(truncatingIfNeeded: UInt32(3_007_000) >> (8 * $0)) }
        return [little, little.reversed()]
    }()

    /// Whether `header` (a file's first bytes) begins a file SQLite made: a database, a journal
    /// or a log.
    package static func isSQLiteFile(_ header: UnsafeRawBufferPointer) -> Bool {
        ([database, journal] + logs).contains { header.starts(with: $0) }
    }

    /// Whether a rollback journal's last 16 bytes (`end`) record a super-journal's name, as
    /// SQLite writes one after the journal's pages: the name's length (4 bytes, big-endian,
    /// not zero), its checksum (4), and the journal's magic (8).
    package static func namesSuperJournal(end: [UInt8]) -> Bool {
        guard end.count == 16, Array(end[8...]) == journal else { return false }
        return end[0..<4].contains { $0 != 0 }
    }

    /// How many of a side file's first bytes ``isSideFile(_:size:suffix:)`` is given: the whole of a
    /// log index as SQLite first makes it (32 KiB), and of anything shorter.
    package static let sideFileStart = 32 << 10

    /// Whether `start` (a file's first bytes, up to ``sideFileStart``; `size` its length) is
    /// the side file SQLite keeps as `suffix` (`-journal`, `-wal`, `-shm`), by a header SQLite
    /// writes, whole, not by its first bytes alone (a hostile trial: eight zeros, or the magic,
    /// before a key or a note passed, and SQLite overwrote or deleted the file):
    /// - a journal: its magic, or the magic zeroed (SQLite writes it so until the journal is
    ///   synced), then a sector size and a page size SQLite uses, or a header all zeros (a
    ///   journal SQLite keeps, retired); either way zeros to the first sector's end, then pages,
    ///   each a sector's start with its page number;
    /// - a write-ahead log: its magic and its format's version, 3007000;
    /// - a log index: that version (in either byte order), in pages of 4 KiB;
    /// - a journal or an index made and not yet written: nothing but zeros.
    package static func isSideFile(_ start: [UInt8], size: Int, suffix: String) -> Bool {
        func number(at offset: Int) -> Int {
            offset + 4 <= start.count ? start[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } : 0
        }
        func isPageSize(_ value: Int) -> Bool { (512...65536).contains(value) && value & (value - 1) == 0 }
        let zeros = size <= sideFileStart && start.allSatisfy { $0 == 0 }
        switch suffix {
        case "-journal":
            if zeros { return true }
            // SQLite pads the header with zeros to the first sector's end (512 bytes at least):
            // never text there, whatever the pages after it hold (a device named like a key
            // must not lock the registry: no rule over the pages' text).
            guard start.count >= journalHeaderSize,
                  start[journalHeaderSize..<min(start.count, journalSectorMinimum)].allSatisfy({ $0 == 0 }) else { return false }
            // After the padding, a page's record begins at a sector's start with its page
            // number (from 1, four bytes, big-endian): never text (a note after 512 zeros was
            // taken for a retired journal, and SQLite deleted it: a re-trial).
            if start.count > journalSectorMinimum, let first = start[journalSectorMinimum...].firstIndex(where: { $0 != 0 }) {
                let record = first - first % journalSectorMinimum
                guard record + 4 <= start.count, (1..<(1 << 24)).contains(number(at: record)) else { return false }
            }
            let sized = isPageSize(number(at: 20)) && isPageSize(number(at: 24))
            if start.starts(with: journal) { return sized }
            guard start.prefix(8).allSatisfy({ $0 == 0 }) else { return false }
            return sized || start.prefix(journalHeaderSize).allSatisfy { $0 == 0 }
        case "-wal":
            return logs.contains { start.starts(with: $0) } && number(at: 4) == 3_007_000
        default:
            // SQLite grows an index a page of 4 KiB at a time, to regions of 32 KiB.
            return zeros || indexes.contains { start.starts(with: $0) } && size > 0 && size % 4096 == 0
        }
    }

    /// A rollback journal's header: its magic, then five 4-byte numbers.
    static let journalHeaderSize = 28
    /// The least sector size SQLite pads a journal's header to.
    static let journalSectorMinimum = 512
}
