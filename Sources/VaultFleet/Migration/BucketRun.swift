import VaultCore
import VaultFiles
import VaultStorage

extension BucketMigration {
    // MARK: Running

    /// Runs every job not yet done, `parallelism` at a time (the work waits on the network),
    /// and reports each as it finishes, jobs done by an earlier run first. `loadAccess` gives a
    /// household's key, or nil when the operator holds none. `breaker` stops the run early (the
    /// store gone, a signal): vaults in flight finish and are recorded, the rest are not
    /// started, and why it stopped is returned.
    @discardableResult
    public func run(parallelism: Int, breaker: RunBreaker = RunBreaker(), loadAccess: @escaping @Sendable (Job, HouseholdID) throws -> VaultAccess?,
                    report: @escaping @Sendable (Result) throws -> Void) throws -> RunBreaker.Stop? {
        let earlier = try journalRows()
        var pending: [Job] = []
        for job in jobs {
            if let row = earlier[job.source.description], row.state == .done {
                try report(Result(job: job, status: .previouslyDone, from: row.from, to: target, etagBefore: row.etagBefore, etagAfter: row.etagAfter, error: nil))
            } else {
                pending.append(job)
            }
        }
        let work = pending
        do {
            do {
                _ = try concurrently(work.count, parallelism: parallelism) { [self] index in
                    guard breaker.mayStart else { throw RunStopped() }
                    let job = work[index]
                    let result = try process(job, earlier: earlier[job.source.description], loadAccess: loadAccess)
                    breaker.record(result?.error)
                    if let result { try report(result) }
                }
            } catch is RunStopped {
                try recordWaiting()
                return breaker.stop
            } catch {
                // What the vaults done so far recorded is kept, whatever stopped the run.
                try? recordWaiting()
                throw error
            }
            try recordWaiting()
            return nil
        } catch let failure as JournalFailure {
            throw failure.error
        } catch let failure as HouseholdKeys.Failure {
            // A key command that cannot answer: the vaults done so far are recorded, no other
            // is opened.
            throw failure.error
        }
    }


    /// One vault; nil when it belongs to another shard (known only once its header is read).
    func process(_ job: Job, earlier: JournalRow?, loadAccess: (Job, HouseholdID) throws -> VaultAccess?) throws -> Result? {
        do {
            if let earlier, [.writing, .failed].contains(earlier.state), earlier.planned != nil,
               let settled = try settleInterruptedWrite(job, earlier) {
                return settled
            }
            for _ in 0..<Self.attemptsPerVault {
                guard let source = try store.withClient({ try $0.get(job.source) }) else {
                    throw VaultError.noSuchObject(job.source.description, what: "vault")
                }
                let header = try VaultEnvelope(parsing: source.bytes).header
                if let shard, shardByHeader, job.namedHousehold == nil, !shard.contains(header.householdID) { return nil }
                guard let access = try loadAccess(job, header.householdID) else {
                    try record(job, state: .noKey, status: .noKey, from: Int(header.schemaVersion), before: source.etag, after: nil, error: nil)
                    return Result(job: job, status: .noKey, from: Int(header.schemaVersion), to: target, etagBefore: source.etag, etagAfter: nil, error: nil)
                }
                let outcome = try VaultMigration.migrate(source.bytes, access: access, to: target, logVerified: false)
                let from = outcome.report.from
                let status: MigrationStatus = outcome.unchanged ? .unchanged : .migrated
                guard journal != nil else {
                    return Result(job: job, status: outcome.unchanged ? .unchanged : .wouldMigrate, from: from, to: target, etagBefore: source.etag, etagAfter: nil, error: nil)
                }
                if outcome.unchanged, destination == .inPlace {
                    try record(job, state: .done, status: status, from: from, before: source.etag, after: source.etag, error: nil, deferred: true)
                    return Result(job: job, status: status, from: from, to: target, etagBefore: source.etag, etagAfter: source.etag, error: nil)
                }
                try record(job, state: .writing, status: nil, from: from, before: source.etag, after: nil, error: nil,
                           planned: Hex.encode(SHA256.hash(outcome.bytes)))
                let condition: S3Client.WriteCondition = destination == .inPlace ? .replacing(etag: source.etag) : .creating
                switch try store.withClient({ try $0.put(job.output, outcome.bytes, condition: condition) }) {
                case .written(let etag):
                    try record(job, state: .done, status: status, from: from, before: source.etag, after: etag, error: nil, deferred: true)
                    return Result(job: job, status: status, from: from, to: target, etagBefore: source.etag, etagAfter: etag, error: nil)
                case .changedMeanwhile where destination == .inPlace:
                    continue  // a device wrote it: read its version and migrate that
                case .changedMeanwhile:
                    let error = VaultError.changedSinceRead(job.output.description)
                    try record(job, state: .conflict, status: .conflict, from: from, before: source.etag, after: nil,
                               error: "\(job.output) already exists and was not written by this run")
                    return Result(job: job, status: .conflict, from: from, to: target, etagBefore: source.etag, etagAfter: nil, error: error)
                }
            }
            let error = VaultError.changedSinceRead(job.source.description)
            try record(job, state: .conflict, status: .conflict, from: nil, before: nil, after: nil,
                       error: "changed by someone else \(Self.attemptsPerVault) times while it was being migrated")
            return Result(job: job, status: .conflict, from: nil, to: target, etagBefore: nil, etagAfter: nil, error: error)
        } catch let error as VaultError {
            try record(job, state: .failed, status: .failed, from: nil, before: nil, after: nil, error: error.reason)
            return Result(job: job, status: .failed, from: nil, to: target, etagBefore: nil, etagAfter: nil, error: error)
        }
    }

    /// A run was killed (or lost the store) between a job's write and its record: the bucket says
    /// whether the write landed. The journal kept the SHA-256 of the bytes the write sent; the
    /// object (in place) or the output holding exactly those bytes means it did. Anything else
    /// is migrated as usual: a vault already at the target is then `unchanged`, and an output
    /// someone else wrote is a conflict.
    func settleInterruptedWrite(_ job: Job, _ earlier: JournalRow) throws -> Result? {
        guard let planned = earlier.planned, let before = earlier.etagBefore,
              let current = try store.withClient({ try $0.get(job.output) }),
              Hex.encode(SHA256.hash(current.bytes)) == planned else { return nil }
        try record(job, state: .done, status: .migrated, from: earlier.from, before: before, after: current.etag, error: nil)
        return Result(job: job, status: .migrated, from: earlier.from, to: target, etagBefore: before, etagAfter: current.etag, error: nil)
    }

}
