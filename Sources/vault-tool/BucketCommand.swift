import ArgumentParser
import CLISupport
import Foundation
import Synchronization
import VaultCore

/// `migrate --source s3://BUCKET/PREFIX/` (or a manifest of objects) with `--in-place` or
/// `--out s3://…/`: the presentation of a fleet run on a bucket (the rules are VaultCore's
/// ``BucketMigration``): a JSON Lines report on standard output, progress on a terminal's
/// standard error, and a summary at the end.
struct BucketCommand {
    enum Jobs {
        case listing(S3ObjectName)
        /// Manifest lines: an object, and the key file that opens it.
        case manifest(String)
    }

    enum Keys {
        case folder(String)
        case manifest([S3ObjectName: (keyFile: String?, vaultKeyFile: String?)])
    }

    let jobs: Jobs
    let target: Int
    let destination: BucketMigration.Destination
    let vaultKeyDir: String?
    let shard: BucketMigration.Shard?
    let journal: String?
    let parallelism: Int
    let dryRun: Bool
    let skipFailed: Bool

    func run() throws {
        let store = try ObjectStores.shared()
        let (list, keys, batch) = try resolveJobs(store)
        let journalPath = try journal ?? defaultJournal(list)
        let migration = try BucketMigration(jobs: list, describing: batch, store: store, target: target, destination: destination, shard: shard,
                                            journalPath: journalPath, dryRun: dryRun)
        let tally = Mutex([BucketMigration.Status: Int]())
        let showProgress = StandardStreams.errorIsTerminal
        let started = Date()
        let total = list.count
        try migration.run(parallelism: parallelism, loadAccess: { job, household in
            try Self.access(for: job, household: household, keys: keys)
        }, report: { result in
            let line = String(decoding: Self.jsonLine(result).serialized(pretty: false), as: UTF8.self) + "\n"
            tally.withLock { counts in
                counts[result.status, default: 0] += 1
                StandardStreams.writeOutput(Array(line.utf8))
                if showProgress {
                    BatchCommand.drawProgress(done: counts.values.reduce(0, +), total: total,
                                              failed: counts[.failed, default: 0] + counts[.conflict, default: 0], seconds: Date().timeIntervalSince(started))
                }
            }
        })
        if showProgress { StandardStreams.writeError(Array("\r\u{1b}[K".utf8)) }
        let counts = tally.withLock { $0 }
        func count(_ status: BucketMigration.Status) -> Int { counts[status, default: 0] }
        let seen = counts.values.reduce(0, +)
        let otherShard = total - seen
        let shardNote = shard.map { " (shard \($0): \(otherShard) of the \(total) listed belong to other shards)" } ?? ""
        let failed = count(.failed) + count(.conflict)
        if dryRun {
            diagnostics.note("dry run: would migrate \(count(.wouldMigrate)), unchanged \(count(.unchanged)), no key \(count(.noKey)), failing \(count(.failed)) of \(seen) vaults (version \(target))\(shardNote); nothing was written")
        } else {
            diagnostics.note("migrated \(count(.migrated)), unchanged \(count(.unchanged)), done earlier \(count(.previouslyDone)), no key \(count(.noKey)), conflicts \(count(.conflict)), failed \(count(.failed)) of \(seen) vaults (version \(target))\(shardNote)")
        }
        if count(.noKey) > 0 {
            diagnostics.note("\(count(.noKey)) vaults have no key here and are left for the app to migrate on the families' devices")
        }
        guard failed > 0 else { return }
        if skipFailed {
            diagnostics.warning("\(failed) vaults failed or changed too often and were skipped; they are in the report and the journal")
            return
        }
        throw ToolError(.operational, "\(count(.failed)) vaults failed and \(count(.conflict)) changed too often while being migrated; they are in the report and the journal",
                        hint: "run the same command again (finished vaults are not redone), or accept them with --skip-failed")
    }

    private func resolveJobs(_ store: ObjectStore) throws -> ([BucketMigration.Job], Keys, String) {
        let keys: Keys
        let list: [BucketMigration.Job]
        let batch: String
        switch jobs {
        case .listing(let prefix):
            keys = .folder(vaultKeyDir!)
            list = try BucketMigration.jobs(under: prefix, destination: destination, shard: shard, store: store)
            batch = "source \(prefix)"
        case .manifest(let path):
            let bytes = try InputFiles.read(path, what: "manifest", limit: InputLimits.listFile)
            var map: [S3ObjectName: (keyFile: String?, vaultKeyFile: String?)] = [:]
            var jobs: [BucketMigration.Job] = []
            var outputs: [S3ObjectName: Int] = [:]
            for entry in try BatchMigration.parseManifest(bytes, manifestPath: path, outDir: "") {
                guard case .object(let name) = try VaultLocation(entry.vault), !name.isPrefix else {
                    throw ToolError(.invalidInput, "manifest line \(entry.line) names '\(entry.vault)', not an s3:// object; with --in-place or --out every vault is in a bucket",
                                    hint: "migrate files with --out-dir DIR instead")
                }
                map[name] = (entry.keyFile, entry.vaultKeyFile)
                let job = BucketMigration.job(name, below: nil, destination: destination)
                if case .prefix = destination, let earlier = outputs.updateValue(entry.line, forKey: job.output) {
                    throw ToolError(.invalidInput, "manifest lines \(earlier) and \(entry.line) would both write '\(job.output)'")
                }
                if let shard, let household = job.namedHousehold, !shard.contains(household) { continue }
                jobs.append(job)
            }
            keys = .manifest(map)
            list = jobs
            batch = "manifest \(Hex.encode(SHA256.hash(bytes)))"
        }
        let where_: String = switch destination {
        case .inPlace: "in place"
        case .prefix(let out): "to \(out)"
        }
        return (list, keys, "\(batch) \(where_)")
    }

    /// `BUCKET.migrate-journal.sqlite` here, or `BUCKET.shard-I-of-N.migrate-journal.sqlite`.
    private func defaultJournal(_ list: [BucketMigration.Job]) throws -> String {
        let bucket: String = switch jobs {
        case .listing(let prefix): prefix.bucket
        case .manifest: list.first?.source.bucket ?? "manifest"
        }
        return bucket + (shard.map { ".shard-\($0.index)-of-\($0.count)" } ?? "") + ".migrate-journal.sqlite"
    }

    static func access(for job: BucketMigration.Job, household: HouseholdID, keys: Keys) throws -> VaultAccess? {
        switch keys {
        case .folder(let folder):
            let path = VaultLocation.joined(folder, household.hex + ".vaultkey")
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return try VaultAccessFiles.load(keyFile: nil, vaultKeyFile: path)
        case .manifest(let map):
            guard let files = map[job.source] else { return nil }
            return try VaultAccessFiles.load(keyFile: files.keyFile, vaultKeyFile: files.vaultKeyFile)
        }
    }

    static func jsonLine(_ result: BucketMigration.Result) -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("vault", .string(result.job.source.description)),
            ("output", .string(result.job.output.description)),
            ("status", .string(result.status.rawValue)),
        ]
        if let from = result.from { entries.append(("from", .int(from))) }
        entries.append(("to", .int(result.to)))
        if let before = result.etagBefore { entries.append(("etagBefore", .string(before))) }
        if let after = result.etagAfter { entries.append(("etagAfter", .string(after))) }
        if let error = result.error {
            entries.append(("error", .string(error.reason)))
            entries.append(("exit", .int(Int(ExitStatus(error.code.category).rawValue))))
        }
        return .object(entries)
    }
}
