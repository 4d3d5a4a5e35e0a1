import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// Where an S3-compatible store is and how to sign for it, read the way the AWS CLI and SDKs read
/// it (AWS SDKs and Tools reference guide, "Configuration and credential file settings"):
///
/// - endpoint: `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`, else the profile's `s3` section's
///   `endpoint_url`, else the `s3` block of the profile's `services` section, else its
///   `endpoint_url`, else AWS's regional endpoint;
/// - region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the profile's `region`, else us-east-1;
/// - credentials: the SDKs' default chain (``CredentialChain``: the environment, an assumed
///   role, web identity, SSO, the profile's keys or credential_process, the container endpoint,
///   EC2 instance metadata), refreshed before they expire (``CredentialProvider``);
/// - profile: `AWS_PROFILE`, else `default`; files: `AWS_SHARED_CREDENTIALS_FILE` and
///   `AWS_CONFIG_FILE`, else `~/.aws/credentials` and `~/.aws/config`;
/// - addressing: the profile's `s3` section's `addressing_style` (`path` or `virtual`); else path
///   style for any endpoint that is not AWS's, as MinIO-like servers need;
/// - proxy: `HTTPS_PROXY` (`HTTP_PROXY` for an http:// endpoint) and `NO_PROXY`.
///
/// A credential is never taken from a command line; secret keys are held in ``SecretBytes``.
public struct S3Configuration: Sendable {
    public let endpoint: Endpoint
    public let region: String
    /// The credentials every request is signed with, shared by every client of the store and
    /// fetched again before they expire.
    package let credentials: CredentialProvider
    public let pathStyle: Bool
    /// Where the credentials came from, for messages ("the environment (AWS_ACCESS_KEY_ID)",
    /// "profile 'x' in FILE", "role … by web identity (…)"); before they were looked for, "not
    /// yet looked for".
    public var credentialSource: String { credentials.source ?? "credentials not yet looked for" }
    /// The proxy, as the AWS CLI takes it: `HTTPS_PROXY` (or `HTTP_PROXY` for an http://
    /// endpoint), and the hosts that bypass it, `NO_PROXY`. None unless set.
    public let proxy: String?
    public let noProxy: String?

    public struct Endpoint: Sendable, Equatable {
        public let scheme: String
        /// `host` or `host:port`, as the Host header carries it.
        public let authority: String

        public var url: String { "\(scheme)://\(authority)" }
        var isAWS: Bool { authority.hasSuffix(".amazonaws.com") || authority.contains(".amazonaws.com:") }

        /// `http://host[:port]` or `https://…`; a path, query or user information is refused (a
        /// password in a URL would end up in messages and process listings).
        public init(parsing text: String) throws {
            let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
            guard let separator = trimmed.firstRange(of: "://") else { throw VaultError.badEndpoint(text) }
            let scheme = trimmed[..<separator.lowerBound].lowercased()
            let authority = String(trimmed[separator.upperBound...])
            guard scheme == "http" || scheme == "https", !authority.isEmpty,
                  !authority.contains("/"), !authority.contains("?"), !authority.contains("#") else {
                throw VaultError.badEndpoint(text)
            }
            guard !authority.contains("@") else { throw VaultError.credentialsInEndpoint() }
            // host[:port] with a port of digits: "http://minio:PASSWORD" is a password where a
            // port belongs, and the endpoint is printed in later messages.
            guard Self.isHostAndPort(authority) else { throw VaultError.badEndpoint(text) }
            self.scheme = scheme
            self.authority = authority
        }

        /// A host name or address and an optional port of 1 to 5 digits; an IPv6 address in brackets.
        static func isHostAndPort(_ authority: String) -> Bool {
            var host = Substring(authority), port: Substring?
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { return false }
                host = authority[authority.index(after: authority.startIndex)..<close]
                let rest = authority[authority.index(after: close)...]
                if !rest.isEmpty {
                    guard rest.hasPrefix(":") else { return false }
                    port = rest.dropFirst()
                }
                guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
            } else {
                let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count <= 2 else { return false }
                host = parts[0]
                port = parts.count == 2 ? parts[1] : nil
                guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }) else { return false }
            }
            if let port { return (1...5).contains(port.count) && port.allSatisfy { $0.isASCII && $0.isNumber } }
            return true
        }
    }

    package init(endpoint: Endpoint, region: String, credentials: CredentialProvider, pathStyle: Bool,
                 proxy: String? = nil, noProxy: String? = nil) {
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.pathStyle = pathStyle
        self.proxy = proxy
        self.noProxy = noProxy
    }

    /// Fixed credentials (tests), or none: then `credentialSource` is what a use says was found.
    package init(endpoint: Endpoint, region: String, credentials: SigV4.Credentials?, pathStyle: Bool, credentialSource: String,
                 proxy: String? = nil, noProxy: String? = nil) {
        self.init(endpoint: endpoint, region: region, credentials: CredentialProvider(fixed: credentials, source: credentialSource),
                  pathStyle: pathStyle, proxy: proxy, noProxy: noProxy)
    }

    /// Reads the configuration from an environment (the executable passes its own; VaultStorage
    /// never reads the process's) and the files it names. The credentials are looked for on
    /// first use (``CredentialChain``), so a command that never touches the store asks nothing.
    public static func load(environment: [String: String]) throws -> S3Configuration {
        let settings = try AWSSettings(environment: environment)
        let config = settings.configSection(settings.profileName)
        let endpointText = settings.env("AWS_ENDPOINT_URL_S3") ?? settings.env("AWS_ENDPOINT_URL")
            ?? config?.nested("s3")["endpoint_url"] ?? settings.endpoint(service: "s3")
        let endpoint = try endpointText.map(Endpoint.init(parsing:))
            ?? Endpoint(parsing: "https://s3.\(settings.region).amazonaws.com")
        let style = config?.nested("s3")["addressing_style"]
        let pathStyle = style == "path" || (style != "virtual" && !endpoint.isAWS)
        let chain = CredentialChain(settings: settings)
        return S3Configuration(endpoint: endpoint, region: settings.region, credentials: CredentialProvider { try chain.resolve() },
                               pathStyle: pathStyle, proxy: settings.proxy(for: endpoint.url), noProxy: settings.noProxy)
    }
}

/// The AWS shared config and credentials files: INI sections of `key = value`, where a key with
/// no value opens a nested block of indented lines (`s3 =` then `  addressing_style = path`).
struct ProfileFile {
    struct Section {
        var values: [String: String] = [:]
        var blocks: [String: [String: String]] = [:]
        subscript(key: String) -> String? { values[key] }
        func nested(_ name: String) -> [String: String] { blocks[name] ?? [:] }
    }

    private var sections: [String: Section] = [:]

    func section(_ name: String) -> Section? { sections[name] }

    /// nil when the file does not exist; an unreadable file is an error, since its profile may be
    /// the one the user meant.
    static func read(_ path: String) throws -> ProfileFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        // `AWS_CONFIG_FILE=/dev/null` is how the AWS tools are told there is no such file.
        if isNullDevice(path) { return nil }
        var bytes = try BoundedRead.file(path, limit: InputLimits.document, what: "AWS configuration file")
        // Our copy of the file is zeroed; the parsed values are ordinary strings until the
        // secret is moved into SecretBytes (a known limit, like the environment's copy).
        defer { bytes.zeroize() }
        return ProfileFile(parsing: String(decoding: bytes, as: UTF8.self))
    }

    /// Whether `path` is /dev/null (by the device it names, however it is spelled).
    private static func isNullDevice(_ path: String) -> Bool {
        var named = stat(), null = stat()
        return stat(path, &named) == 0 && stat("/dev/null", &null) == 0 && named.st_mode & S_IFMT == S_IFCHR && named.st_rdev == null.st_rdev
    }

    init(parsing text: String) {
        var current: String?
        var block: String?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let indented = rawLine.first == " " || rawLine.first == "\t"
            let line = rawLine.trimmingASCIIWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                current = name
                block = nil
                if sections[name] == nil { sections[name] = Section() }
                continue
            }
            guard let section = current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingASCIIWhitespace().lowercased()
            let value = line[line.index(after: equals)...].trimmingASCIIWhitespace()
            if indented, let block {
                sections[section]!.blocks[block, default: [:]][key] = value
            } else if value.isEmpty {
                block = key
            } else {
                block = nil
                sections[section]!.values[key] = value
            }
        }
    }
}

extension VaultError.Code {
    /// The object store's endpoint is not an http(s) URL of a host.
    public static let badEndpoint = VaultError.Code(name: "badEndpoint", category: .invalidInput)
    /// An endpoint URL carried user information (a password would be in plain sight).
    public static let credentialsInEndpoint = VaultError.Code(name: "credentialsInEndpoint", category: .invalidInput)
}

extension VaultError {
    /// The text itself is never quoted: an endpoint that cannot be parsed may hold a password
    /// anywhere ("minio:PASSWORD@host:9000" has no "://"). Only a scheme and a host that can be
    /// read as such are named.
    static func badEndpoint(_ text: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        let (scheme, host) = readableParts(ofEndpoint: text)
        let named = [scheme.map { "scheme '\($0)'" }, host.map { "host '\($0)'" }].compactMap { $0 }.joined(separator: ", ")
        return VaultError(.badEndpoint, "the object store endpoint\(named.isEmpty ? "" : " (\(named))") is not an http:// or https:// URL of a host (scheme://host[:port])",
                          file: file, line: line)
    }

    /// The scheme and host of an endpoint, each only when it is there and looks like one: the
    /// scheme before "://", the host after it, up to a port, path, query or fragment.
    static func readableParts(ofEndpoint text: String) -> (scheme: String?, host: String?) {
        guard let separator = text.firstRange(of: "://") else { return (nil, nil) }
        let scheme = String(text[..<separator.lowerBound])
        // With an "@" anywhere, what looks like a host may be part of a password.
        let host = text.contains("@") ? "" : text[separator.upperBound...].prefix { !":/?#".contains($0) }
        func readable(_ part: Substring, _ allowed: (Character) -> Bool) -> String? {
            !part.isEmpty && part.count <= 253 && part.allSatisfy(allowed) ? String(part) : nil
        }
        return (readable(Substring(scheme)) { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) },
                readable(host) { $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) })
    }

    static func credentialsInEndpoint(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.credentialsInEndpoint, "the object store endpoint carries user information; credentials are never read from a URL",
                   file: file, line: line)
    }
}
