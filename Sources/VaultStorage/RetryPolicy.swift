import FoundationEssentials
import Glibc
import Synchronization
import VaultCore

/// How a request to the store is retried: the AWS SDKs' retry modes (botocore's
/// `retries/standard.py`), read as the AWS CLI reads them: `AWS_RETRY_MODE` and
/// `AWS_MAX_ATTEMPTS`, else the profile's `retry_mode` and `max_attempts`.
///
/// - standard (the default) and adaptive: 3 attempts; before attempt n+1 a wait of
///   rand(0, 1) × min(2ⁿ⁻¹, 20) seconds (exponential back-off with full jitter); each retry
///   draws from a quota shared by the whole process (500, 5 a retry, 10 after a timeout, given
///   back on success), so a store that is gone stops being retried instead of every request
///   waiting out its attempts. Adaptive's client-side rate limiter is not implemented: it is
///   standard here.
/// - legacy: 5 attempts, rand(0, 1) × 2ⁿ⁻¹ seconds, no quota.
///
/// Retried: HTTP 500, 502, 503, 504 and 429, the throttling and timeout error codes (SlowDown,
/// RequestTimeout …), timeouts and connections that failed or dropped. Never retried: a host
/// that does not resolve or a TLS handshake that fails (a wrong endpoint), which no retry mends.
package struct RetryPolicy: Sendable {
    package enum Mode: String, Sendable, CaseIterable {
        case standard, adaptive, legacy
    }

    package let mode: Mode
    /// Attempts for one request, the first included (1 = never retried).
    package let maxAttempts: Int
    /// nil in legacy mode.
    package let quota: RetryQuota?
    /// Waits a number of seconds; a test passes one that records instead of sleeping.
    package let sleep: @Sendable (Double) -> Void
    /// A number in 0...1 for the jitter; a test passes a fixed one.
    package let random: @Sendable () -> Double

    package static let maximumBackoff = 20.0
    /// The largest `AWS_MAX_ATTEMPTS` taken: past it a store that is gone holds a run for hours.
    package static let attemptsAtMost = 20

    package init(mode: Mode = .standard, maxAttempts: Int? = nil, quota: RetryQuota? = nil,
                 sleep: @escaping @Sendable (Double) -> Void = RetryPolicy.sleepSeconds,
                 random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }) {
        self.mode = mode
        self.maxAttempts = maxAttempts ?? (mode == .legacy ? 5 : 3)
        self.quota = mode == .legacy ? nil : quota ?? RetryQuota()
        self.sleep = sleep
        self.random = random
    }

    /// The wait before the attempt after attempt `attempt` (1-based) failed.
    package func delay(after attempt: Int) -> Double {
        let growth = pow(2, Double(max(0, attempt - 1)))
        return random() * (mode == .legacy ? growth : min(growth, Self.maximumBackoff))
    }

    @Sendable package static func sleepSeconds(_ seconds: Double) {
        guard seconds > 0 else { return }
        var wait = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1_000_000_000))
        var left = timespec()
        // A signal (SIGTERM asking the run to stop) interrupts the wait; the rest is slept, since
        // the request in flight finishes before the run stops.
        while nanosleep(&wait, &left) != 0, errno == EINTR { wait = left }
    }

    /// The mode and attempts the environment and the profile name (the profile as
    /// ``S3Configuration/load(environment:)`` finds it); a value that is not one the SDKs take is
    /// refused, naming where it came from.
    package static func load(environment: [String: String]) throws -> RetryPolicy {
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let profileName = env("AWS_PROFILE") ?? "default"
        let configPath = env("AWS_CONFIG_FILE") ?? "\(env("HOME") ?? "/nonexistent")/.aws/config"
        var profile: ProfileFile.Section?
        if env("AWS_RETRY_MODE") == nil || env("AWS_MAX_ATTEMPTS") == nil {
            profile = try ProfileFile.read(configPath)?.section(profileName == "default" ? "default" : "profile \(profileName)")
        }
        let modeText = env("AWS_RETRY_MODE").map { ($0, "AWS_RETRY_MODE") } ?? profile?["retry_mode"].map { ($0, "retry_mode in \(configPath)") }
        let attemptsText = env("AWS_MAX_ATTEMPTS").map { ($0, "AWS_MAX_ATTEMPTS") } ?? profile?["max_attempts"].map { ($0, "max_attempts in \(configPath)") }
        var mode = Mode.standard
        if let (text, source) = modeText {
            guard let named = Mode(rawValue: text.lowercased()) else { throw VaultError.badRetrySetting(source, expected: "standard, adaptive or legacy") }
            mode = named
        }
        var attempts: Int?
        if let (text, source) = attemptsText {
            guard let number = Int(text), (1...attemptsAtMost).contains(number) else {
                throw VaultError.badRetrySetting(source, expected: "a number of attempts from 1 to \(attemptsAtMost)")
            }
            attempts = number
        }
        return RetryPolicy(mode: mode, maxAttempts: attempts)
    }
}

/// The retry quota of the standard mode: a bucket of 500 tokens shared by every request of a
/// process. A retry takes 5 (10 after a timeout); a request that succeeds gives back what its
/// retry took, or 1 when it needed none. A store that fails everything empties it after 100
/// retries, and from then on requests fail at their first attempt until one succeeds again.
package final class RetryQuota: Sendable {
    package static let capacity = 500
    package static let retryCost = 5
    package static let timeoutRetryCost = 10
    package static let noRetryIncrement = 1

    private let available: Mutex<Int>

    package init(_ capacity: Int = RetryQuota.capacity) { available = Mutex(capacity) }

    package var tokens: Int { available.withLock { $0 } }

    /// Takes `amount` for a retry; false (and nothing taken) when fewer are left.
    package func acquire(_ amount: Int) -> Bool {
        available.withLock { tokens in
            guard tokens >= amount else { return false }
            tokens -= amount
            return true
        }
    }

    package func release(_ amount: Int) {
        available.withLock { $0 = min(Self.capacity, $0 + amount) }
    }
}

extension RetryPolicy {
    /// Error codes in an S3 error document that the SDKs retry: throttling and timeouts.
    static let retryableCodes: Set<String> = [
        "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException", "TooManyRequestsException",
        "ProvisionedThroughputExceededException", "TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
        "LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete", "EC2ThrottledException",
        "RequestTimeout", "RequestTimeoutException",
    ]

    /// Whether an answer is one the SDKs retry.
    static func isRetryable(_ response: HTTPResponse) -> Bool {
        [500, 502, 503, 504, 429].contains(response.status)
            || (response.status >= 400 && S3ErrorBody(response.body).code.map(retryableCodes.contains) == true)
    }
}

extension VaultError.Code {
    /// The endpoint cannot be used at all: its host does not resolve, or TLS to it fails.
    public static let storageMisconfigured = VaultError.Code(name: "storageMisconfigured", category: .configuration)
    /// `AWS_RETRY_MODE`, `AWS_MAX_ATTEMPTS` or the profile's `retry_mode`/`max_attempts` is not a value the SDKs take.
    public static let badRetrySetting = VaultError.Code(name: "badRetrySetting", category: .configuration)
}

extension VaultError {
    static func storageMisconfigured(_ endpoint: String, _ what: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.storageMisconfigured, "could not use the object store at \(endpoint) while \(what): \(problem)",
                   hint: "check the endpoint (AWS_ENDPOINT_URL, endpoint_url) and its certificate: no retry gets past this", file: file, line: line)
    }

    static func badRetrySetting(_ source: String, expected: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badRetrySetting, "the retry setting \(source) is not \(expected)", file: file, line: line)
    }
}

/// The retries of one request under a ``RetryPolicy``.
struct RetryBudget {
    let policy: RetryPolicy
    /// Attempts made so far, the first included.
    private(set) var made = 1
    /// What the last retry took from the quota, given back when the request succeeds.
    private var taken = 0

    init(_ policy: RetryPolicy) { self.policy = policy }

    /// Whether to try again after a failed attempt: under the attempts and with the quota's
    /// leave. Waits the back-off before saying yes.
    mutating func next(timeout: Bool) -> Bool {
        guard made < policy.maxAttempts else { return false }
        if let quota = policy.quota {
            let cost = timeout ? RetryQuota.timeoutRetryCost : RetryQuota.retryCost
            guard quota.acquire(cost) else { return false }
            taken = cost
        }
        policy.sleep(policy.delay(after: made))
        made += 1
        return true
    }

    func succeeded() {
        policy.quota?.release(taken > 0 ? taken : RetryQuota.noRetryIncrement)
    }
}
