import Foundation
import Synchronization
import Testing
@testable import VaultCore
@testable import VaultFiles
@testable import VaultStorage

/// The AWS SDKs' retry modes (botocore's retries/standard.py): back-off, attempts, quota, and the
/// settings read from the environment and the profile. The sleeper records instead of waiting.
@Suite struct RetryPolicyTests {
    /// A policy whose waits are recorded, with the jitter fixed at `random`.
    static func recording(_ mode: RetryPolicy.Mode = .standard, attempts: Int? = nil, random: Double = 1,
                          quota: RetryQuota? = nil) -> (RetryPolicy, Waits) {
        let waits = Waits()
        return (RetryPolicy(mode: mode, maxAttempts: attempts, quota: quota, sleep: { seconds in waits.log.withLock { $0.append(seconds) } },
                            random: { random }), waits)
    }

    /// The waits a policy asked for, in order.
    final class Waits: Sendable {
        let log = Mutex<[Double]>([])
        func withLock<T>(_ body: (inout [Double]) -> T) -> T { log.withLock { body(&$0) } }
    }

    @Test func standardBacksOffExponentiallyWithFullJitterUpTo20Seconds() {
        let (top, _) = Self.recording(random: 1)
        #expect((1...8).map(top.delay(after:)) == [1, 2, 4, 8, 16, 20, 20, 20])
        let (half, _) = Self.recording(random: 0.5)
        #expect((1...6).map(half.delay(after:)) == [0.5, 1, 2, 4, 8, 10])
        let (zero, _) = Self.recording(random: 0)
        #expect((1...6).allSatisfy { zero.delay(after: $0) == 0 })
        let (legacy, _) = Self.recording(.legacy, random: 1)
        #expect((1...6).map(legacy.delay(after:)) == [1, 2, 4, 8, 16, 32])
    }

    @Test func defaultsAreTheSDKs() {
        #expect(RetryPolicy().maxAttempts == 3 && RetryPolicy().quota != nil)
        #expect(RetryPolicy(mode: .adaptive).maxAttempts == 3)
        #expect(RetryPolicy(mode: .legacy).maxAttempts == 5 && RetryPolicy(mode: .legacy).quota == nil)
    }

    @Test func aBudgetWaitsBeforeEachRetryAndStopsAtTheAttempts() {
        for attempts in 1...6 {
            let (policy, waits) = Self.recording(attempts: attempts, random: 1)
            var budget = RetryBudget(policy)
            var retries = 0
            while budget.next(timeout: false) { retries += 1 }
            #expect(retries == attempts - 1 && budget.made == attempts)
            #expect(waits.withLock { $0 } == (0..<(attempts - 1)).map { min(20, pow(2, Double($0))) })
        }
    }

    @Test func theQuotaRunsOutAndIsGivenBack() {
        let quota = RetryQuota()
        let (policy, waits) = Self.recording(attempts: 3, random: 0, quota: quota)
        // A store that fails everything: 2 retries a request, 5 tokens each, until 500 are spent.
        var requests = 0
        while quota.tokens >= RetryQuota.retryCost {
            var budget = RetryBudget(policy)
            while budget.next(timeout: false) {}
            requests += 1
        }
        #expect(requests == 50 && quota.tokens == 0 && waits.withLock { $0.count } == 100)
        var starved = RetryBudget(policy)
        #expect(!starved.next(timeout: false) && starved.made == 1)
        // A success without a retry gives 1 back; one after a retry gives back what it took.
        RetryBudget(policy).succeeded()
        #expect(quota.tokens == 1)
        quota.release(20)
        var timedOut = RetryBudget(policy)
        #expect(timedOut.next(timeout: true) && quota.tokens == 21 - RetryQuota.timeoutRetryCost)
        timedOut.succeeded()
        #expect(quota.tokens == 21)
        quota.release(10_000)
        #expect(quota.tokens == RetryQuota.capacity)
    }

    @Test func theEnvironmentComesBeforeTheProfile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hvt-retry-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = folder + "/config"
        try Array("[default]\nmax_attempts = 7\nretry_mode = legacy\n[profile ops]\nretry_mode = adaptive\n".utf8)
            .withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: config)) }
        let base = ["AWS_CONFIG_FILE": config, "HOME": "/nonexistent"]
        let profile = try RetryPolicy.load(environment: base)
        #expect(profile.mode == .legacy && profile.maxAttempts == 7)
        let ops = try RetryPolicy.load(environment: base.merging(["AWS_PROFILE": "ops"]) { $1 })
        #expect(ops.mode == .adaptive && ops.maxAttempts == 3)
        let environment = try RetryPolicy.load(environment: base.merging(["AWS_MAX_ATTEMPTS": "2", "AWS_RETRY_MODE": "Standard"]) { $1 })
        #expect(environment.mode == .standard && environment.maxAttempts == 2)
        let none = try RetryPolicy.load(environment: ["HOME": "/nonexistent"])
        #expect(none.mode == .standard && none.maxAttempts == 3)
        for (name, value) in [("AWS_MAX_ATTEMPTS", "0"), ("AWS_MAX_ATTEMPTS", "21"), ("AWS_MAX_ATTEMPTS", "three"), ("AWS_RETRY_MODE", "fast")] {
            #expect(throws: VaultError(.badRetrySetting, "")) { try RetryPolicy.load(environment: base.merging([name: value]) { $1 }) }
        }
        #expect(VaultError.Code.badRetrySetting.category == .configuration)
    }

    /// A refused connection is retried with the policy's waits; a host that does not resolve is
    /// a configuration that cannot work: one attempt, no wait, exit 78's category.
    @Test func refusedIsRetriedAnUnknownHostIsNot() throws {
        let credentials = SigV4.Credentials(accessKeyID: "AKID", secret: .test(Array("secret".utf8)))
        func client(_ endpoint: String, _ policy: RetryPolicy) throws -> S3Client {
            try S3Client(S3Configuration(endpoint: .init(parsing: endpoint), region: "us-east-1", credentials: credentials,
                                         pathStyle: true, credentialSource: "a test"), retry: policy)
        }
        let (refusing, waits) = Self.recording(attempts: 4, random: 0.25)
        do {
            _ = try client("http://127.0.0.1:1", refusing).get(S3ObjectName(bucket: "b", key: "x"))
            Issue.record("a closed port answered")
        } catch let error as VaultError {
            #expect(error.code == .storageUnreachable && error.code.category == .temporary)
        }
        #expect(waits.withLock { $0 } == [0.25, 0.5, 1])
        let (resolving, none) = Self.recording(attempts: 4)
        do {
            _ = try client("http://no-such-host.invalid", resolving).get(S3ObjectName(bucket: "b", key: "x"))
            Issue.record("an unknown host answered")
        } catch let error as VaultError {
            #expect(error.code == .storageMisconfigured && error.code.category == .configuration)
            #expect(error.reason.contains("no-such-host.invalid"))
        }
        #expect(none.withLock { $0 }.isEmpty)
        for code in [VaultError.Code.storageDenied, .noSuchBucket, .noCredentials] { #expect(code.category == .configuration) }
    }
}
