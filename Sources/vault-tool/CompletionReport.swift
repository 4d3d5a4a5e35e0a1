import FoundationEssentials
import VaultCore
import VaultFleet

/// A bucket run's completion report in the layout of S3 Batch Operations' (`Report_CSV_20180820`),
/// beside the JSON Lines report, so what reads an S3 Batch Operations job's report reads a shard's:
/// one line per vault, no header, the columns as AWS writes its rows (its published example rows
/// put the HTTP status before the error code):
///
///     Bucket,Key,VersionId,TaskStatus,HTTPStatusCode,ErrorCode,ResultMessage
///     family-vaults,vaults/0a92….vault,,succeeded,200,,"migrated"
///     family-vaults,vaults/77c1….vault,,failed,200,TemporaryFailure,"the object store at … answered HTTP 503 SlowDown …"
///
/// VersionId is empty (the run conditions on ETags, which the JSON report has); TaskStatus is
/// `failed` for a failed vault and a conflict, `succeeded` for every other status, which
/// ResultMessage names (`migrated`, `unchanged`, `no-key`, …); ErrorCode is `TemporaryFailure`
/// for a failure a retry gets past and `PermanentFailure` for the others, as a Batch
/// Operations task reports them; HTTPStatusCode is 200, as for every task that ran. Fields are
/// quoted as RFC 4180 says (a comma, a quote or a line break), ResultMessage always.
enum CompletionReport {
    static func csv(_ results: [BucketMigration.Result]) -> [UInt8] {
        let sorted = results.sorted { ($0.job.source.bucket, $0.job.source.key) < ($1.job.source.bucket, $1.job.source.key) }
        return Array(sorted.map(row).joined().utf8)
    }

    static func row(_ result: BucketMigration.Result) -> String {
        let errorCode = result.isFailure ? (result.isTemporaryFailure ? "TemporaryFailure" : "PermanentFailure") : ""
        let message = result.error?.reason ?? result.status.rawValue
        return [field(result.job.source.bucket), field(result.job.source.key), "", result.isFailure ? "failed" : "succeeded", "200", errorCode,
                quoted(message)].joined(separator: ",") + "\n"
    }

    static func field(_ text: String) -> String {
        text.unicodeScalars.contains(where: { ",\"\n\r".unicodeScalars.contains($0) }) ? quoted(text) : text
    }

    static func quoted(_ text: String) -> String { "\"" + text.replacing("\"", with: "\"\"") + "\"" }
}
