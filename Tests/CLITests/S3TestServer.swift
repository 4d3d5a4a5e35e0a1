import Foundation
@testable import VaultCore
@testable import VaultFiles
@testable import VaultStorage

/// The throwaway SeaweedFS server scripts/test starts (scripts/lib/seaweedfs.sh) and names in its
/// variables: a test that needs it fails without it, saying so, and never skips.
enum S3TestServer {
    private static let environment = ProcessInfo.processInfo.environment

    private static var available: Bool { environment["HVT_TEST_S3_ENDPOINT"] != nil }

    struct Missing: Error, CustomStringConvertible {
        var description: String { "needs the S3 server that scripts/test starts (HVT_TEST_S3_ENDPOINT is not set): run through scripts/test" }
    }

    /// What a tool run needs to reach the server, as an operator would set it: the endpoint and
    /// a shared-credentials file (the secret is never in the environment or on a command line).
    static var toolEnvironment: [String: String] {
        guard available else { return [:] }
        return ["AWS_ENDPOINT_URL": environment["HVT_TEST_S3_ENDPOINT"]!,
                "AWS_SHARED_CREDENTIALS_FILE": environment["HVT_TEST_S3_CREDENTIALS_FILE"]!,
                "AWS_CONFIG_FILE": "/nonexistent", "AWS_REGION": "us-east-1"]
    }

    static func client() throws -> S3Client {
        guard available else { throw Missing() }
        return try S3Client(S3Configuration.load(environment: toolEnvironment.merging(["HOME": "/nonexistent"]) { $1 }))
    }

    /// A new, empty bucket.
    static func createBucket() throws -> String {
        let bucket = "hvt-cli-\(UUID().uuidString.lowercased().prefix(13))"
        try client().createBucket(bucket)
        return bucket
    }

    /// Uploads `relative` paths of `folder` under the same keys.
    static func upload(_ folder: URL, _ relative: [String], to bucket: String) throws {
        let client = try client()
        for path in relative {
            let bytes = try Array(Data(contentsOf: folder.appendingPathComponent(path)))
            _ = try client.put(S3ObjectName(bucket: bucket, key: path), bytes, condition: .creating)
        }
    }

    static func get(_ bucket: String, _ key: String) throws -> [UInt8]? {
        try client().get(S3ObjectName(bucket: bucket, key: key))?.bytes
    }
}

extension S3Client {
    /// Makes a bucket for a test: the tools never make one, so only the tests have this.
    func createBucket(_ bucket: String) throws {
        let response = try send("PUT", S3ObjectName(bucket: bucket, key: "")).get()
        guard response.status == 200 else {
            throw VaultError(.io, "creating the test bucket '\(bucket)' answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
    }
}
