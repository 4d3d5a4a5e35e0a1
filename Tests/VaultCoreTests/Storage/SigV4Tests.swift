import Foundation
import Testing
@testable import VaultCore
@testable import VaultStorage

/// Signature Version 4 against AWS's published test suite (Vectors/sigv4): for every case the
/// canonical request, the string to sign and the Authorization header must match byte for byte.
@Suite struct SigV4Tests {
    static let suite = TestFiles.vectors.appendingPathComponent("sigv4/aws-sig-v4-test-suite")
    static let signer = SigV4(region: "us-east-1", service: "service", normalizesPath: true)
    static let amzDate = "20150830T123600Z"
    static let credentials = SigV4.Credentials(
        accessKeyID: "AKIDEXAMPLE", secret: .test(Array("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".utf8)))

    /// Every case folder: the ones holding a `.req` file, at any depth.
    static func cases() throws -> [URL] {
        let walker = FileManager.default.enumerator(at: suite, includingPropertiesForKeys: nil)!
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "req" }
            .sorted { $0.path < $1.path }
    }

    @Test func theWholeSuite() throws {
        let cases = try Self.cases()
        #expect(cases.count == 31)
        for file in cases {
            let name = file.deletingPathExtension().lastPathComponent
            let request = try Self.parse(String(decoding: Data(contentsOf: file), as: UTF8.self))
            func expected(_ ext: String) throws -> String {
                try String(decoding: Data(contentsOf: file.deletingPathExtension().appendingPathExtension(ext)), as: UTF8.self)
            }
            #expect(Self.signer.canonicalRequest(request) == (try expected("creq")), "\(name): canonical request")
            let signed = try Self.signedAsInTheOriginalSuite(name, request, creq: expected("creq"), sts: expected("sts"))
            #expect(Self.signer.stringToSign(signed, amzDate: Self.amzDate) == (try expected("sts")), "\(name): string to sign")
            let authorization = try Self.signer.authorization(signed, amzDate: Self.amzDate, credentials: Self.credentials)
            if Self.edited.contains(name) {
                // One of them also lists content-length in its SignedHeaders while its signature
                // does not cover it: only the signature can be compared.
                let signature = { (text: String) in text.components(separatedBy: "Signature=").last }
                #expect(signature(authorization) == signature(try expected("authz")), "\(name): signature")
            } else {
                #expect(authorization == (try expected("authz")), "\(name): Authorization")
            }
        }
    }

    /// In two cases the repackaged suite edited the `.req` and `.creq` (a signed Content-Length,
    /// `charset=utf-8`) but kept AWS's original `.sts` and `.authz`, which sign the request without
    /// Content-Length and with `charset=utf8`. Their `.sts` is then not the hash of their `.creq`
    /// (checked here, so a corrected suite shows up), and they are signed as the original was.
    static let edited: Set = ["post-x-www-form-urlencoded", "post-x-www-form-urlencoded-parameters"]

    static func signedAsInTheOriginalSuite(_ name: String, _ request: SigV4.Request, creq: String, sts: String) -> SigV4.Request {
        let consistent = sts.hasSuffix(Hex.encode(SHA256.hash(Array(creq.utf8))))
        let edited = edited.contains(name)
        #expect(consistent != edited, "\(name): the .sts is \(consistent ? "" : "not ")the hash of the .creq")
        guard edited else { return request }
        var original = request
        original.headers = request.headers
            .filter { $0.name.lowercased() != "content-length" }
            .map { ($0.name, $0.name.lowercased() == "content-type" ? $0.value.replacingOccurrences(of: "utf-8", with: "utf8") : $0.value) }
        return original
    }

    /// A signer keeps the day's signing key (issue 29): one signer signing across days and with
    /// other credentials gives, each time, what a new signer gives, and the suite's signature.
    @Test func theKeptSigningKeyFollowsTheDayAndTheCredentials() throws {
        let request = try Self.parse(String(decoding: Data(contentsOf: Self.suite.appendingPathComponent("get-vanilla/get-vanilla.req")), as: UTF8.self))
        let expected = try String(decoding: Data(contentsOf: Self.suite.appendingPathComponent("get-vanilla/get-vanilla.authz")), as: UTF8.self)
        let other = SigV4.Credentials(accessKeyID: "AKIDEXAMPLE", secret: .test(Array("another secret".utf8)))
        let signer = SigV4(region: "us-east-1", service: "service", normalizesPath: true)
        for (date, credentials) in [(Self.amzDate, Self.credentials), ("20150831T000000Z", Self.credentials), (Self.amzDate, other),
                                    (Self.amzDate, Self.credentials), (Self.amzDate, Self.credentials)] {
            let fresh = SigV4(region: "us-east-1", service: "service", normalizesPath: true)
            let signed = try signer.authorization(request, amzDate: date, credentials: credentials)
            #expect(signed == (try fresh.authorization(request, amzDate: date, credentials: credentials)))
            #expect((signed == expected) == (date == Self.amzDate && credentials.secret === Self.credentials.secret))
        }
    }

    /// S3 signs the key as it is: no dot-segment removal, no slash collapsing. The suite's
    /// normalisation cases must then differ from their generic canonical path.
    @Test func s3KeepsThePathAsItIs() {
        let s3 = SigV4.s3(region: "us-east-1")
        #expect(s3.canonicalURI("/bucket/a//b/./c/../d") == "/bucket/a//b/./c/../d")
        #expect(Self.signer.canonicalURI("/bucket/a//b/./c/../d") == "/bucket/a/b/d")
        #expect(s3.canonicalURI("/b/k ey+é") == "/b/k%20ey%2B%C3%A9")
        #expect(s3.canonicalURI("") == "/")
    }

    /// A query value with reserved characters is encoded once, in uppercase hex, and pairs sort
    /// by the encoded name, then value.
    @Test func queryEncodingAndOrder() {
        let query = SigV4.canonicalQuery([("prefix", "vaults/a b"), ("list-type", "2"), ("continuation-token", "x+y=")])
        #expect(query == "continuation-token=x%2By%3D&list-type=2&prefix=vaults%2Fa%20b")
    }

    /// The suite's `.req` format: a request line, headers (a line starting with white space
    /// continues the previous header as another value), a blank line and the body.
    static func parse(_ text: String) throws -> SigV4.Request {
        let (head, body): (Substring, Substring) = {
            if let split = text.range(of: "\n\n") { return (text[..<split.lowerBound], text[split.upperBound...]) }
            return (text[...], "")
        }()
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false)
        let requestLine = lines.removeFirst()
        let method = requestLine.prefix { $0 != " " }
        var target = requestLine.dropFirst(method.count + 1)
        if target.hasSuffix(" HTTP/1.1") { target = target.dropLast(" HTTP/1.1".count) }
        let path = target.prefix { $0 != "?" }
        let query = target.dropFirst(path.count + 1).split(separator: "&").map { pair in
            let name = pair.prefix { $0 != "=" }
            return (name: String(name), value: String(pair.dropFirst(name.count + 1)))
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            if line.first == " " || line.first == "\t", let last = headers.last {
                headers.append((last.name, String(line)))
            } else {
                let name = line.prefix { $0 != ":" }
                headers.append((String(name), String(line.dropFirst(name.count + 1))))
            }
        }
        return SigV4.Request(
            method: String(method), path: String(path), query: query, headers: headers,
            payloadHash: Hex.encode(SHA256.hash(Array(body.utf8))))
    }
}
