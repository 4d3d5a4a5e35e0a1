import Testing
@testable import VaultCore
@testable import VaultFiles
@testable import VaultFleet

/// What a fleet run (a bucket or a folder batch) ends with, for a job engine's retry policy: nothing when no vault failed,
/// a temporary failure (exit 75) when every failure was the object store's, an operational one
/// (exit 1) as soon as one vault failed for good or ended in conflict.
@Suite struct FleetRunOutcomeTests {
    static func result(_ key: String, _ status: MigrationStatus, _ error: VaultError? = nil) -> BucketMigration.Result {
        let name = S3ObjectName(bucket: "family-vaults", key: "vaults/\(key).vault")
        return BucketMigration.Result(job: BucketMigration.job(name, below: nil, destination: .inPlace), status: status, from: 1, to: 2,
                                      etagBefore: nil, etagAfter: nil, error: error)
    }

    static let unreachable = VaultError(.storageUnreachable, "could not reach the object store")
    static let busy = VaultError(.storageBusy, "answered HTTP 503 SlowDown to all 5 attempts")
    static let damaged = VaultError(.authenticationFailed, "authentication failed")

    @Test func nothingFailedIsNoFailure() {
        let done = [Self.result("a", .migrated), Self.result("b", .unchanged), Self.result("c", .noKey), Self.result("d", .previouslyDone)]
        #expect(FleetRunOutcome.failure(of: done) == nil)
        #expect(FleetRunOutcome.failure(of: [BucketMigration.Result]()) == nil)
    }

    @Test func onlyTheStoresFailuresAreWorthARetry() throws {
        let results = [Self.result("a", .migrated), Self.result("b", .failed, Self.unreachable), Self.result("c", .failed, Self.busy)]
        let failure = try #require(FleetRunOutcome.failure(of: results))
        #expect(failure.code == .vaultsToRetry && failure.code.category == .temporary)
        #expect(failure.reason.hasPrefix("2 vaults failed only because the object store"))
        #expect(results.map(\.isTemporaryFailure) == [false, true, true])
        #expect(VaultError.Code.storageUnreachable.category == .temporary && VaultError.Code.storageBusy.category == .temporary)
    }

    @Test func oneFailureForGoodOrAConflictIsNot() throws {
        let damaged = [Self.result("a", .failed, Self.busy), Self.result("b", .failed, Self.damaged)]
        let failure = try #require(FleetRunOutcome.failure(of: damaged))
        #expect(failure.code == .vaultsFailed && failure.code.category == .operational)
        #expect(failure.reason.hasPrefix("2 vaults failed (") && failure.reason.contains("1 of the failures only because of the object store"))
        let conflict = [Self.result("a", .failed, Self.unreachable), Self.result("b", .conflict, .changedSinceRead("s3://family-vaults/vaults/b.vault"))]
        #expect(FleetRunOutcome.failure(of: conflict)?.code == .vaultsFailed)
        #expect(!conflict[1].isTemporaryFailure && conflict[1].isFailure)
    }

    @Test func aFolderBatchEndsAsABucketRunDoes() throws {
        func result(_ status: MigrationStatus, _ error: VaultError? = nil) -> BatchMigration.Result {
            let job = BatchMigration.Job(line: 1, vault: "a.vault", keyFile: "a.nsec", vaultKeyFile: nil, output: "out/a.vault")
            return BatchMigration.Result(job: job, status: status, from: 1, to: 2, error: error)
        }
        #expect(FleetRunOutcome.failure(of: [result(.migrated), result(.unchanged)]) == nil)
        let failure = try #require(FleetRunOutcome.failure(of: [result(.migrated), result(.failed, Self.damaged), result(.failed, Self.damaged)]))
        #expect(failure.code == .vaultsFailed)
        #expect(failure.reason == "2 vaults failed; they are in the report and the journal")
        let dry = try #require(FleetRunOutcome.failure(of: [result(.failed, Self.damaged)], dryRun: true))
        #expect(dry.reason == "1 vaults would fail; they are in the report")
    }

    @Test func conflictsAreCountedApart() throws {
        let results = [Self.result("a", .failed, Self.damaged), Self.result("b", .conflict, .changedSinceRead("s3://family-vaults/vaults/b.vault"))]
        #expect(try #require(FleetRunOutcome.failure(of: results)).reason == "1 vaults failed and 1 changed too often while being migrated; they are in the report and the journal")
    }
}
