import Foundation
import Testing

/// Every golden case that reads a vault, run again with its vaults in a bucket of the throwaway
/// S3 server: the same stdout, stderr and exit code (issue 15: one store interface; no
/// executable knows which kind of location it has).
@Suite(.enabled(if: S3TestServer.available, "needs the S3 server scripts/test starts"))
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
