import Testing
@testable import VaultCore
@testable import VaultFleet

/// What a bucket run ends with, for a job engine's retry policy: nothing when no vault failed,
/// a temporary failure (exit 75) when every failure was the object store's, an operational one
/// (exit 1) as soon as one vault failed for good or ended in conflict.
@Suite struct BucketRunOutcomeTests {
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
        #expect(BucketMigration.failure(of: done) == nil)
        #expect(BucketMigration.failure(of: []) == nil)
    }

    @Test func onlyTheStoresFailuresAreWorthARetry() throws {
        let results = [Self.result("a", .migrated), Self.result("b", .failed, Self.unreachable), Self.result("c", .failed, Self.busy)]
        let failure = try #require(BucketMigration.failure(of: results))
        #expect(failure.code == .vaultsToRetry && failure.code.category == .temporary)
        #expect(failure.reason.hasPrefix("2 vaults failed only because the object store"))
        #expect(results.map(\.isTemporaryFailure) == [false, true, true])
        #expect(VaultError.Code.storageUnreachable.category == .temporary && VaultError.Code.storageBusy.category == .temporary)
    }

    @Test func oneFailureForGoodOrAConflictIsNot() throws {
        let damaged = [Self.result("a", .failed, Self.busy), Self.result("b", .failed, Self.damaged)]
        let failure = try #require(BucketMigration.failure(of: damaged))
        #expect(failure.code == .vaultsFailed && failure.code.category == .operational)
        #expect(failure.reason.contains("2 vaults failed and 0 changed too often") && failure.reason.contains("1 of the failures only because of the object store"))
        let conflict = [Self.result("a", .failed, Self.unreachable), Self.result("b", .conflict, .changedSinceRead("s3://family-vaults/vaults/b.vault"))]
        #expect(BucketMigration.failure(of: conflict)?.code == .vaultsFailed)
        #expect(!conflict[1].isTemporaryFailure && conflict[1].isFailure)
    }
}
