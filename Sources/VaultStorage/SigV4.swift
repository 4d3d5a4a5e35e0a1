import Synchronization
import VaultCore

/// AWS Signature Version 4, the standard construction on HMAC-SHA256 that S3-compatible stores
/// require (AWS IAM user guide, "Create a signed AWS API request"). It is checked against AWS's
/// published test suite and against botocore's signer (Tests/Interop/test_s3_signing.py).
///
/// A request is given with its path and query *decoded*; the signer encodes them as SigV4
/// prescribes, and the same encoding is what goes on the wire (``SigV4/encodedPath(_:)``; the
/// HTTP client sends the path as it is, without removing dot segments).
package struct SigV4: Sendable {
    package let region: String
    package let service: String
    /// Generic AWS services remove `.`/`..` segments and repeated slashes before signing; S3 signs
    /// the key exactly as it is, because `a//b` and `a/./b` are different object keys.
    package let normalizesPath: Bool

    /// The day's signing key, derived once a day and secret instead of once a request.
    private let signingKeys = SigningKeyCache()

    package init(region: String, service: String, normalizesPath: Bool) {
        self.region = region
        self.service = service
        self.normalizesPath = normalizesPath
    }

    /// The signer S3 uses: service `s3`, no path normalisation.
    package static func s3(region: String) -> SigV4 {
        SigV4(region: region, service: "s3", normalizesPath: false)
    }

    package static let algorithm = "AWS4-HMAC-SHA256"

    package struct Request: Sendable {
        package var method: String
        /// The decoded path, starting with `/`.
        package var path: String
        /// Decoded names and values, in any order; a name may repeat.
        package var query: [(name: String, value: String)]
        /// Every header to sign, in the order sent; a name may repeat.
        package var headers: [(name: String, value: String)]
        /// Lowercase hex SHA-256 of the body (S3 also sends it as `x-amz-content-sha256`).
        package var payloadHash: String

        package init(method: String, path: String, query: [(name: String, value: String)] = [],
                    headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// An access key: the id is public, the secret is held in ``SecretBytes``; the session token
    /// is not shown either.
    package struct Credentials: Sendable, CustomStringConvertible, CustomReflectable {
        package let accessKeyID: String
        package let secret: SecretBytes
        package let sessionToken: String?

        package init(accessKeyID: String, secret: SecretBytes, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.secret = secret
            self.sessionToken = sessionToken
        }

        package var description: String { "Credentials(\(accessKeyID), secret redacted\(sessionToken == nil ? "" : ", session token redacted"))" }
        package var customMirror: Mirror { Mirror(self, children: ["accessKeyID": accessKeyID]) }
    }

    // MARK: The construction, step by step (each step is checked against the suite's files)

    /// Step 1: the canonical request (the suite's `.creq`).
    package func canonicalRequest(_ request: Request) -> String {
        canonicalRequest(request, headers: canonicalHeaders(request.headers))
    }

    private func canonicalRequest(_ request: Request, headers: [(name: String, value: String)]) -> String {
        [
            request.method,
            canonicalURI(request.path),
            Self.canonicalQuery(request.query),
            headers.map { "\($0.name):\($0.value)\n" }.joined(),
            Self.signedHeaders(headers),
            request.payloadHash,
        ].joined(separator: "\n")
    }

    /// The `SignedHeaders` list: lowercase names, sorted, without repeats.
    package func signedHeaders(_ request: Request) -> String {
        Self.signedHeaders(canonicalHeaders(request.headers))
    }

    private static func signedHeaders(_ headers: [(name: String, value: String)]) -> String {
        headers.map(\.name).joined(separator: ";")
    }

    /// Step 2: the string to sign (the suite's `.sts`). `amzDate` is `YYYYMMDDTHHMMSSZ`.
    package func stringToSign(_ request: Request, amzDate: String) -> String {
        stringToSign(canonicalRequest: canonicalRequest(request), amzDate: amzDate)
    }

    private func stringToSign(canonicalRequest: String, amzDate: String) -> String {
        let digest = Hex.encode(SHA256.hash(Array(canonicalRequest.utf8)))
        return [Self.algorithm, amzDate, scope(amzDate: amzDate), digest].joined(separator: "\n")
    }

    /// Step 3: the `Authorization` header's value (the suite's `.authz`). The canonical headers
    /// are made once, for the canonical request and the SignedHeaders list both: every request
    /// to the store is signed.
    package func authorization(_ request: Request, amzDate: String, credentials: Credentials) throws -> String {
        let headers = canonicalHeaders(request.headers)
        let toSign = stringToSign(canonicalRequest: canonicalRequest(request, headers: headers), amzDate: amzDate)
        let signature = try signature(of: toSign, amzDate: amzDate, secret: credentials.secret)
        return "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope(amzDate: amzDate)), "
            + "SignedHeaders=\(Self.signedHeaders(headers)), Signature=\(signature)"
    }

    /// `YYYYMMDD/region/service/aws4_request`.
    package func scope(amzDate: String) -> String {
        "\(amzDate.prefix(8))/\(region)/\(service)/aws4_request"
    }

    /// The signature: HMAC of the string to sign under the day's signing key. The signature
    /// itself is sent in the clear, so it needs no protected memory.
    private func signature(of stringToSign: String, amzDate: String, secret: SecretBytes) throws -> String {
        let key = try signingKeys.key(day: String(amzDate.prefix(8)), secret: secret) { try signingKey(day: $0, secret: secret) }
        var signature = [UInt8](repeating: 0, count: HMACSHA256.byteCount)
        try key.withUnsafeBytes { key in
            try Array(stringToSign.utf8).withUnsafeBytes { message in
                try signature.withUnsafeMutableBytes { try HMACSHA256.authenticate(key: key, parts: [message], into: $0) }
            }
        }
        return Hex.encode(signature)
    }

    /// The signing key is a chain of HMACs from `"AWS4" + secret` over date, region, service and
    /// `aws4_request`. Every key of the chain (kDate alone signs anything for a day) lives in
    /// protected memory and is zeroed when the next one replaces it.
    private func signingKey(day: String, secret: SecretBytes) throws -> SecretBytes {
        var key = try SecretBytes(count: 4 + secret.count) { buffer in
            buffer.copyBytes(from: Array("AWS4".utf8))
            secret.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[4...]).copyMemory(from: $0) }
        }
        for part in [day, region, service, "aws4_request"] {
            key = try Self.hmac(key: key, message: Array(part.utf8))
        }
        return key
    }

    /// HMAC-SHA256 of `message` under `key`, in protected memory.
    private static func hmac(key: SecretBytes, message: [UInt8]) throws -> SecretBytes {
        try SecretBytes(count: HMACSHA256.byteCount) { output in
            try key.withUnsafeBytes { key in
                try message.withUnsafeBytes { try HMACSHA256.authenticate(key: key, parts: [$0], into: output) }
            }
        }
    }

    // MARK: Canonical parts

    func canonicalURI(_ path: String) -> String {
        Self.encodedPath(normalizesPath ? Self.removingDotSegments(path) : path)
    }

    /// A path as it goes on the wire and into the canonical request: every byte but the
    /// unreserved characters and `/` percent-encoded, in uppercase hex.
    package static func encodedPath(_ path: String) -> String {
        path.isEmpty ? "/" : percentEncoded(path, keepingSlash: true)
    }

    /// The query as it goes on the wire and into the canonical request: pairs encoded, sorted by
    /// name and then value (byte order of the encoded text).
    package static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        query
            .map { (percentEncoded($0.name, keepingSlash: false), percentEncoded($0.value, keepingSlash: false)) }
            .sorted { $0.0 != $1.0 ? $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) : $0.1.utf8.lexicographicallyPrecedes($1.1.utf8) }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// Lowercase names sorted; the values of a repeated name joined by commas in the order sent;
    /// each value trimmed and its runs of spaces made one.
    private func canonicalHeaders(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        var values: [String: [String]] = [:]
        for header in headers {
            values[header.name.lowercased(), default: []].append(Self.collapsingSpaces(header.value))
        }
        return values.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { ($0, values[$0]!.joined(separator: ",")) }
    }

    static func collapsingSpaces(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// RFC 3986 section 5.2.4 dot-segment removal, plus repeated slashes made one (as the generic
    /// suite's `normalize-path` cases expect). A trailing slash is kept.
    static func removingDotSegments(_ path: String) -> String {
        var kept: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        for segment in segments {
            switch segment {
            case ".": continue
            case "..": _ = kept.popLast()
            default: kept.append(segment)
            }
        }
        let trailing = path.hasSuffix("/") || segments.last == "." || segments.last == ".."
        let joined = "/" + kept.joined(separator: "/")
        return trailing && !kept.isEmpty ? joined + "/" : joined
    }

    private static func percentEncoded(_ text: String, keepingSlash: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + hexDigits[Int(byte >> 4)] + hexDigits[Int(byte & 0x0F)]
            }
        }
        return out
    }

    private static let hexDigits = "0123456789ABCDEF".map(String.init)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}

/// The last signing key a signer derived (issue 29): its four HMACs, each into protected memory,
/// were most of a signature's cost, for a key that changes only with the day or the secret. It
/// is held, like the secret it comes from, in protected memory, and replaced (the old one zeroed
/// when released) when either changes.
final class SigningKeyCache: Sendable {
    private struct Entry: Sendable {
        let day: String
        /// Compared by identity: credentials are read once and their secret kept as one object.
        let secret: SecretBytes
        let key: SecretBytes
    }

    private let entry = Mutex<Entry?>(nil)

    func key(day: String, secret: SecretBytes, derive: (String) throws -> SecretBytes) throws -> SecretBytes {
        if let cached = entry.withLock({ $0 }), cached.day == day, cached.secret === secret { return cached.key }
        let key = try derive(day)
        entry.withLock { $0 = Entry(day: day, secret: secret, key: key) }
        return key
    }
}
