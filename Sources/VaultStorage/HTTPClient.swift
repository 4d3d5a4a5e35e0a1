internal import CCurl
internal import CStorageLoad
import VaultCore

/// One HTTP exchange: what is sent.
struct HTTPRequest: Sendable {
    var method: String
    /// The whole URL, already encoded; it never carries a credential.
    var url: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// The most the response body may hold: a larger one ends the transfer (a hostile or
    /// mistaken object must not fill the memory).
    var responseLimit: Int

    init(method: String, url: String, headers: [(name: String, value: String)], body: [UInt8] = [], responseLimit: Int) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.responseLimit = responseLimit
    }
}

/// What came back: the status, the headers (names lowercased; the last of a repeated name) and
/// the body.
struct HTTPResponse: Sendable {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]
}

/// Why an exchange has no response: the transport failed. `mayHaveReachedServer` is false only
/// when curl says the request was never sent (no connection), so a write that fails otherwise
/// has an unknown outcome.
struct HTTPTransportError: Error, Sendable {
    let message: String
    let mayHaveReachedServer: Bool
    /// The response was larger than the request's limit; asking again would not help.
    var tooLarge = false
    /// The server's certificate could not be verified against the trust store (or there is no
    /// trust store): a retry meets the same certificate, so it is no temporary failure.
    var untrusted = false
    /// The endpoint cannot work (its host does not resolve, TLS fails): no retry mends it.
    var isConfiguration = false
    /// No answer in time: a retry costs the quota more (``RetryQuota``).
    var isTimeout = false
    /// A credential source answered with a failure of its own (5xx, throttling): not a
    /// configuration, a retry later may get through (``isBusy(_:)``).
    var isBusy = false
}

/// The one owner of libcurl: an easy handle per client, reused so that connections are kept
/// alive between requests. A client is used by one thread at a time; concurrent work makes one
/// client per worker.
final class HTTPClient {
    private let handle: UnsafeMutableRawPointer  // CURL is `void` in C
    let connectTimeoutMilliseconds: Int
    let timeoutMilliseconds: Int

    private static let globalInit: CURLcode = hvt_curl_global_init()

    /// The proxy URL, and the hosts that bypass it (libcurl's NOPROXY list).
    let proxy: String?
    let noProxy: String?

    init(proxy: String? = nil, noProxy: String? = nil, connectTimeoutMilliseconds: Int = 10_000, timeoutMilliseconds: Int = 120_000) throws {
        self.proxy = proxy
        self.noProxy = noProxy
        try Self.requireLibrary()
        guard Self.globalInit == CURLE_OK, let handle = curl_easy_init() else {
            throw VaultError.curlUnavailable()
        }
        self.handle = handle
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    deinit { curl_easy_cleanup(handle) }

    /// libcurl, loaded on use (issue 48): only a command that reaches the network maps it.
    /// `ObjectStore` loads it at its door too, before any credential source is asked, so a
    /// missing libcurl is exit 69 however the credentials come (a source that catches its
    /// client's failure would otherwise report it as an endpoint out of reach).
    static func requireLibrary() throws {
        try LoadOnUse.require(OpaquePointer(hvt_library_curl()), feature: "reaching an object store or a cloud credential endpoint")
    }

    /// Sends one request and waits for its whole response.
    func send(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPTransportError> {
        // curl_easy_reset forgets the options but keeps the connection cache.
        curl_easy_reset(handle)
        let exchange = Exchange(upload: request.body, limit: request.responseLimit)
        var list: UnsafeMutablePointer<curl_slist>? = nil
        defer { curl_slist_free_all(list) }
        // "Expect:" stops curl from waiting for 100-continue before a body.
        for (name, value) in request.headers + [("Expect", "")] {
            // A CR or LF would end the header and start another: refuse instead of sending it.
            guard !(name + value).unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                return .failure(HTTPTransportError(message: "header \(name) holds a line break", mayHaveReachedServer: false))
            }
            let line = value.isEmpty ? "\(name):" : "\(name): \(value)"
            list = curl_slist_append(list, line)
        }
        let code: CURLcode = withExtendedLifetime(exchange) {
            let context = Unmanaged.passUnretained(exchange).toOpaque()
            var status = CURLE_OK
            func set(_ result: CURLcode) { if status == CURLE_OK { status = result } }
            set(hvt_curl_set_pointer(handle, CURLOPT_URL, request.url))
            set(hvt_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
            set(hvt_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds))
            set(hvt_curl_set_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds))
            set(hvt_curl_set_pointer(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
            // The path as signed: curl would otherwise remove "/./" and "/../", which are part
            // of an object's key.
            set(hvt_curl_set_long(handle, CURLOPT_PATH_AS_IS, 1))
            // A proxy only when configured (S3Configuration); curl would read the environment.
            set(hvt_curl_set_pointer(handle, CURLOPT_PROXY, proxy ?? ""))
            if let noProxy { set(hvt_curl_set_pointer(handle, CURLOPT_NOPROXY, noProxy)) }
            set(hvt_curl_set_pointer(handle, CURLOPT_HTTPHEADER, list))
            set(hvt_curl_set_write_function(handle, CURLOPT_WRITEFUNCTION, receiveBody))
            set(hvt_curl_set_pointer(handle, CURLOPT_WRITEDATA, context))
            set(hvt_curl_set_write_function(handle, CURLOPT_HEADERFUNCTION, receiveHeader))
            set(hvt_curl_set_pointer(handle, CURLOPT_HEADERDATA, context))
            switch request.method {
            case "GET":
                set(hvt_curl_set_long(handle, CURLOPT_HTTPGET, 1))
            case "PUT":
                set(hvt_curl_set_long(handle, CURLOPT_UPLOAD, 1))
                set(hvt_curl_set_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.body.count)))
                set(hvt_curl_set_write_function(handle, CURLOPT_READFUNCTION, sendBody))
                set(hvt_curl_set_pointer(handle, CURLOPT_READDATA, context))
            case "POST":  // STS's query API takes its form in the body (CredentialSources)
                set(hvt_curl_set_long(handle, CURLOPT_POST, 1))
                set(hvt_curl_set_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
                set(hvt_curl_set_write_function(handle, CURLOPT_READFUNCTION, sendBody))
                set(hvt_curl_set_pointer(handle, CURLOPT_READDATA, context))
            default:
                set(hvt_curl_set_pointer(handle, CURLOPT_CUSTOMREQUEST, request.method))
            }
            guard status == CURLE_OK else { return status }
            return curl_easy_perform(handle)
        }
        if exchange.exceeded {
            return .failure(HTTPTransportError(message: "the response is larger than \(request.responseLimit) bytes", mayHaveReachedServer: true, tooLarge: true))
        }
        guard code == CURLE_OK else {
            let message = String(cString: curl_easy_strerror(code))
            let neverSent = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST
                || code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_URL_MALFORMAT
            // 60: the certificate does not chain to a trusted CA or names another host; 77: no
            // CA bundle to verify with (an image without ca-certificates).
            let untrusted = code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE
            let wrongEndpoint = code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_UNSUPPORTED_PROTOCOL
                || code == CURLE_URL_MALFORMAT || code == CURLE_SSL_CONNECT_ERROR || untrusted
            return .failure(HTTPTransportError(message: message, mayHaveReachedServer: !neverSent, untrusted: untrusted, isConfiguration: wrongEndpoint,
                                               isTimeout: code == CURLE_OPERATION_TIMEDOUT))
        }
        var status = 0
        guard hvt_curl_response_code(handle, &status) == CURLE_OK else {
            return .failure(HTTPTransportError(message: "libcurl gave no response code", mayHaveReachedServer: true))
        }
        return .success(HTTPResponse(status: status, headers: exchange.headers, body: exchange.received))
    }
}

/// The buffers one exchange's callbacks fill and drain.
private final class Exchange {
    let upload: [UInt8]
    let limit: Int
    var uploaded = 0
    var received: [UInt8] = []
    var exceeded = false
    var headers: [String: String] = [:]

    init(upload: [UInt8], limit: Int) {
        self.upload = upload
        self.limit = limit
    }
}

private func exchange(_ context: UnsafeMutableRawPointer?) -> Exchange {
    Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
}

private let receiveBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    let exchange = exchange(context)
    // Returning less than was given makes curl stop the transfer (CURLE_WRITE_ERROR).
    guard exchange.received.count + bytes.count <= exchange.limit else {
        exchange.exceeded = true
        return 0
    }
    exchange.received.append(contentsOf: bytes)
    return bytes.count
}

/// One header line at a time; the status line and the blank line have no colon and are skipped.
/// A redirect or 100-continue starts a new header block, so a status line clears the headers.
private let receiveHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    let line = String(decoding: bytes, as: UTF8.self)
    let exchange = exchange(context)
    if line.hasPrefix("HTTP/") {
        exchange.headers = [:]
    } else if let colon = line.firstIndex(of: ":") {
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingASCIIWhitespace()
        exchange.headers[name] = value
    }
    return bytes.count
}

private let sendBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    buffer, size, count, context in
    let exchange = exchange(context)
    let length = min(size * count, exchange.upload.count - exchange.uploaded)
    guard length > 0, let buffer else { return 0 }
    exchange.upload.withUnsafeBytes { source in
        UnsafeMutableRawPointer(buffer).copyMemory(
            from: source.baseAddress! + exchange.uploaded, byteCount: length)
    }
    exchange.uploaded += length
    return length
}

extension Substring {
    /// Without leading and trailing spaces, tabs, CR and LF; by Unicode scalar, since "\r\n" is
    /// one Character and would not match either alone.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(scalars[first...last])
    }
}

extension VaultError {
    /// libcurl's global initialisation or its easy handle failed (out of memory, a broken TLS library).
    static func curlUnavailable(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "libcurl could not be initialised", file: file, line: line)
    }
}
