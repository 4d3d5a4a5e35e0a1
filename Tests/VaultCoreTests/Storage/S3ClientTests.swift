import Foundation
import Testing
@testable import VaultCore
@testable import VaultFiles
@testable import VaultStorage

/// The configuration as the AWS CLI reads it, and the client against the throwaway SeaweedFS
/// server that scripts/test starts (HVT_TEST_S3_*).
@Suite final class S3ConfigurationTests {
    private var written: [String] = []

    deinit { for path in written { try? FileManager.default.removeItem(atPath: path) } }

    /// A profile file as an operator keeps it: 0600, and gone when the test ends.
    func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hvt-aws-\(UUID().uuidString)").path
        try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600, exclusive: true)
        written.append(path)
        return path
    }

    @Test func theEnvironmentComesFirst() throws {
        let config = try S3Configuration.load(environment: [
            "AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ENDPOINT_URL_S3": "http://localhost:9100/",
            "AWS_REGION": "eu-west-3", "AWS_DEFAULT_REGION": "us-west-2",
            "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
            "HOME": "/nonexistent",
        ])
        #expect(config.endpoint.url == "http://localhost:9100")
        #expect(config.region == "eu-west-3")
        #expect(try config.credentials.current().accessKeyID == "AKID")
        #expect(try config.credentials.current().sessionToken == "token")
        #expect(config.pathStyle)
    }

    @Test func profilesInTheSharedFiles() throws {
        let credentials = try write("""
        [default]
        aws_access_key_id = DEFAULTKEY
        aws_secret_access_key = defaultsecret

        [ops]
        aws_access_key_id = OPSKEY
        aws_secret_access_key = opssecret
        """)
        let config = try write("""
        [default]
        region = us-east-2
        [profile ops]
        region = ca-central-1
        endpoint_url = https://objects.example.org
        s3 =
          addressing_style = virtual
        """)
        let ops = try S3Configuration.load(environment: ["AWS_PROFILE": "ops", "AWS_CONFIG_FILE": config, "AWS_SHARED_CREDENTIALS_FILE": credentials])
        #expect(ops.region == "ca-central-1")
        #expect(ops.endpoint.url == "https://objects.example.org")
        #expect(!ops.pathStyle)
        #expect(try ops.credentials.current().accessKeyID == "OPSKEY")
        #expect(ops.credentialSource.contains("profile 'ops'"))
        let plain = try S3Configuration.load(environment: ["AWS_CONFIG_FILE": config, "AWS_SHARED_CREDENTIALS_FILE": credentials])
        #expect(plain.region == "us-east-2")
        #expect(plain.endpoint.url == "https://s3.us-east-2.amazonaws.com")
        #expect(!plain.pathStyle, "AWS's own endpoint takes virtual-hosted addressing")
        #expect(try plain.credentials.current().accessKeyID == "DEFAULTKEY")
    }

    @Test func aPasswordInTheEndpointIsRefused() {
        #expect(throws: VaultError(.credentialsInEndpoint, "")) {
            try S3Configuration.load(environment: ["AWS_ENDPOINT_URL": "http://user:hunter2@127.0.0.1:9000"])
        }
        do {
            _ = try S3Configuration.load(environment: ["AWS_ENDPOINT_URL": "http://user:hunter2@127.0.0.1:9000"])
            Issue.record("an endpoint with a password was accepted")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
        #expect(throws: VaultError(.badEndpoint, "")) {
            try S3Configuration.load(environment: ["AWS_ENDPOINT_URL": "ftp://127.0.0.1"])
        }
    }

    /// An endpoint that cannot be parsed is never echoed: it may hold a password anywhere.
    @Test(arguments: ["minio:hunter2@host:9000", "hunter2", "http//hunter2@host", "http://hunter2/x@host", "https://host/hunter2",
                      "ftp://u:hunter2@host", "http://host:9000?key=hunter2", "https:/hunter2@host", "http://minio:hunter2",
                      "http://minio:9000:hunter2", "http://[::1]hunter2"])
    func anEndpointThatCannotBeParsedIsNeverEchoed(_ endpoint: String) {
        do {
            _ = try S3Configuration.load(environment: ["AWS_ENDPOINT_URL": endpoint])
            Issue.record("the endpoint '\(endpoint)' was accepted")
        } catch let error as VaultError {
            #expect(error.code == .badEndpoint || error.code == .credentialsInEndpoint)
            #expect(!error.reason.contains("hunter2"), "\(error.reason)")
            #expect(!(error.hint ?? "").contains("hunter2"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func noCredentialsSaysWhereItLooked() throws {
        let config = try S3Configuration.load(environment: ["HOME": "/nonexistent", "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
                                                            "AWS_EC2_METADATA_DISABLED": "true"])
        do {
            _ = try S3Client(config)
            Issue.record("a client without credentials was made")
        } catch let error as VaultError {
            #expect(error.code == .noCredentials)
            for source in ["AWS_ACCESS_KEY_ID unset", "AWS_WEB_IDENTITY_TOKEN_FILE unset", "profile 'default' (in neither /nonexistent/.aws/credentials (no such file) nor /nonexistent/.aws/config (no such file))",
                           "the container endpoint", "EC2 instance metadata (AWS_EC2_METADATA_DISABLED)"] {
                #expect(error.reason.contains(source), "\(error.reason)")
            }
        }
    }

    @Test func objectNames() throws {
        let name = try #require(try S3ObjectName(parsing: "s3://family-vaults/vaults/ab.vault"))
        #expect(name.bucket == "family-vaults" && name.key == "vaults/ab.vault" && !name.isPrefix)
        #expect(try S3ObjectName(parsing: "s3://family-vaults/vaults/")?.isPrefix == true)
        #expect(try S3ObjectName(parsing: "s3://family-vaults")?.isPrefix == true)
        #expect(try S3ObjectName(parsing: "vaults/ab.vault") == nil)
        #expect(throws: VaultError(.badObjectName, "")) { try S3ObjectName(parsing: "s3://Bad_Bucket/x") }
        #expect(throws: VaultError(.badObjectName, "")) { try S3ObjectName(parsing: "s3:///x") }
    }

    @Test func xmlTextIsUnescaped() {
        #expect(XMLText.unescaped("a&amp;b&lt;&#x41;&#66;&quot;&apos;&gt;") == "a&b<AB\"'>")
        let page = S3ListPage(Array("<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>v/a&amp;b</Key><ETag>&quot;e1&quot;</ETag><Size>66</Size></Contents><NextContinuationToken>t+1</NextContinuationToken></ListBucketResult>".utf8))
        #expect(page.objects == [S3Client.Listed(key: "v/a&b", etag: "\"e1\"", size: 66)])
        #expect(page.isTruncated && page.nextToken == "t+1")
        // URL-encoded keys (requested, and said to be): decoded, `+` a space, the token as given;
        // not said to be, a key's own `%` stays.
        let encoded = S3ListPage(Array("<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated><Contents><Key>v/%1B%5B31mred+a%2Bb%C3%A9.vault</Key><Size>1</Size></Contents><Contents><Key>v/%ZZ</Key><Size>1</Size></Contents></ListBucketResult>".utf8))
        #expect(encoded.objects.map(\.key) == ["v/\u{1b}[31mred a+bé.vault", "v/%ZZ"])
        let plain = S3ListPage(Array("<ListBucketResult><Contents><Key>v/%41+b</Key><Size>1</Size></Contents></ListBucketResult>".utf8))
        #expect(plain.objects.map(\.key) == ["v/%41+b"])
        #expect(PercentEncoding.s3Key("%C3") == nil && PercentEncoding.s3Key("%4") == nil && PercentEncoding.s3Key("a%41") == "aA")
    }
}

@Suite(.needsServers)
struct S3ClientTests {
    @Test func conditionalWritesNeverOverwriteAnotherVersion() throws {
        let client = try TestS3.client()
        let bucket = try TestS3.freshBucket(client)
        let name = S3ObjectName(bucket: bucket, key: "vaults/a b+é&.vault")
        guard case .written(let first) = try client.put(name, [1, 2, 3], condition: .creating) else {
            Issue.record("the first creation was refused"); return
        }
        #expect(try client.put(name, [9], condition: .creating) == .changedMeanwhile)
        guard case .written(let second) = try client.put(name, [4, 5, 6, 7], condition: .replacing(etag: first)) else {
            Issue.record("a replacement of the version read was refused"); return
        }
        #expect(first != second)
        #expect(try client.put(name, [8], condition: .replacing(etag: first)) == .changedMeanwhile, "a stale ETag must be refused")
        let read = try #require(try client.get(name))
        #expect(read.bytes == [4, 5, 6, 7] && read.etag == second)
        #expect(try client.get(name, range: 0..<2)?.bytes == [4, 5])
        #expect(try client.get(S3ObjectName(bucket: bucket, key: "vaults/none")) == nil)
    }

    /// The store writes back only the version it read: a device's write in between refuses
    /// the write-back (exit 4), and a second write follows the store's own first.
    @Test func theStoreWritesBackOnlyTheVersionItRead() throws {
        let store = try ObjectStore(TestS3.configuration())
        let device = try TestS3.client()
        let bucket = try TestS3.freshBucket(device)
        let name = S3ObjectName(bucket: bucket, key: "vaults/x.vault")
        _ = try device.put(name, [1], condition: .creating)
        #expect(try store.read(name, what: "vault", limit: 100) == [1])
        let read = try #require(store.versionRead(name))
        try store.write(name, [2], condition: .replacing(etag: read))
        try store.write(name, [3], condition: .replacing(etag: try #require(store.versionRead(name))))
        _ = try device.put(name, [4], condition: .replacing(etag: try #require(try device.get(name)).etag))
        #expect(throws: VaultError(.changedSinceRead, "")) {
            try store.write(name, [5], condition: .replacing(etag: store.versionRead(name)!))
        }
        #expect(try device.get(name)?.bytes == [4])
        #expect(throws: VaultError(.tooLarge, "")) { try store.read(name, what: "vault", limit: 0) }
        #expect(throws: VaultError(.io, "")) { try store.read(S3ObjectName(bucket: bucket, key: "none"), what: "vault", limit: 10) }
    }

    @Test func listingGoesThroughEveryPage() throws {
        let client = try TestS3.client()
        let bucket = try TestS3.freshBucket(client)
        let keys = (0..<7).map { "vaults/\($0) ü&<x>.vault" } + ["other/skip.vault"]
        for key in keys { _ = try client.put(S3ObjectName(bucket: bucket, key: key), [UInt8(key.count)], condition: .creating) }
        var pages = 0
        var listed: [String] = []
        var token: String?
        repeat {
            let page = try client.list(S3ObjectName(bucket: bucket, key: "vaults/"), after: token, pageSize: 3)
            listed += page.objects.map(\.key)
            token = page.next
            pages += 1
        } while token != nil
        #expect(pages == 3)
        #expect(listed.sorted() == keys.filter { $0.hasPrefix("vaults/") }.sorted())
    }

    @Test func failuresNameWhatFailedAndNeverTheSecret() throws {
        let client = try TestS3.client()
        #expect(throws: VaultError(.noSuchBucket, "")) { try client.get(S3ObjectName(bucket: "no-such-bucket-here", key: "x")) }

        let good = try TestS3.configuration()
        let wrongSecret = "wrong-secret-\(UUID().uuidString)"
        let bad = S3Configuration(
            endpoint: good.endpoint, region: good.region,
            credentials: SigV4.Credentials(accessKeyID: try good.credentials.current().accessKeyID, secret: .test(Array(wrongSecret.utf8))),
            pathStyle: true, credentialSource: "a test")
        do {
            _ = try S3Client(bad).get(S3ObjectName(bucket: "any-bucket", key: "x"))
            Issue.record("a wrong secret was accepted")
        } catch let error as VaultError {
            #expect(error.code == .storageDenied)
            #expect(!error.reason.contains(wrongSecret))
        }

        let closed = S3Configuration(endpoint: try .init(parsing: "http://127.0.0.1:1"), region: "us-east-1",
                                     credentials: good.credentials, pathStyle: true)
        #expect(throws: VaultError(.storageUnreachable, "")) {
            try S3Client(closed, retry: RetryPolicy(maxAttempts: 2, sleep: { _ in })).get(S3ObjectName(bucket: "any-bucket", key: "x"))
        }
    }
}

enum TestS3 {
    static let environment = ProcessInfo.processInfo.environment

    static func configuration() throws -> S3Configuration {
        try TestServers.require("HVT_TEST_S3_ENDPOINT", "the S3 server")
        return try S3Configuration.load(environment: [
            "AWS_ENDPOINT_URL": environment["HVT_TEST_S3_ENDPOINT"]!,
            "AWS_SHARED_CREDENTIALS_FILE": environment["HVT_TEST_S3_CREDENTIALS_FILE"]!,
            "HOME": "/nonexistent",
        ])
    }

    static func client() throws -> S3Client { try S3Client(configuration()) }

    /// A bucket of its own for each test, so tests run side by side.
    static func freshBucket(_ client: S3Client) throws -> String {
        let bucket = "hvt-\(UUID().uuidString.lowercased().prefix(18))"
        try client.createBucket(bucket)
        return bucket
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
