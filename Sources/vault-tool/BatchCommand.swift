import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import Synchronization
import VaultCore
import VaultFleet

/// `migrate --manifest`: the presentation of a batch run (the rules are VaultFleet's
/// ``BatchMigration``): a JSON Lines report on standard output, a progress bar on a terminal's
/// standard error, and a summary at the end.
struct BatchCommand {
    let manifest: String
    let target: Int
    let outDir: String
    let journal: String?
    let jobs: Int
    let allowLossy: Bool
    let dryRun: Bool
    /// Failures are accepted: reported, kept in the journal, and the run exits 0.
    let skipFailed: Bool
    /// The command as the journal keeps it, to name it when it refuses another.
    let command: String

    func run() throws {
        let batch = try BatchMigration(manifestPath: manifest, outDir: outDir, journalPath: BatchMigration.journalPath(named: journal, outDir: outDir),
                                       target: target, allowLossy: allowLossy, dryRun: dryRun, command: command)
        let total = batch.total
        let progress = RunReport<MigrationStatus>(total: total, failing: [.failed])
        // Only the failures decide how the run ends (as a bucket run's do).
        let failures = Mutex<[BatchMigration.Result]>([])
        // SIGTERM stops the batch between groups of vaults, with its journal and summary.
        StopSignals.install()
        let stop = try batch.run(parallelism: jobs, breaker: RunBreaker(signalled: { StopSignals.signalled }), loadAccess: { job in
            try VaultAccessFiles.load(keyFile: job.keyFile, vaultKeyFile: job.vaultKeyFile)
        }, report: { result in
            try progress.add(result.status, Self.jsonLine(result))
            if result.isFailure { failures.withLock { $0.append(result) } }
        })
        let counts = progress.finish()
        let failed = counts[.failed, default: 0]
        let failure = FleetRunOutcome.failure(of: failures.withLock { $0 }, dryRun: dryRun)
        if dryRun {
            diagnostics.note("dry run: would migrate \(counts[.wouldMigrate, default: 0]), unchanged \(counts[.unchanged, default: 0]), failing \(failed) of \(total) vaults (version \(target)); nothing was written")
            if let failure, !skipFailed { throw failure }
            return
        }
        diagnostics.note("migrated \(counts[.migrated, default: 0]), unchanged \(counts[.unchanged, default: 0]), done earlier \(counts[.previouslyDone, default: 0]), failed \(failed) of \(total) vaults (version \(target)) → \(outDir)")
        if let stop { throw RunBreaker.failure(stop, notStarted: total - counts.values.reduce(0, +)) }
        guard let failure else { return }
        if skipFailed {
            diagnostics.warning("\(failed) of \(total) vaults failed and were skipped; their errors are in the report and the journal")
            return
        }
        throw Self.withSkipHint(failure)
    }

    /// A run's failure as both batch kinds show it: vaults that failed for good get the hint
    /// that names what to do about them.
    static func withSkipHint(_ failure: VaultError) -> VaultError {
        guard failure.code == .vaultsFailed else { return failure }
        return failure.withContext(hint: "fix them and run the same command again (finished vaults are not redone), or accept them with --skip-failed")
    }

    static func jsonLine(_ result: BatchMigration.Result) -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("line", .int(result.job.line)),
            ("vault", .string(result.job.vault)),
            ("output", .string(result.job.output)),
            ("status", .string(result.status.rawValue)),
        ]
        if let from = result.from { entries.append(("from", .int(from))) }
        entries.append(("to", .int(result.to)))
        if !result.losses.isEmpty { entries.append(("lost", .array(result.losses.map(JSONValue.string)))) }
        if let error = result.error {
            entries.append(("error", .string(error.reason)))
            entries.append(("exit", .int(Int(ExitStatus(error.code.category).rawValue))))
        }
        return .object(entries)
    }
}
