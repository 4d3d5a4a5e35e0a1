import FoundationEssentials
import Synchronization
import VaultCore
import VaultFiles

// The sources of temporary credentials the chain (CredentialChain.swift) asks. Each answer is
// parsed into SecretBytes at once; no error quotes a token, a key or a process's output.

/// The most a credentials answer may hold: a few kilobytes in practice.
private let answerLimit = 1 << 16

/// One request through the suite's libcurl owner, with a client of its own (a fetch happens
/// under the provider's lock, rarely, and never on a worker's connection).
private func exchange(_ request: HTTPRequest, proxy: String? = nil, noProxy: String? = nil, timeoutMilliseconds: Int,
                      attempts: Int) -> Result<HTTPResponse, HTTPTransportError> {
    let client: HTTPClient
    do {
        client = try HTTPClient(proxy: proxy, noProxy: noProxy, connectTimeoutMilliseconds: timeoutMilliseconds,
                                timeoutMilliseconds: 4 * timeoutMilliseconds)
    } catch {
        return .failure(HTTPTransportError(message: (error as? VaultError)?.reason ?? "libcurl could not be initialised", mayHaveReachedServer: false))
    }
    var result = client.send(request)
    for _ in 1..<max(1, attempts) {
        switch result {
        case .success(let response) where response.status < 500: return result
        default: result = client.send(request)
        }
    }
    return result
}

/// Whether a credential source's answer is a failure of its own that a later retry may get past
/// (after `exchange`'s attempts): a 5xx, or throttling (429, STS's `Throttling`, and
/// `IDPCommunicationError`, the identity provider out of reach, which the SDKs retry too). Any
/// other refusal (`AccessDenied`, `InvalidIdentityToken`, `ExpiredTokenException`, a 401) is
/// configuration.
func isBusy(_ response: HTTPResponse) -> Bool {
    if response.status >= 500 || response.status == 429 { return true }
    let code = S3ErrorBody(response.body).code
    return ["Throttling", "ThrottlingException", "RequestLimitExceeded", "IDPCommunicationError"].contains(code ?? "")
}

/// `2026-11-26T13:00:00Z`, with or without fractional seconds (RFC 3339).
func parseExpiration(_ text: String) -> Date? {
    Timestamp(rfc3339: text).map { Date(timeIntervalSince1970: Double($0.seconds) + Double($0.nanoseconds) / 1e9) }
}

/// The JSON object `bytes` hold; nil when they hold anything else.
private func jsonObject(_ bytes: [UInt8]) -> JSONValue? {
    guard let value = try? JSONValue(parsing: bytes), case .object = value else { return nil }
    return value
}

extension JSONValue {
    /// The text of a JSON string; nil for any other value.
    fileprivate var text: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// The value of a JSON number; nil for any other value.
    fileprivate var number: Double? {
        guard case .number(let text) = self else { return nil }
        return Double(text)
    }
}

/// Credentials in the JSON shape the container endpoint, instance metadata and
/// credential_process share: AccessKeyId, SecretAccessKey, Token or SessionToken, Expiration.
private func credentials(fromJSON body: [UInt8], tokenKey: String, what: String) throws -> ExpiringCredentials {
    guard let object = jsonObject(body) else {
        throw VaultError.credentialSourceFailed(what, "the answer is not a JSON object")
    }
    guard let id = object["AccessKeyId"]?.text, let secret = object["SecretAccessKey"]?.text, !id.isEmpty, !secret.isEmpty else {
        throw VaultError.credentialSourceFailed(what, "the answer has no AccessKeyId and SecretAccessKey")
    }
    var expiration: Date?
    if let text = object["Expiration"]?.text {
        guard let date = parseExpiration(text) else { throw VaultError.credentialSourceFailed(what, "the answer's Expiration is not an ISO 8601 time") }
        expiration = date
    }
    let token = object[tokenKey]?.text.flatMap { $0.isEmpty ? nil : $0 }
    return ExpiringCredentials(try SigV4.Credentials(accessKeyID: id, secret: .fromText(secret), sessionToken: token), expiration: expiration)
}

/// Why an HTTP source gave nothing: the status and, for an XML or JSON error, its code.
private func httpProblem(_ response: HTTPResponse) -> String {
    let code = S3ErrorBody(response.body).code
        ?? jsonObject(response.body)?["Code"]?.text
    return "HTTP \(response.status)" + (code.map { " \($0)" } ?? "")
}

// MARK: STS

/// AWS STS's query API: AssumeRole (signed with the source's credentials) and
/// AssumeRoleWithWebIdentity (unsigned: the token is the proof), each a form POSTed to the
/// regional endpoint (or `AWS_ENDPOINT_URL_STS`), answered in XML.
struct STS: Sendable {
    let settings: AWSSettings

    var url: String { settings.endpoint(service: "sts").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? "https://sts.\(settings.region).amazonaws.com" }

    func assumeRole(role: String, sessionName: String, externalID: String?, duration: String?, signedWith source: SigV4.Credentials,
                    what: String) throws -> ExpiringCredentials {
        var form = [("Action", "AssumeRole"), ("Version", "2011-06-15"), ("RoleArn", role), ("RoleSessionName", sessionName)]
        if let externalID { form.append(("ExternalId", externalID)) }
        if let duration { form.append(("DurationSeconds", duration)) }
        return try call(form, signedWith: source, what: what)
    }

    func assumeRoleWithWebIdentity(role: String, sessionName: String, tokenFile: String, what: String) throws -> ExpiringCredentials {
        var token: [UInt8]
        do {
            token = try BoundedRead.file(tokenFile, limit: answerLimit, what: "web identity token file")
        } catch let error as VaultError {
            throw VaultError.credentialSourceFailed(what, error.reason)
        }
        defer { token.zeroize() }
        let text = Substring(decoding: token, as: UTF8.self).trimmingASCIIWhitespace()
        guard !text.isEmpty else { throw VaultError.credentialSourceFailed(what, "the token file is empty") }
        return try call([("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", role),
                         ("RoleSessionName", sessionName), ("WebIdentityToken", text)], signedWith: nil, what: what)
    }

    private func call(_ form: [(String, String)], signedWith source: SigV4.Credentials?, what: String) throws -> ExpiringCredentials {
        let endpoint: S3Configuration.Endpoint
        do {
            endpoint = try S3Configuration.Endpoint(parsing: url)
        } catch {
            throw VaultError.credentialSourceFailed(what, "the STS endpoint is not an http:// or https:// URL of a host")
        }
        var body = Array(SigV4.canonicalQuery(form.map { (name: $0.0, value: $0.1) }).utf8)
        defer { body.zeroize() }
        var headers: [(name: String, value: String)] = [("Host", endpoint.authority), ("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")]
        if let source {
            let amzDate = S3Client.amzDate(Date())
            headers.append(("X-Amz-Date", amzDate))
            if let token = source.sessionToken { headers.append(("X-Amz-Security-Token", token)) }
            let request = SigV4.Request(method: "POST", path: "/", headers: headers, payloadHash: Hex.encode(SHA256.hash(body)))
            let signer = SigV4(region: settings.region, service: "sts", normalizesPath: true)
            headers.append(("Authorization", try signer.authorization(request, amzDate: amzDate, credentials: source)))
        }
        let request = HTTPRequest(method: "POST", url: endpoint.url + "/", headers: headers, body: body, responseLimit: answerLimit)
        let response: HTTPResponse
        switch exchange(request, proxy: settings.proxy(for: endpoint.url), noProxy: settings.noProxy, timeoutMilliseconds: 10_000, attempts: 3) {
        case .success(let answer): response = answer
        case .failure(let problem): throw VaultError.credentialSourceUnreachable(what, "STS at \(endpoint.url)", problem.message)
        }
        if isBusy(response) { throw VaultError.credentialSourceBusy(what, "STS at \(endpoint.url) answered \(httpProblem(response))") }
        guard response.status == 200 else {
            let error = S3ErrorBody(response.body)
            throw VaultError.credentialSourceFailed(what, "STS at \(endpoint.url) answered \(httpProblem(response))"
                                                    + (error.message.map { ": \($0)" } ?? ""))
        }
        let text = String(decoding: response.body, as: UTF8.self)
        guard let block = XMLText.elements("Credentials", in: text[...], limit: 1).first,
              let id = XMLText.first("AccessKeyId", in: block), let secret = XMLText.first("SecretAccessKey", in: block) else {
            throw VaultError.credentialSourceFailed(what, "STS at \(endpoint.url) answered without credentials")
        }
        let expiration = XMLText.first("Expiration", in: block).flatMap(parseExpiration)
        return ExpiringCredentials(try SigV4.Credentials(accessKeyID: id, secret: .fromText(secret), sessionToken: XMLText.first("SessionToken", in: block)),
                                   expiration: expiration)
    }
}

// MARK: SSO

/// IAM Identity Center through the AWS CLI's login: the access token `aws sso login` cached in
/// `~/.aws/sso/cache/<sha1 of the session name or start URL>.json`, exchanged at the SSO portal
/// for the role's credentials. The token is never refreshed here; an expired one is an error
/// asking for `aws sso login`.
struct SSO: Sendable {
    let settings: AWSSettings
    let profile: String
    let accountID: String
    let roleName: String
    let region: String
    let cacheKey: String
    let login: String

    init(settings: AWSSettings, profile: String, values: [String: String]) throws {
        let what = "profile '\(profile)' SSO"
        var startURL = values["sso_start_url"], region = values["sso_region"]
        if let session = values["sso_session"] {
            guard let section = settings.config?.section("sso-session \(session)") else {
                throw VaultError.credentialSourceFailed(what, "its sso_session '\(session)' has no [sso-session \(session)] section in \(settings.configPath)")
            }
            startURL = section["sso_start_url"] ?? startURL
            region = section["sso_region"] ?? region
        }
        let missing = [("sso_start_url", startURL), ("sso_region", region), ("sso_account_id", values["sso_account_id"]),
                       ("sso_role_name", values["sso_role_name"])].filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty, let startURL, let region, let accountID = values["sso_account_id"], let roleName = values["sso_role_name"] else {
            throw VaultError.credentialSourceFailed(what, "the profile lacks " + missing.joined(separator: ", "))
        }
        self.settings = settings
        self.profile = profile
        self.accountID = accountID
        self.roleName = roleName
        self.region = region
        cacheKey = Hex.encode(SHA1.hash(Array((values["sso_session"] ?? startURL).utf8)))
        // A command a person pastes: names quoted as the shell reads them back.
        login = values["sso_session"] != nil ? "aws sso login --sso-session \(ShellWord.quotedIfNeeded(values["sso_session"]!))"
            : "aws sso login --profile \(ShellWord.quotedIfNeeded(profile))"
    }

    func fetch() throws -> ExpiringCredentials {
        let what = "profile '\(profile)' SSO"
        let cachePath = "\(settings.home)/.aws/sso/cache/\(cacheKey).json"
        guard settings.fileExists(cachePath) else {
            throw VaultError.ssoLoginNeeded(profile: profile, "there is no cached SSO token (\(cachePath))", login: login)
        }
        var cached = try BoundedRead.file(cachePath, limit: answerLimit, what: "SSO token cache")
        defer { cached.zeroize() }
        guard let object = jsonObject(cached), let token = object["accessToken"]?.text, let expiresText = object["expiresAt"]?.text else {
            throw VaultError.credentialSourceFailed(what, "the SSO token cache \(cachePath) has no accessToken and expiresAt")
        }
        // The CLI writes "…Z"; older versions "…UTC".
        guard let expires = parseExpiration(expiresText.hasSuffix("UTC") ? String(expiresText.dropLast(3)) + "Z" : expiresText) else {
            throw VaultError.credentialSourceFailed(what, "the SSO token cache \(cachePath) has an unreadable expiresAt")
        }
        guard expires > Date() else {
            throw VaultError.ssoLoginNeeded(profile: profile, "the cached SSO token expired at \(expiresText)", login: login)
        }
        let base = settings.endpoint(service: "sso").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? "https://portal.sso.\(region).amazonaws.com"
        let query = SigV4.canonicalQuery([("account_id", accountID), ("role_name", roleName)])
        let request = HTTPRequest(method: "GET", url: "\(base)/federation/credentials?\(query)",
                                  headers: [("x-amz-sso_bearer_token", token)], responseLimit: answerLimit)
        let response: HTTPResponse
        switch exchange(request, proxy: settings.proxy(for: base), noProxy: settings.noProxy, timeoutMilliseconds: 10_000, attempts: 3) {
        case .success(let answer): response = answer
        case .failure(let problem): throw VaultError.credentialSourceUnreachable(what, "the SSO portal at \(base)", problem.message)
        }
        if isBusy(response) { throw VaultError.credentialSourceBusy(what, "the SSO portal at \(base) answered \(httpProblem(response))") }
        if response.status == 401 || response.status == 403 {
            throw VaultError.ssoLoginNeeded(profile: profile, "the SSO portal refused the cached token (\(httpProblem(response)))", login: login)
        }
        guard response.status == 200,
              let role = jsonObject(response.body)?["roleCredentials"], case .object = role,
              let id = role["accessKeyId"]?.text, let secret = role["secretAccessKey"]?.text else {
            throw VaultError.credentialSourceFailed(what, "the SSO portal at \(base) answered \(httpProblem(response)) without role credentials")
        }
        let expiration = role["expiration"]?.number.map { Date(timeIntervalSince1970: $0 / 1000) }
        return ExpiringCredentials(try SigV4.Credentials(accessKeyID: id, secret: .fromText(secret), sessionToken: role["sessionToken"]?.text),
                                   expiration: expiration)
    }
}

// MARK: credential_process

/// A profile's `credential_process`: the command split into words as botocore splits it (POSIX
/// shell quoting, no shell run), its standard output read (bounded) as the JSON of Version 1,
/// its standard error passed through to ours. The output is never quoted in an error.
struct CredentialProcess: Sendable {
    let arguments: [String]
    let profile: String
    let environment: [String: String]

    init(command: String, profile: String, environment: [String: String]) throws {
        self.profile = profile
        // Never the credentials the tool holds (issue 44): a process that prints credentials
        // needs its profile's settings, not another source's secret.
        self.environment = ChildEnvironment.minimal(from: environment)
        guard let words = Self.split(command), !words.isEmpty else {
            throw VaultError.credentialSourceFailed("the credential_process of profile '\(profile)'", "the command has an unbalanced quote or is empty")
        }
        arguments = words
    }

    /// How long it may take, as long as a key command (botocore waits forever; a job engine's
    /// run would then hang until the engine's own limit, holding its shard).
    static let timeoutSeconds = 30.0

    var what: String { "the credential_process of profile '\(profile)' (\(arguments[0]))" }

    func run() throws -> ExpiringCredentials {
        let child: ChildProcess
        do {
            child = try ChildProcess.run(try executable(), arguments: Array(arguments.dropFirst()), environment: environment, input: nil,
                                         outputLimit: answerLimit, errorLimit: nil, timeout: Self.timeoutSeconds)
        } catch is ChildProcessStartError {
            throw VaultError.credentialSourceFailed(what, "could not be started")
        }
        var received = child.output
        defer { received.zeroize() }
        if received.count > answerLimit { throw VaultError.credentialSourceFailed(what, "printed more than \(answerLimit) bytes") }
        switch child.termination {
        case .exited(0): break
        case .exited(let status): throw VaultError.credentialSourceFailed(what, "exited with status \(status)")
        case .killed(let signal): throw VaultError.credentialSourceFailed(what, "was killed by signal \(signal)")
        case .timedOut: throw VaultError.credentialSourceFailed(what, "did not finish within \(Int(Self.timeoutSeconds)) seconds")
        }
        guard let object = jsonObject(received) else {
            throw VaultError.credentialSourceFailed(what, "its output is not a JSON object")
        }
        guard object["Version"]?.number == 1 else {
            throw VaultError.credentialSourceFailed(what, "its output is not of Version 1")
        }
        return try credentials(fromJSON: received, tokenKey: "SessionToken", what: what)
    }

    /// The program: a path as given, else the first match in the environment's PATH.
    private func executable() throws -> String {
        let name = arguments[0]
        if name.contains("/") { return name }
        for folder in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw VaultError.credentialSourceFailed(what, "the program is not found in PATH")
    }

    /// POSIX shell word splitting without expansions (Python's `shlex.split`, which botocore
    /// uses): quotes group, a backslash escapes outside single quotes. Nil on an open quote.
    static func split(_ command: String) -> [String]? {
        var words: [String] = [], word = "", inWord = false
        var quote: Character?
        var escaped = false
        for character in command {
            if escaped {
                if quote == "\"" && !"\\\"$`\n".contains(character) { word.append("\\") }
                if character != "\n" { word.append(character) }
                escaped = false
                inWord = true
            } else if character == "\\" && quote != "'" {
                escaped = true
            } else if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == " " || character == "\t" || character == "\n" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        guard quote == nil, !escaped else { return nil }
        if inWord { words.append(word) }
        return words
    }
}

// MARK: The container endpoint

/// ECS task roles, AWS Batch and EKS Pod Identity: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` on
/// 169.254.170.2, else `AWS_CONTAINER_CREDENTIALS_FULL_URI`, which over plain HTTP may only name
/// a loopback address or the link-local hosts ECS and EKS use, as the SDKs restrict it (a
/// token must not travel in the clear to anyone else). The token is
/// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`'s content (read at every fetch: EKS rotates it),
/// else `AWS_CONTAINER_AUTHORIZATION_TOKEN`.
struct ContainerEndpoint: Sendable {
    let settings: AWSSettings
    let url: String

    static let allowedHosts: Set<String> = ["169.254.170.2", "169.254.170.23", "fd00:ec2::23", "[fd00:ec2::23]", "localhost"]

    init?(settings: AWSSettings) throws {
        self.settings = settings
        if let relative = settings.env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
            url = "http://169.254.170.2" + (relative.hasPrefix("/") ? relative : "/" + relative)
        } else if let full = settings.env("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
            guard let parts = URLComponents(string: full), let scheme = parts.scheme?.lowercased(), let host = parts.host?.lowercased(),
                  scheme == "http" || scheme == "https", parts.user == nil, parts.password == nil else {
                throw VaultError.credentialSourceFailed("the container endpoint", "AWS_CONTAINER_CREDENTIALS_FULL_URI is not an http:// or https:// URL of a host")
            }
            guard scheme == "https" || Self.allowedHosts.contains(host) || Self.isLoopback(host) else {
                throw VaultError.credentialSourceFailed("the container endpoint",
                                                        "AWS_CONTAINER_CREDENTIALS_FULL_URI names host '\(host)' over http; only a loopback address, "
                                                        + "169.254.170.2, 169.254.170.23 or fd00:ec2::23 may be used without https")
            }
            url = full
        } else {
            return nil
        }
    }

    /// 127.0.0.0/8 and ::1.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    func fetch() throws -> ExpiringCredentials {
        let what = "the container endpoint \(url)"
        var headers: [(name: String, value: String)] = []
        if let tokenFile = settings.env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
            var token: [UInt8]
            do {
                token = try BoundedRead.file(tokenFile, limit: answerLimit, what: "container authorization token file")
            } catch let error as VaultError {
                throw VaultError.credentialSourceFailed(what, error.reason)
            }
            defer { token.zeroize() }
            headers.append(("Authorization", Substring(decoding: token, as: UTF8.self).trimmingASCIIWhitespace()))
        } else if let token = settings.env("AWS_CONTAINER_AUTHORIZATION_TOKEN") {
            headers.append(("Authorization", token))
        }
        let request = HTTPRequest(method: "GET", url: url, headers: headers + [("Accept", "application/json")], responseLimit: answerLimit)
        switch exchange(request, timeoutMilliseconds: 2_000, attempts: 3) {
        case .failure(let problem):
            throw VaultError.credentialSourceUnreachable(what, "the endpoint", problem.message)
        case .success(let response) where isBusy(response):
            throw VaultError.credentialSourceBusy(what, "answered \(httpProblem(response))")
        case .success(let response) where response.status != 200:
            throw VaultError.credentialSourceFailed(what, "answered \(httpProblem(response))")
        case .success(let response):
            return try credentials(fromJSON: response.body, tokenKey: "Token", what: what)
        }
    }
}

// MARK: EC2 instance metadata

/// IMDSv2 as the SDKs use it: a session token by PUT, then the role's name, then its
/// credentials, each with the token; a one-second timeout and one retry, since off EC2 nothing
/// answers. A 403, 404 or 405 to the PUT (IMDSv1 only) goes on without a token, as botocore.
struct InstanceMetadata: Sendable {
    let endpoint: String

    init?(settings: AWSSettings) throws {
        guard settings.env("AWS_EC2_METADATA_DISABLED")?.lowercased() != "true" else { return nil }
        let text = settings.env("AWS_EC2_METADATA_SERVICE_ENDPOINT") ?? settings.configSection(settings.profileName)?["ec2_metadata_service_endpoint"]
            ?? "http://169.254.169.254"
        endpoint = text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    private func get(_ path: String, method: String = "GET", headers: [(name: String, value: String)]) -> Result<HTTPResponse, HTTPTransportError> {
        exchange(HTTPRequest(method: method, url: endpoint + path, headers: headers, responseLimit: answerLimit), timeoutMilliseconds: 1_000, attempts: 2)
    }

    /// The credentials of the instance's role, and the role's name (for messages).
    func fetch() -> Result<(credentials: ExpiringCredentials, role: String), HTTPTransportError> {
        func problem(_ message: String, _ response: HTTPResponse? = nil) -> Result<(credentials: ExpiringCredentials, role: String), HTTPTransportError> {
            var error = HTTPTransportError(message: message, mayHaveReachedServer: true)
            error.isBusy = response.map(isBusy) ?? false
            return .failure(error)
        }
        var headers: [(name: String, value: String)] = []
        switch get("/latest/api/token", method: "PUT", headers: [("X-aws-ec2-metadata-token-ttl-seconds", "21600")]) {
        case .failure(let failure): return .failure(failure)
        case .success(let response) where response.status == 200:
            headers.append(("X-aws-ec2-metadata-token", String(decoding: response.body, as: UTF8.self)))
        case .success(let response) where [403, 404, 405].contains(response.status):
            break
        case .success(let response): return problem("the token request answered \(httpProblem(response))", response)
        }
        let base = "/latest/meta-data/iam/security-credentials/"
        let role: String
        switch get(base, headers: headers) {
        case .failure(let failure): return .failure(failure)
        case .success(let response) where response.status == 200:
            guard let name = String(decoding: response.body, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init), !name.isEmpty else {
                return problem("the instance has no role")
            }
            role = name
        case .success(let response): return problem("the instance has no role (\(httpProblem(response)))", response)
        }
        switch get(base + SigV4.encodedPath(role), headers: headers) {
        case .failure(let failure): return .failure(failure)
        case .success(let response) where response.status == 200:
            do {
                return .success((try credentials(fromJSON: response.body, tokenKey: "Token", what: "EC2 instance metadata"), role))
            } catch let error as VaultError {
                return problem(error.reason)
            } catch {
                return problem("an unreadable answer")
            }
        case .success(let response): return problem("the role's credentials answered \(httpProblem(response))", response)
        }
    }
}

extension VaultError.Code {
    /// A configured credential source refused or cannot work (STS `AccessDenied` or
    /// `InvalidIdentityToken`, a token file that cannot be read, a `credential_process` that
    /// fails, an expired SSO login): no retry mends it.
    public static let credentialSourceFailed = VaultError.Code(name: "credentialSourceFailed", category: .configuration)
    /// A configured credential source answered with a failure of its own (5xx, throttling)
    /// through every attempt: a retry later may get through.
    public static let credentialSourceBusy = VaultError.Code(name: "credentialSourceBusy", category: .temporary)
    /// A configured credential source (STS, the SSO portal, the container endpoint) could not be
    /// reached through every attempt: a retry later may get through.
    public static let credentialSourceUnreachable = VaultError.Code(name: "credentialSourceUnreachable", category: .temporary)
}

extension VaultError {
    /// `what` names the source and `why` the failure; neither ever holds a token, a key or a
    /// process's output.
    static func credentialSourceFailed(_ what: String, _ why: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.credentialSourceFailed, "could not get credentials for the object store from \(what): \(why)", file: file, line: line)
    }

    /// `problem` says who answered what ("STS at … answered HTTP 503") through every attempt.
    static func credentialSourceBusy(_ what: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.credentialSourceBusy, "could not get credentials for the object store from \(what): \(problem), a failure of its own that a later retry may get past",
                   file: file, line: line)
    }

    static func credentialSourceUnreachable(_ what: String, _ party: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.credentialSourceUnreachable, "could not get credentials for the object store from \(what): \(party) could not be reached: \(problem)",
                   file: file, line: line)
    }

    static func profileNotFound(_ profile: String, credentialsFile: String, configFile: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noCredentials, "no credentials for the object store: the profile '\(profile)' that AWS_PROFILE names is in neither \(credentialsFile) nor \(configFile)",
                   file: file, line: line)
    }

    static func ssoLoginNeeded(profile: String, _ why: String, login: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.credentialSourceFailed, "could not get credentials for the object store from profile '\(profile)' SSO: \(why)",
                   hint: "log in, then run the command again: \(login)", file: file, line: line)
    }
}

/// SHA-1 (FIPS 180-4), only to name the AWS CLI's SSO token cache file as the CLI does (the
/// file name is the hash of the session name or start URL); never for anything secret.
enum SHA1 {
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = message + [0x80]
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        for start in stride(from: 0, to: padded.count, by: 64) {
            var w = [UInt32](repeating: 0, count: 80)
            for i in 0..<16 {
                w[i] = (0..<4).reduce(0) { $0 << 8 | UInt32(padded[start + 4 * i + $1]) }
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) = switch i {
                case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (b ^ c ^ d, 0xCA62_C1D6)
                }
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h = [h[0] &+ a, h[1] &+ b, h[2] &+ c, h[3] &+ d, h[4] &+ e]
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) } }
    }
}
