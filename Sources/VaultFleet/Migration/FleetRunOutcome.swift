import VaultCore

/// One vault's end in a fleet run, a folder batch's (``BatchMigration/Result``) or a bucket's
/// (``BucketMigration/Result``): what ``FleetRunOutcome`` judges the run by.
public protocol FleetRunResult {
    var status: MigrationStatus { get }
    var error: VaultError? { get }
}

extension BatchMigration.Result: FleetRunResult {}
extension BucketMigration.Result: FleetRunResult {}

extension FleetRunResult {
    /// The vault is not done: it failed, or ended in conflict.
    public var isFailure: Bool { status == .failed || status == .conflict }

    /// It failed for a reason a retry gets past. A conflict is not one: with `--out` it is an
    /// object this run did not write, and in place a vault changed five times during its
    /// migration is one a family is using right now; an operator looks at both.
    public var isTemporaryFailure: Bool { status == .failed && error?.code.category == .temporary }
}

/// How a fleet run ended, a folder batch or a bucket, for the job engine that runs it: done,
/// worth a retry, or failed for good. A retry policy acts on the exit code (0, 75, 1), so a run
/// exits 75 only when every vault that failed failed for a reason a retry gets past (the store
/// throttled, failed with 5xx or could not be reached, through every attempt), and 1 when any
/// failed for good (a wrong key, a damaged vault, a conflict); each vault's own outcome is in
/// its report line.
public enum FleetRunOutcome {
    /// What a run whose vaults ended as `results` failed with, nil when none failed. Only the
    /// failures count, so a caller may keep only those. A dry run has no journal to name.
    public static func failure(of results: [some FleetRunResult], dryRun: Bool = false) -> VaultError? {
        let failed = results.filter(\.isFailure)
        guard !failed.isEmpty else { return nil }
        // No later run fares better with a configuration that cannot work: its own error (exit 78).
        if let misconfigured = failed.lazy.compactMap(\.error).first(where: { $0.code.category == .configuration }) { return misconfigured }
        if failed.allSatisfy(\.isTemporaryFailure) { return .vaultsToRetry(failed.count, dryRun: dryRun) }
        let conflicts = failed.count(where: { $0.status == .conflict })
        return .vaultsFailed(failed: failed.count - conflicts, conflicts: conflicts, temporary: failed.count(where: \.isTemporaryFailure), dryRun: dryRun)
    }
}

extension VaultError.Code {
    /// Vaults of a fleet run failed, some for good (a wrong key, a damaged vault), or ended in conflict.
    public static let vaultsFailed = VaultError.Code(name: "vaultsFailed", category: .operational)
    /// Every vault of a fleet run that failed failed only because of the object store (throttled,
    /// 5xx, out of reach): running it again later finishes them.
    public static let vaultsToRetry = VaultError.Code(name: "vaultsToRetry", category: .temporary)
}

extension VaultError {
    static func vaultsFailed(failed: Int, conflicts: Int, temporary: Int, dryRun: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        let changed = conflicts > 0 ? " and \(conflicts) changed too often while being migrated" : ""
        let passing = temporary > 0 ? " (\(temporary) of the failures only because of the object store)" : ""
        return VaultError(.vaultsFailed, "\(failed) vaults \(dryRun ? "would fail" : "failed")\(changed)\(passing); \(whereRecorded(dryRun))",
                          file: file, line: line)
    }

    static func vaultsToRetry(_ count: Int, dryRun: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.vaultsToRetry, "\(count) vaults failed only because the object store throttled, failed or could not be reached; \(whereRecorded(dryRun))",
                   hint: "run the same command again later: finished vaults are not redone", file: file, line: line)
    }

    private static func whereRecorded(_ dryRun: Bool) -> String {
        dryRun ? "they are in the report" : "they are in the report and the journal"
    }
}
