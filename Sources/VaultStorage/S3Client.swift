import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// A client of one S3-compatible store. Reads are retried on server errors and dropped
/// connections; a conditional write whose outcome is unknown is never sent again blindly, it is
/// settled by reading the object back (``put(_:_:condition:)``).
///
/// Used by one thread at a time (hence `@unchecked`): ``ObjectStore`` hands each worker its own.
package final class S3Client: @unchecked Sendable {
    package let configuration: S3Configuration
    private let signer: SigV4
    private let http: HTTPClient
    /// How a failed request is retried (the AWS SDKs' modes; ``RetryPolicy``).
    let retry: RetryPolicy
    /// Attempts for one request, the first included.
    var attempts: Int { retry.maxAttempts }
    private let clock: @Sendable () -> Date

    package init(_ configuration: S3Configuration, retry: RetryPolicy = RetryPolicy(), clock: @escaping @Sendable () -> Date = Date.init) throws {
        // Fails now, with the reason, when no source has credentials (the chain is walked once,
        // by the first client; later ones get the shared credentials).
        _ = try configuration.credentials.current()
        self.configuration = configuration
        signer = .s3(region: configuration.region)
        http = try HTTPClient(proxy: configuration.proxy, noProxy: configuration.noProxy)
        self.retry = retry
        self.clock = clock
    }

    package struct Object: Sendable {
        package let bytes: [UInt8]
        package let etag: String
    }

    package struct Listed: Sendable, Hashable {
        package let key: String
        package let etag: String
        package let size: Int
    }

    /// How a replacement or creation is conditioned: never an unconditional overwrite.
    package typealias WriteCondition = ObjectWriteCondition

    package enum WriteOutcome: Sendable, Equatable {
        case written(etag: String)
        /// The object changed (or appeared, or went away) since it was read: nothing was written.
        case changedMeanwhile
    }

    // MARK: Reading

    /// The object, or nil when there is none. `range` asks for some bytes only (a ranged GET);
    /// an object larger than `limit` is refused without being held.
    package func get(_ name: S3ObjectName, range: Range<Int>? = nil, limit: Int = InputLimits.document) throws -> Object? {
        var headers: [(name: String, value: String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        // The transfer stops past the limit; an error document (a few hundred bytes) always fits.
        let response = try retrying(name, limit: limit) { try send("GET", name, headers: headers, responseLimit: max(limit, 1 << 16)) }
        switch response.status {
        case 200, 206:
            guard response.body.count <= limit else { throw VaultError.tooLarge(what: "vault", name: name.description, limit: limit) }
            return Object(bytes: response.body, etag: response.headers["etag"] ?? "")
        case 404 where S3ErrorBody(response.body).code != "NoSuchBucket":
            return nil
        case 416:  // the range starts past the end: the object is shorter than asked
            return Object(bytes: [], etag: response.headers["etag"] ?? "")
        default:
            throw failure(response, name)
        }
    }

    /// One page of the objects under `prefix` (ListObjectsV2), and the token for the next page.
    /// `startAfter` (first page only: a continuation token carries on from where a listing was)
    /// lists only the keys that sort after it, in UTF-8 byte order, as S3 orders keys.
    package func list(_ prefix: S3ObjectName, startAfter: String? = nil, after token: String? = nil,
                      pageSize: Int = 1000) throws -> (objects: [Listed], next: String?) {
        // Keys URL-encoded: XML 1.0 cannot carry a key's control characters (an escape, a BEL),
        // which came back as U+FFFD, named no object, and had a vault there called removed.
        var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix.key), ("max-keys", "\(pageSize)"), ("encoding-type", "url")]
        if let token {
            query.append(("continuation-token", token))
        } else if let startAfter {
            query.append(("start-after", startAfter))
        }
        let bucket = S3ObjectName(bucket: prefix.bucket, key: "")
        let response = try retrying(prefix) { try send("GET", bucket, query: query) }
        guard response.status == 200 else { throw failure(response, prefix) }
        let page = S3ListPage(response.body)
        // A page that says there is more but not where would end the listing early, silently.
        guard !page.isTruncated || page.nextToken?.isEmpty == false else {
            throw VaultError.storageFailed("a truncated listing without a continuation token", prefix.description,
                                           endpoint: configuration.endpoint.url, message: nil)
        }
        return (page.objects, page.isTruncated ? page.nextToken : nil)
    }

    /// Every object under `prefix`, page by page.
    package func listAll(_ prefix: S3ObjectName, _ each: ([Listed]) throws -> Void) throws {
        try listPages(prefix) { page in
            try each(page)
            return true
        }
    }

    /// The objects under `prefix` that sort after `startAfter`, page by page, until `each`
    /// returns false (a listing past the end of a range stops there) or the listing ends.
    /// `nextPageSize` sizes each page after the first from the objects listed so far (1 to
    /// 1000), so a listing that expects to end soon asks for no more than it needs.
    package func listPages(_ prefix: S3ObjectName, startAfter: String? = nil, nextPageSize: ([Listed]) -> Int = { _ in 1000 },
                           _ each: ([Listed]) throws -> Bool) throws {
        var token: String?
        var seen: Set<String> = []
        var pageSize = 1000
        repeat {
            let page = try list(prefix, startAfter: startAfter, after: token, pageSize: pageSize)
            guard try each(page.objects) else { return }
            pageSize = min(1000, max(1, nextPageSize(page.objects)))
            token = page.next
            if let token, !seen.insert(token).inserted {
                throw VaultError.storageFailed("a listing that repeats its continuation token", prefix.description,
                                               endpoint: configuration.endpoint.url, message: nil)
            }
        } while token != nil
    }

    // MARK: Writing

    /// Writes `bytes` under `condition`. When the server's answer is lost (a dropped connection,
    /// a server error after the body went out) the write may or may not have happened, so the
    /// object is read back: our bytes there mean it was written, the version we expected still
    /// there means it was not (and it is sent again), anything else means someone else wrote.
    package func put(_ name: S3ObjectName, _ bytes: [UInt8], condition: WriteCondition) throws -> WriteOutcome {
        try write(name, bytes, condition: condition).outcome
    }

    /// ``put(_:_:condition:)``, and the version id a bucket with versioning gave what was
    /// written (`x-amz-version-id`; nil without versioning, or when the outcome was settled by
    /// reading back): the conditional-write probe deletes exactly the versions it made.
    package func write(_ name: S3ObjectName, _ bytes: [UInt8], condition: WriteCondition) throws -> (outcome: WriteOutcome, versionID: String?) {
        let headers: [(name: String, value: String)] = switch condition {
        case .replacing(let etag): [("If-Match", etag)]
        case .creating: [("If-None-Match", "*")]
        }
        var lastProblem = ""
        var lastAnswered = false
        // Set once a write whose outcome was unknown is sent again: an earlier copy may still
        // land late (after a timeout), so a refusal then is checked against our own bytes.
        var resent = false
        var retries = RetryBudget(retry)
        while true {
            switch try send("PUT", name, headers: headers + [("Content-Type", "application/octet-stream")], body: bytes) {
            case .failure(let error) where error.untrusted:
                throw VaultError.storageUntrusted(configuration.endpoint.url, "writing \(name)", error.message)
            case .failure(let error) where error.isConfiguration:
                throw VaultError.storageMisconfigured(configuration.endpoint.url, "writing \(name)", error.message)
            case .failure(let error):
                lastProblem = error.message
                lastAnswered = false
                guard retries.next(timeout: error.isTimeout) else { throw gaveUp("writing \(name)", lastProblem, answered: lastAnswered, attempts: retries.made) }
                guard error.mayHaveReachedServer else { continue }
                if let settled = try settle(name, bytes, condition) { return (settled, nil) }
                resent = true
            case .success(let response):
                switch response.status {
                case 200:
                    retries.succeeded()
                    return (.written(etag: response.headers["etag"] ?? ""), response.headers["x-amz-version-id"])
                // `where` binds to the last pattern only: each status carries its own.
                case 412 where resent, 409 where resent:
                    if let current = try get(name), current.bytes == bytes { return (.written(etag: current.etag), nil) }
                    return (.changedMeanwhile, nil)
                case 412, 409:  // 409: a concurrent conditional write to the same key won
                    return (.changedMeanwhile, nil)
                case _ where RetryPolicy.isRetryable(response):
                    lastProblem = Self.serverError(response)
                    lastAnswered = true
                    guard retries.next(timeout: false) else { throw gaveUp("writing \(name)", lastProblem, answered: lastAnswered, attempts: retries.made) }
                    if let settled = try settle(name, bytes, condition) { return (settled, nil) }
                    resent = true
                default:
                    throw failure(response, name)
                }
            }
        }
    }

    /// What an unknown write did: `.written`/`.changedMeanwhile` when the object says, nil when
    /// the object is as before the write (so it is safe to send again).
    private func settle(_ name: S3ObjectName, _ bytes: [UInt8], _ condition: WriteCondition) throws -> WriteOutcome? {
        let current = try get(name)
        if let current, current.bytes == bytes { return .written(etag: current.etag) }
        switch (condition, current) {
        case (.creating, nil): return nil
        case (.replacing(let etag), let current?) where current.etag == etag: return nil
        default: return .changedMeanwhile
        }
    }

    /// Deletes an object, or with `versionID` that version of it (only the conditional-write
    /// check's own probe is ever deleted).
    func delete(_ name: S3ObjectName, versionID: String? = nil) throws {
        let query = versionID.map { [(name: "versionId", value: $0)] } ?? []
        let response = try retrying(name, doing: "deleting") { try send("DELETE", name, query: query) }
        guard [200, 204, 404].contains(response.status) else { throw failure(response, name) }
    }

    // MARK: One request

    private func retrying(_ name: S3ObjectName, limit: Int = InputLimits.document, doing what: String = "reading",
                          _ exchange: () throws -> Result<HTTPResponse, HTTPTransportError>) throws -> HTTPResponse {
        var lastProblem = ""
        var lastAnswered = false
        var retries = RetryBudget(retry)
        var timedOut = false
        repeat {
            switch try exchange() {
            case .success(let response) where !RetryPolicy.isRetryable(response):
                retries.succeeded()
                return response
            case .success(let response):
                lastProblem = Self.serverError(response)
                lastAnswered = true
                timedOut = false
            case .failure(let error) where error.tooLarge:
                throw VaultError.tooLarge(what: "vault", name: name.description, limit: limit)
            case .failure(let error) where error.untrusted:
                throw VaultError.storageUntrusted(configuration.endpoint.url, "\(what) \(name)", error.message)
            case .failure(let error) where error.isConfiguration:
                throw VaultError.storageMisconfigured(configuration.endpoint.url, "\(what) \(name)", error.message)
            case .failure(let error):
                lastProblem = error.message
                lastAnswered = false
                timedOut = error.isTimeout
            }
        } while retries.next(timeout: timedOut)
        throw gaveUp("\(what) \(name)", lastProblem, answered: lastAnswered, attempts: retries.made)
    }

    /// "HTTP 503 SlowDown": a server error's status and S3 code.
    private static func serverError(_ response: HTTPResponse) -> String {
        "HTTP \(response.status)" + (S3ErrorBody(response.body).code.map { " \($0)" } ?? "")
    }

    /// Every attempt failed: the store answered 5xx to the last (busy), or was not reached.
    private func gaveUp(_ what: String, _ problem: String, answered: Bool, attempts: Int) -> VaultError {
        answered ? .storageBusy(configuration.endpoint.url, what, problem, attempts: attempts)
                 : .storageUnreachable(configuration.endpoint.url, what, problem)
    }

    /// The answers that say the credentials expired: the provider fetches new ones and the
    /// request is sent again once, instead of failing (a run outlives a role session).
    static let expiredCredentialCodes: Set<String> = ["ExpiredToken", "ExpiredTokenException", "RequestExpired", "InvalidToken", "TokenRefreshRequired"]

    /// Signs with the provider's current credentials and sends; an answer that the credentials
    /// expired makes the provider fetch new ones, and the request goes once more with them.
    /// Internal, not private: the tests make their buckets with it (the tools never make one).
    func send(_ method: String, _ name: S3ObjectName, query: [(name: String, value: String)] = [],
                      headers extra: [(name: String, value: String)] = [], body: [UInt8] = [],
                      responseLimit: Int = InputLimits.listFile) throws -> Result<HTTPResponse, HTTPTransportError> {
        let credentials = try configuration.credentials.current()
        let result = send(method, name, query: query, headers: extra, body: body, responseLimit: responseLimit, credentials: credentials)
        guard case .success(let response) = result, response.status == 400 || response.status == 403,
              let code = S3ErrorBody(response.body).code, Self.expiredCredentialCodes.contains(code),
              let renewed = try configuration.credentials.refresh(after: credentials) else { return result }
        return send(method, name, query: query, headers: extra, body: body, responseLimit: responseLimit, credentials: renewed)
    }

    private func send(_ method: String, _ name: S3ObjectName, query: [(name: String, value: String)], headers extra: [(name: String, value: String)],
                      body: [UInt8], responseLimit: Int, credentials: SigV4.Credentials) -> Result<HTTPResponse, HTTPTransportError> {
        let endpoint = configuration.endpoint
        let host = configuration.pathStyle ? endpoint.authority : "\(name.bucket).\(endpoint.authority)"
        let path = configuration.pathStyle ? "/\(name.bucket)/\(name.key)" : "/\(name.key)"
        let payloadHash = Hex.encode(SHA256.hash(body))
        let amzDate = Self.amzDate(clock())
        var headers: [(name: String, value: String)] = [
            ("Host", host), ("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash),
        ] + extra
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        let request = SigV4.Request(method: method, path: path, query: query, headers: headers, payloadHash: payloadHash)
        guard let authorization = try? signer.authorization(request, amzDate: amzDate, credentials: credentials) else {
            return .failure(HTTPTransportError(message: "could not sign the request", mayHaveReachedServer: false))
        }
        let encodedQuery = SigV4.canonicalQuery(query)
        let url = "\(endpoint.scheme)://\(host)\(SigV4.encodedPath(path))" + (encodedQuery.isEmpty ? "" : "?\(encodedQuery)")
        return http.send(HTTPRequest(method: method, url: url, headers: headers + [("Authorization", authorization)], body: body,
                                     responseLimit: responseLimit))
    }

    /// `YYYYMMDDTHHMMSSZ` in UTC.
    static func amzDate(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// The error a response stands for, naming what failed and never a secret.
    private func failure(_ response: HTTPResponse, _ name: S3ObjectName) -> VaultError {
        let error = S3ErrorBody(response.body)
        let code = error.code ?? "HTTP \(response.status)"
        switch code {
        case "NoSuchBucket":
            return .noSuchBucket(name.bucket, endpoint: configuration.endpoint.url)
        case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed":
            return .storageDenied(code, name.description, keyID: configuration.credentials.accessKeyID ?? "?", source: configuration.credentialSource)
        default:
            return .storageFailed(code, name.description, endpoint: configuration.endpoint.url, message: error.message)
        }
    }
}

extension VaultError.Code {
    /// No credentials for the object store were configured.
    public static let noCredentials = VaultError.Code(name: "noCredentials", category: .configuration)
    /// The object store ignores If-Match / If-None-Match: writing there could lose a device's change.
    public static let conditionsIgnored = VaultError.Code(name: "conditionsIgnored", category: .refused)
    /// The object store refused the credentials or the request.
    public static let storageDenied = VaultError.Code(name: "storageDenied", category: .configuration)
    /// The bucket does not exist.
    public static let noSuchBucket = VaultError.Code(name: "noSuchBucket", category: .configuration)
    /// The object store could not be reached (a refused or dropped connection, a timeout) through
    /// every attempt: a retry later may get through.
    public static let storageUnreachable = VaultError.Code(name: "storageUnreachable", category: .temporary)
    /// The object store answered 5xx (503 SlowDown when it throttles) to every attempt: a retry
    /// later may get through.
    public static let storageBusy = VaultError.Code(name: "storageBusy", category: .temporary)
    /// The object store's TLS certificate could not be verified against the system's trust
    /// store: asking again meets the same certificate, so it is not retried.
    public static let storageUntrusted = VaultError.Code(name: "storageUntrusted", category: .configuration)
    /// The object store answered with an error not otherwise named.
    public static let storageFailed = VaultError.Code(name: "storageFailed", category: .operational)
}

extension VaultError {
    static func noCredentials(_ source: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noCredentials, "no credentials for the object store: found \(source)", file: file, line: line)
    }

    /// Every source of the chain was passed over; `passed` says why each gave nothing.
    static func noCredentials(_ passed: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noCredentials, "no credentials for the object store: tried " + passed.joined(separator: "; "),
                   hint: "set AWS_PROFILE to a profile with credentials, or see docs/object-storage.md for every source read", file: file, line: line)
    }

    static func conditionsIgnored(_ bucket: String, endpoint: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.conditionsIgnored, "the object store at \(endpoint) ignores conditional writes (If-Match, If-None-Match) in the bucket '\(bucket)': "
                   + "a write there could overwrite a change a device made meanwhile; nothing was written",
                   hint: "use a store that honours If-Match and If-None-Match (MinIO, SeaweedFS, Ceph, AWS S3 all do)", file: file, line: line)
    }

    static func storageDenied(_ code: String, _ name: String, keyID: String, source: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.storageDenied, "the object store refused access to \(name) (\(code)) for access key \(keyID) from \(source)", file: file, line: line)
    }

    static func noSuchBucket(_ bucket: String, endpoint: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noSuchBucket, "the bucket '\(bucket)' does not exist at \(endpoint)", file: file, line: line)
    }

    static func storageUnreachable(_ endpoint: String, _ what: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.storageUnreachable, "could not reach the object store at \(endpoint) while \(what): \(problem)", file: file, line: line)
    }

    static func storageBusy(_ endpoint: String, _ what: String, _ answer: String, attempts: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.storageBusy, "the object store at \(endpoint) answered \(answer) to \(attempts) attempt\(attempts == 1 ? "" : "s") while \(what)", file: file, line: line)
    }

    static func storageUntrusted(_ endpoint: String, _ what: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.storageUntrusted, "could not verify the TLS certificate of the object store at \(endpoint) while \(what): \(problem)",
                   hint: "its certificate must chain to a CA in the system trust store (the ca-certificates package, /etc/ssl/certs); a retry meets the same certificate",
                   file: file, line: line)
    }

    static func storageFailed(_ code: String, _ name: String, endpoint: String, message: String?, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.storageFailed, "the object store at \(endpoint) failed on \(name): \(code)\(message.map { " (\($0))" } ?? "")", file: file, line: line)
    }
}
