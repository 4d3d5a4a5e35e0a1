import Foundation
import GRDB

/// A batch's SQLite journal, held by one run at a time: an exclusive flock(2) on the file is
/// taken before GRDB opens it, and the kernel drops it when the run dies, even by SIGKILL. The
/// folder batch (``BatchMigration``) and the bucket batch (``BucketMigration``) open theirs here.
final class MigrationJournal: Sendable {
    let queue: DatabaseQueue
    private let lock: Int32

    /// `writeAheadLog`: a commit appends to the log instead of rewriting pages, so recording a job
    /// costs little; with `synchronous = NORMAL` it still survives the process being killed.
    init(path: String, migrator: DatabaseMigrator, writeAheadLog: Bool = false) throws {
        let lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw AtomicFile.ioError("cannot open the journal '\(path)'") }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            close(lock)
            throw VaultError.journalInUse(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        if writeAheadLog {
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL") }
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try migrator.migrate(queue)
        } catch let error as DatabaseError {
            close(lock)
            throw VaultError(.io, "cannot use the journal '\(path)': \(Self.describe(error))")
        }
        self.lock = lock
    }

    deinit { close(lock) }

    /// SQLite's own words for a failure, without its internal code prefix.
    static func describe(_ error: DatabaseError) -> String {
        error.message.map { $0.isEmpty ? "\(error.resultCode)" : $0 } ?? "\(error.resultCode)"
    }
}

extension VaultError {
    static func journalInUse(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.refused, "another migration run is using the journal '\(path)'", file: file, line: line)
    }
}
