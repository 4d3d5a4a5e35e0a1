import Synchronization
import VaultCore

/// The keys a folder batch has read, by the file each came from (issue 29). A manifest whose
/// lines share a key file reads, parses and derives it once instead of once a vault: a parent
/// key's public key alone is a scalar multiplication, a fifth of a small vault's migration.
///
/// Only keys that loaded are kept, so a key file that cannot be read fails each of its jobs
/// with its own error, as before. A fleet with a key per household would fill the cache with
/// keys it never asks for again, so past ``capacity`` entries it starts over; a key is then
/// read again, never wrong. A key file edited during a run is read as it was when first read.
final class KeyCache: Sendable {
    static let capacity = 256

    private let entries = Mutex<[String: VaultAccess]>([:])

    /// The job's key, from the cache or from `load`.
    func access(for job: BatchMigration.Job, load: (BatchMigration.Job) throws -> VaultAccess) throws -> VaultAccess {
        // A parent key file and a vault-key file by the same name are different keys.
        let name = job.keyFile.map { "parent:" + $0 } ?? job.vaultKeyFile.map { "vault:" + $0 }
        guard let name else { return try load(job) }
        if let cached = entries.withLock({ $0[name] }) { return cached }
        let loaded = try load(job)
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[name] = loaded
        }
        return loaded
    }
}
