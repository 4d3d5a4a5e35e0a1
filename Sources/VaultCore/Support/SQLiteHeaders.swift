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

    /// Whether `header` begins the side file SQLite keeps as `suffix` (`-journal`, `-wal`,
    /// `-shm`): its magic, or eight zeros (SQLite zeroes a journal's magic to retire it, and a
    /// journal cut off while being written may have no header yet; text, a key file, never
    /// starts so).
    package static func isSideFile(_ header: [UInt8], suffix: String) -> Bool {
        if header.prefix(8).count == 8, header.prefix(8).allSatisfy({ $0 == 0 }) { return true }
        switch suffix {
        case "-journal": return header.starts(with: journal)
        case "-wal": return logs.contains { header.starts(with: $0) }
        default: return indexes.contains { header.starts(with: $0) }
        }
    }
}
