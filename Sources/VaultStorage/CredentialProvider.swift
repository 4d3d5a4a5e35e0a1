import FoundationEssentials
import Synchronization
import VaultCore

/// Credentials as a source hands them out, and when they stop working (nil: never, as static
/// keys).
package struct ExpiringCredentials: Sendable {
    package let credentials: SigV4.Credentials
    package let expiration: Date?

    package init(_ credentials: SigV4.Credentials, expiration: Date? = nil) {
        self.credentials = credentials
        self.expiration = expiration
    }
}

/// The source the chain settled on: its name for messages, the credentials it gave, and how to
/// ask it again when they near their expiry.
package struct ResolvedCredentials: Sendable {
    package let source: String
    package let first: ExpiringCredentials
    package let fetchAgain: @Sendable () throws -> ExpiringCredentials

    package init(source: String, first: ExpiringCredentials, fetchAgain: @escaping @Sendable () throws -> ExpiringCredentials) {
        self.source = source
        self.first = first
        self.fetchAgain = fetchAgain
    }
}

/// The credentials every client of one store signs with, shared by all worker threads.
///
/// The chain is walked once, on first use; temporary credentials are fetched again before they
/// expire, as botocore's `RefreshableCredentials` does: from 15 minutes before the expiry an
/// attempt is made and a failure keeps the current ones (advisory), from 10 minutes before a
/// failure is an error (mandatory). A refresh happens under the lock, so a hundred workers
/// asking at once make one fetch; after an advisory attempt fails the next waits a minute, so
/// a source that is down does not make every request of a run wait for its timeouts.
package final class CredentialProvider: Sendable {
    static let advisoryRefresh: TimeInterval = 15 * 60
    static let mandatoryRefresh: TimeInterval = 10 * 60
    static let advisoryRetryDelay: TimeInterval = 60

    private struct State: Sendable {
        var resolved: ResolvedCredentials?
        var current: ExpiringCredentials?
        /// Fetches made, the first included (tests count them).
        var fetches = 0
        /// No advisory attempt before this (one failed).
        var quietUntil: Date?
    }

    private let state = Mutex(State())
    private let resolve: @Sendable () throws -> ResolvedCredentials
    private let clock: @Sendable () -> Date

    package init(clock: @escaping @Sendable () -> Date = Date.init, resolve: @escaping @Sendable () throws -> ResolvedCredentials) {
        self.resolve = resolve
        self.clock = clock
    }

    /// Fixed credentials (a test's, or none at all: `source` then says where nothing was found).
    package convenience init(fixed credentials: SigV4.Credentials?, source: String) {
        self.init {
            guard let credentials else { throw VaultError.noCredentials(source) }
            return ResolvedCredentials(source: source, first: ExpiringCredentials(credentials)) { ExpiringCredentials(credentials) }
        }
    }

    /// The credentials to sign with now, fetched first or again when they near their expiry.
    package func current() throws -> SigV4.Credentials {
        try state.withLock { state in
            let now = clock()
            guard let resolved = state.resolved, let current = state.current else {
                let resolved = try resolve()
                state.fetches += 1
                var first = resolved.first
                // Expired when given: fetched again once, as botocore refreshes before first use.
                if Self.isExpired(first, at: now) {
                    state.fetches += 1
                    first = try resolved.fetchAgain()
                    try Self.requireUnexpired(first, at: now, source: resolved.source)
                }
                state.resolved = resolved
                state.current = first
                return first.credentials
            }
            guard let expiration = current.expiration else { return current.credentials }
            let left = expiration.timeIntervalSince(now)
            guard left < Self.advisoryRefresh else { return current.credentials }
            let mandatory = left < Self.mandatoryRefresh
            if !mandatory, let quietUntil = state.quietUntil, now < quietUntil { return current.credentials }
            do {
                state.fetches += 1
                let fresh = try resolved.fetchAgain()
                try Self.requireUnexpired(fresh, at: now, source: resolved.source)
                state.current = fresh
                state.quietUntil = nil
                return fresh.credentials
            } catch where !mandatory {
                state.quietUntil = now + Self.advisoryRetryDelay
                return current.credentials
            }
        }
    }

    /// The store refused `used` as expired: fetches again, unless another thread already did
    /// (then its credentials are returned). Nil when the source gives the same key again, so
    /// a retry would only be refused again.
    package func refresh(after used: SigV4.Credentials) throws -> SigV4.Credentials? {
        try state.withLock { state in
            guard let resolved = state.resolved, let current = state.current else { return nil }
            if !Self.same(current.credentials, used) { return current.credentials }
            state.fetches += 1
            let fresh = try resolved.fetchAgain()
            state.current = fresh
            return Self.same(fresh.credentials, used) ? nil : fresh.credentials
        }
    }

    private static func isExpired(_ credentials: ExpiringCredentials, at now: Date) -> Bool {
        credentials.expiration.map { $0 <= now } ?? false
    }

    /// Credentials still expired after a refresh are an error, as botocore's ("the refreshed
    /// credentials are still expired"): used, every request was refused and made another fetch
    /// (issue 44).
    private static func requireUnexpired(_ credentials: ExpiringCredentials, at now: Date, source: String) throws {
        guard !isExpired(credentials, at: now) else {
            throw VaultError.credentialSourceFailed(source, "gave credentials that were still expired after a refresh")
        }
    }

    private static func same(_ a: SigV4.Credentials, _ b: SigV4.Credentials) -> Bool {
        a.accessKeyID == b.accessKeyID && a.sessionToken == b.sessionToken && a.secret == b.secret
    }

    /// Where the credentials came from, once they were found; for messages.
    package var source: String? { state.withLock { $0.resolved?.source } }

    /// The access key id in use, if any was found yet (public; for messages).
    package var accessKeyID: String? { state.withLock { $0.current?.credentials.accessKeyID } }

    package var fetches: Int { state.withLock { $0.fetches } }
}
