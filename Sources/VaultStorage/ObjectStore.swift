import Synchronization
import VaultCore
import VaultFiles

/// The object store one process talks to: a pool of clients (one per thread at a time) and the
/// version (ETag) of every object read, so that writing one back replaces only the version that
/// was read (docs/conventions.md, "Nothing lost": shared stores are written with compare-and-swap).
public final class ObjectStore: ObjectAccess {
    public let configuration: S3Configuration
    private let idle = Mutex<[S3Client]>([])
    private let versionsRead = Mutex<[S3ObjectName: String]>([:])
    private let retry: RetryPolicy

    /// The store the environment and the AWS files name (``S3Configuration/load(environment:)``).
    public static func connect(environment: [String: String]) throws -> ObjectStore {
        try ObjectStore(S3Configuration.load(environment: environment), retry: RetryPolicy.load(environment: environment))
    }

    public convenience init(_ configuration: S3Configuration) throws {
        try self.init(configuration, retry: RetryPolicy())
    }

    /// `retry` is shared by every client: its quota is the process's (``RetryQuota``).
    package init(_ configuration: S3Configuration, retry: RetryPolicy) throws {
        self.configuration = configuration
        self.retry = retry
        try HTTPClient.requireLibrary()
        // Fails now, with the reason, when there are no credentials.
        let first = try S3Client(configuration, retry: retry)
        idle.withLock { $0.append(first) }
    }

    /// Runs `body` with a client no other thread is using.
    package func withClient<T>(_ body: (S3Client) throws -> T) throws -> T {
        let client = try idle.withLock { $0.popLast() } ?? S3Client(configuration, retry: retry)
        defer { idle.withLock { $0.append(client) } }
        return try body(client)
    }

    /// The whole object, refused past `limit` bytes; its version is remembered, the first time.
    public func read(_ name: S3ObjectName, what: String, limit: Int) throws -> [UInt8] {
        let found: S3Client.Object?
        do {
            found = try withClient { try $0.get(name, limit: limit) }
        } catch let error as VaultError where error.code == .tooLarge {
            throw VaultError.tooLarge(what: what, name: name.description, limit: limit)
        }
        guard let object = found else { throw VaultError.noSuchObject(name.description, what: what) }
        // The first version read is the one a write is conditioned on: a later look at the same
        // object (what is at an output now, before replacing it) must not move the condition to
        // a version another writer made meanwhile.
        versionsRead.withLock { if $0[name] == nil { $0[name] = object.etag } }
        return object.bytes
    }

    /// The version this process read of `name`, if it read it.
    public func versionRead(_ name: S3ObjectName) -> String? {
        versionsRead.withLock { $0[name] }
    }

    /// The object's current version, or nil when there is none (a one-byte ranged read).
    public func currentVersion(_ name: S3ObjectName) throws -> String? {
        try withClient { try $0.get(name, range: 0..<1)?.etag }
    }

    /// The start of the name of the conditional-write probe's object, below the prefix it
    /// checks: no listing of the suite takes it for a vault (``isConditionalWriteProbe(_:)``).
    public static let conditionalWriteProbeName = ".hvt-conditional-write-check-"

    /// Whether an object's key is a conditional-write probe's (a run's, in flight or left by a
    /// run killed mid-probe): a census and a rolling check pass over it.
    public static func isConditionalWriteProbe(_ key: String) -> Bool {
        key.split(separator: "/", omittingEmptySubsequences: false).last?.hasPrefix(conditionalWriteProbeName) == true
    }

    /// Refuses a store that ignores conditional writes, by trying them on a probe object of its
    /// own under `prefix` (created, created again, replaced with a wrong ETag; then deleted):
    /// every "never overwritten" rule of the suite rests on the store refusing the last two.
    /// The probe is the run's first write, before any vault's: a store that ignored `If-Match`
    /// would answer a vault's write as it answers an honoured one, having overwritten it.
    ///
    /// Every request stays under `prefix`, where the run writes anyway, so a policy that allows
    /// writes there only (issue 38) admits it. Nothing is left: every version the probe made is
    /// deleted by its version id (a bucket with versioning keeps a version, and a delete marker,
    /// of an object deleted by name), and by name where the store gave none.
    public func requireConditionalWrites(under prefix: S3ObjectName) throws {
        let probe = prefix.appending(Self.conditionalWriteProbeName + Hex.encode(SystemRandom().bytes(8)))
        try withClient { client in
            // The versions written: nil for one written without a version id.
            var written: [String?] = []
            func attempt(_ byte: UInt8, _ condition: ObjectWriteCondition) throws -> S3Client.WriteOutcome {
                let (outcome, version) = try client.write(probe, [byte], condition: condition)
                if case .written = outcome { written.append(version) }
                return outcome
            }
            let honoured: Bool
            do {
                honoured = try attempt(1, .creating) != .changedMeanwhile
                    && attempt(2, .creating) == .changedMeanwhile
                    && attempt(3, .replacing(etag: "\"00000000000000000000000000000000\"")) == .changedMeanwhile
            } catch {
                try? Self.remove(probe, versions: written, client: client)
                throw error
            }
            // A probe that cannot be removed is an error: the operator's policy lacks the right
            // to delete it (s3:DeleteObject, and s3:DeleteObjectVersion with versioning).
            try Self.remove(probe, versions: written, client: client)
            guard honoured else { throw VaultError.conditionsIgnored(prefix.bucket, endpoint: configuration.endpoint.url) }
        }
    }

    private static func remove(_ probe: S3ObjectName, versions: [String?], client: S3Client) throws {
        for version in Set(versions.compactMap { $0 }).sorted() { try client.delete(probe, versionID: version) }
        if versions.contains(where: { $0 == nil }) { try client.delete(probe) }
    }

    /// Writes `bytes` as `name` under `condition`; a change since then refuses (exit 4) and
    /// writes nothing. The new version is remembered, so a second write follows the first.
    public func write(_ name: S3ObjectName, _ bytes: [UInt8], condition: ObjectWriteCondition) throws {
        switch try withClient({ try $0.put(name, bytes, condition: condition) }) {
        case .written(let etag):
            versionsRead.withLock { $0[name] = etag }
        case .changedMeanwhile:
            throw VaultError.changedSinceRead(name.description)
        }
    }
}

extension VaultError {
    package static func noSuchObject(_ name: String, what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "could not open \(what) '\(name)': there is no such object", file: file, line: line)
    }
}
