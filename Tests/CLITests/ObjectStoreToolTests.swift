import Foundation
import Testing

/// Every golden case that reads a vault, run again with its vaults in a bucket of the throwaway
/// S3 server: the same stdout, stderr and exit code (issue 15: one store interface; no
/// executable knows which kind of location it has).
@Suite(.needsServers)
struct ObjectStoreGoldenTests {
    static let cases: [GoldenCase] = (VaultToolGoldenTests.cases + MigrationGoldenTests.cases + DeviceRevokerGoldenTests.cases
        + RotationPlannerGoldenTests.cases + RecoverySheetGoldenTests.cases)
        .filter { golden in golden.arguments.contains { $0.hasPrefix("testkit") || $0.hasSuffix(".vault") || outputs.contains($0) } }
        // A missing object is "no such object", where a missing file is "no such file or directory".
        .filter { $0.name != "verify-out-dir-wrong" }

    /// What the cases write, written to the bucket too: vaults, and the folders of a rotation.
    static let outputs: Set<String> = ["out.vault", "down.vault", "x.vault", "merged.vault", "again", "rotated", "elsewhere"]

    @Test(arguments: cases)
    func sameOnTheObjectStore(_ golden: GoldenCase) throws {
        try Golden.check(golden, onObjectStore: true, objectOutputs: Self.outputs)
    }
}

/// The write path's refusals hold for objects too, and refuse before anything is written.
@Suite(.needsServers)
struct ObjectStoreRefusalTests {
    @Test func aSecretIsNeverWrittenToABucketNorAKeyReadFromOne() throws {
        let workspace = try Workspace()
        try workspace.uploadToBucket()
        let bucket = try #require(workspace.bucket)
        let derive = try workspace.run("vault-tool", ["derive", "--key-file", "keys/parent.nsec", "--vault-key-out", "s3://\(bucket)/k.vaultkey"])
        #expect(derive.status == 4 && derive.stderrText.contains("would hold a secret"), "\(derive.stderrText)")
        #expect(try S3TestServer.get(bucket, "k.vaultkey") == nil)
        let open = try workspace.run("vault-tool", ["open", "--vault-key-file", "s3://\(bucket)/k.vaultkey", "testkit/ok-household.vault"])
        #expect(open.status == 2 && open.stderrText.contains("keys are read from local files only"), "\(open.stderrText)")
    }

    @Test func anOutputThatIsAnInputOrAnotherOutputIsRefusedByName() throws {
        let workspace = try Workspace()
        try workspace.uploadToBucket()
        let bucket = try #require(workspace.bucket)
        let vault = "s3://\(bucket)/testkit/ok-household.vault"
        let before = try S3TestServer.get(bucket, "testkit/ok-household.vault")
        let same = try workspace.run("vault-tool", ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "-o", vault, vault])
        #expect(same.status == 4 && same.stderrText.contains("inputs are never overwritten"), "\(same.stderrText)")
        let prefix = try workspace.run("vault-tool", ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "-o", "s3://\(bucket)/out/", vault])
        #expect(prefix.status == 4 && prefix.stderrText.contains("names a prefix"), "\(prefix.stderrText)")
        #expect(try S3TestServer.get(bucket, "testkit/ok-household.vault") == before)
    }
}
