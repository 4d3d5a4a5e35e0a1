import Foundation
import Synchronization
import Testing
@testable import VaultCore
@testable import VaultFiles
@testable import VaultStorage

/// The credential chain's local parts (the sources that need a server are tested against
/// botocore in Tests/Interop/test_credentials.py) and the provider's refresh, on an injected clock.
@Suite final class CredentialChainTests {
    private var written: [String] = []

    deinit { for path in written { try? FileManager.default.removeItem(atPath: path) } }

    func write(_ text: String, mode: Int = 0o600) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hvt-creds-\(UUID().uuidString)").path
        try AtomicFile.write(Array(text.utf8), to: path, mode: mode_t(mode), exclusive: true)
        written.append(path)
        return path
    }

    static func credentials(_ id: String) throws -> SigV4.Credentials {
        try SigV4.Credentials(accessKeyID: id, secret: .fromText("secret-\(id)"), sessionToken: "token-\(id)")
    }

    /// A source handing out key N at its Nth fetch, each valid for `lifetime` seconds of the clock.
    final class CountingSource: Sendable {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let count = Mutex(0)
        let lifetime: TimeInterval
        let failing = Mutex(false)
        let attempts = Mutex(0)

        init(lifetime: TimeInterval) { self.lifetime = lifetime }

        func fetch() throws -> ExpiringCredentials {
            attempts.withLock { $0 += 1 }
            if failing.withLock({ $0 }) { throw VaultError.credentialSourceFailed("a test", "down") }
            let n = count.withLock { $0 += 1; return $0 }
            return ExpiringCredentials(try CredentialChainTests.credentials("KEY\(n)"), expiration: now.withLock { $0 } + lifetime)
        }

        func provider() -> CredentialProvider {
            CredentialProvider(clock: { self.now.withLock { $0 } }) {
                ResolvedCredentials(source: "a test", first: try self.fetch()) { try self.fetch() }
            }
        }

        func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
    }

    @Test func credentialsAreFetchedAgainBeforeTheyExpire() throws {
        let source = CountingSource(lifetime: 3600)
        let provider = source.provider()
        #expect(source.count.withLock { $0 } == 0, "nothing is fetched before first use")
        for _ in 0..<50 { #expect(try provider.current().accessKeyID == "KEY1") }
        source.advance(3600 - 16 * 60)
        #expect(try provider.current().accessKeyID == "KEY1", "16 minutes left: still good")
        source.advance(2 * 60)
        #expect(try provider.current().accessKeyID == "KEY2", "14 minutes left: refreshed ahead")
        #expect(try provider.current().accessKeyID == "KEY2")
        #expect(source.count.withLock { $0 } == 2)
        #expect(provider.fetches == 2)
    }

    @Test func aFailedRefreshKeepsTheCurrentOnesUntilTheMandatoryWindow() throws {
        let source = CountingSource(lifetime: 3600)
        let provider = source.provider()
        _ = try provider.current()
        source.failing.withLock { $0 = true }
        source.advance(3600 - 14 * 60)
        #expect(try provider.current().accessKeyID == "KEY1", "advisory window: a failure keeps the current key")
        #expect(source.attempts.withLock { $0 } == 2)
        for _ in 0..<20 { #expect(try provider.current().accessKeyID == "KEY1") }
        #expect(source.attempts.withLock { $0 } == 2, "no attempt within a minute of a failed one")
        source.advance(61)
        _ = try provider.current()
        #expect(source.attempts.withLock { $0 } == 3, "another attempt a minute later")
        source.advance(3 * 60)
        #expect(throws: VaultError(.credentialSourceFailed, "")) { try provider.current() }
        source.failing.withLock { $0 = false }
        #expect(try provider.current().accessKeyID == "KEY2")
    }

    /// Many threads at once, through several expiries: each expiry makes one fetch, not one a thread.
    @Test func threadsShareOneRefresh() throws {
        let source = CountingSource(lifetime: 3600)
        let provider = source.provider()
        for round in 0..<5 {
            DispatchQueue.concurrentPerform(iterations: 64) { _ in _ = try? provider.current() }
            #expect(source.count.withLock { $0 } == round + 1)
            source.advance(3600)
        }
    }

    @Test func anExpiredAnswerForcesOneRefresh() throws {
        let source = CountingSource(lifetime: 3600)
        let provider = source.provider()
        let used = try provider.current()
        let renewed = try #require(try provider.refresh(after: used))
        #expect(renewed.accessKeyID == "KEY2")
        // Another thread refused with the old key gets the new one, without a fetch.
        #expect(try provider.refresh(after: used)?.accessKeyID == "KEY2")
        #expect(source.count.withLock { $0 } == 2)
        // Static keys give the same key again: no retry.
        let fixed = CredentialProvider(fixed: try Self.credentials("STATIC"), source: "a test")
        #expect(try provider.current().accessKeyID == "KEY2")
        #expect(try fixed.refresh(after: fixed.current()) == nil)
    }

    // MARK: The chain's order, for the sources without a server

    @Test func theOrderOfTheLocalSources() throws {
        let processScript = try write("#!/bin/sh\nprintf '%s' '{\"Version\": 1, \"AccessKeyId\": \"PROCESSKEY\", \"SecretAccessKey\": \"s\", \"SessionToken\": \"t\", \"Expiration\": \"2099-01-01T00:00:00Z\"}'\n", mode: 0o700)
        let credentials = try write("[default]\naws_access_key_id = CREDFILEKEY\naws_secret_access_key = s\n[other]\nregion = x\n")
        let config = try write("[default]\naws_access_key_id = CONFIGKEY\naws_secret_access_key = s\ncredential_process = \(processScript) --flag 'a b'\n"
                               + "[profile proc]\ncredential_process = \(processScript)\naws_access_key_id = CONFIGPROCKEY\naws_secret_access_key = s\n"
                               + "[profile bare]\nregion = eu-west-1\n")
        var env = ["HOME": "/nonexistent", "AWS_CONFIG_FILE": config, "AWS_SHARED_CREDENTIALS_FILE": credentials, "AWS_EC2_METADATA_DISABLED": "true"]
        func key(_ extra: [String: String]) throws -> String {
            try S3Configuration.load(environment: env.merging(extra) { $1 }).credentials.current().accessKeyID
        }
        #expect(try key(["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "s"]) == "ENVKEY")
        #expect(try key([:]) == "CREDFILEKEY", "the credentials file before credential_process")
        #expect(try key(["AWS_PROFILE": "proc"]) == "PROCESSKEY", "credential_process before the config file's keys")
        env["AWS_SHARED_CREDENTIALS_FILE"] = "/nonexistent/credentials"
        #expect(try key([:]) == "PROCESSKEY")
        #expect(throws: VaultError(.noCredentials, "")) { try key(["AWS_PROFILE": "bare"]) }
        #expect(throws: VaultError(.credentialSourceFailed, "")) { try key(["AWS_ACCESS_KEY_ID": "ENVKEY"]) }
        let source = try S3Configuration.load(environment: env.merging(["AWS_PROFILE": "proc"]) { $1 })
        _ = try source.credentials.current()
        #expect(source.credentialSource == "the credential_process of profile 'proc'")
    }

    /// A failing credential_process is named with its status; what it printed never is.
    @Test func aFailingProcessNeverEchoesItsOutput() throws {
        let secret = "hunter2-\(UUID().uuidString)"
        let script = try write("#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"\(secret)\"}'\nexit 3\n", mode: 0o700)
        let half = try write("#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"\(secret)\"}'\n", mode: 0o700)
        for (command, expected) in [(script, "exited with status 3"), (half, "no AccessKeyId and SecretAccessKey"), ("\(script) 'open", "unbalanced quote")] {
            let config = try write("[default]\ncredential_process = \(command)\n")
            do {
                _ = try S3Configuration.load(environment: ["HOME": "/nonexistent", "AWS_CONFIG_FILE": config]).credentials.current()
                Issue.record("\(command) gave credentials")
            } catch let error as VaultError {
                #expect(error.code == .credentialSourceFailed)
                #expect(error.reason.contains(expected), "\(error.reason)")
                #expect(!error.reason.contains(secret))
            }
        }
    }

    /// Where STS and S3 are: the variables, then the profile's `services` section, then AWS's own.
    @Test func serviceEndpointsAsTheSDKsReadThem() throws {
        let config = try write("""
        [profile local]
        region = eu-west-1
        services = lab
        [services lab]
        s3 =
          endpoint_url = http://127.0.0.1:9000
        sts =
          endpoint_url = http://127.0.0.1:9100
        [profile plain]
        region = eu-west-1
        """)
        let local = ["HOME": "/nonexistent", "AWS_CONFIG_FILE": config, "AWS_PROFILE": "local"]
        #expect(try S3Configuration.load(environment: local).endpoint.url == "http://127.0.0.1:9000")
        #expect(STS(settings: try AWSSettings(environment: local)).url == "http://127.0.0.1:9100")
        let overridden = local.merging(["AWS_ENDPOINT_URL_STS": "http://127.0.0.1:9200/", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9300"]) { $1 }
        #expect(try S3Configuration.load(environment: overridden).endpoint.url == "http://127.0.0.1:9300")
        #expect(STS(settings: try AWSSettings(environment: overridden)).url == "http://127.0.0.1:9200")
        let plain = ["HOME": "/nonexistent", "AWS_CONFIG_FILE": config, "AWS_PROFILE": "plain"]
        #expect(STS(settings: try AWSSettings(environment: plain)).url == "https://sts.eu-west-1.amazonaws.com")
        #expect(STS(settings: try AWSSettings(environment: plain.merging(["AWS_REGION": "ap-south-2"]) { $1 })).url == "https://sts.ap-south-2.amazonaws.com")
    }

    /// Refusals that need no server: a loop of source profiles, a role without a source, both
    /// sources, an unknown credential_source, mfa_serial, a profile AWS_PROFILE names that is not there.
    @Test func brokenRoleProfilesAreRefusedBeforeAnyRequest() throws {
        let config = try write("""
        [profile a]
        role_arn = arn:aws:iam::1:role/a
        source_profile = b
        [profile b]
        role_arn = arn:aws:iam::1:role/b
        source_profile = a
        [profile lonely]
        role_arn = arn:aws:iam::1:role/x
        [profile both]
        role_arn = arn:aws:iam::1:role/x
        source_profile = a
        credential_source = Environment
        [profile odd]
        role_arn = arn:aws:iam::1:role/x
        credential_source = Laptop
        [profile mfa]
        role_arn = arn:aws:iam::1:role/x
        credential_source = Environment
        mfa_serial = arn:aws:iam::1:mfa/me
        """)
        let expected = ["a": "its source_profile chain loops: a → b → a", "lonely": "neither source_profile nor credential_source",
                        "both": "both source_profile and credential_source", "odd": "credential_source 'Laptop' is not one of",
                        "mfa": "mfa_serial asks for a code at a prompt", "ghost": "the profile 'ghost' that AWS_PROFILE names is in neither"]
        for (profile, message) in expected {
            let environment = ["HOME": "/nonexistent", "AWS_CONFIG_FILE": config, "AWS_PROFILE": profile, "AWS_ENDPOINT_URL_STS": "http://127.0.0.1:1",
                               "AWS_ACCESS_KEY_ID": profile == "ghost" ? "AKID" : "", "AWS_SECRET_ACCESS_KEY": "s"]
            do {
                _ = try S3Configuration.load(environment: environment).credentials.current()
                Issue.record("profile \(profile) gave credentials")
            } catch let error as VaultError {
                #expect(error.reason.contains(message), "\(error.reason)")
            }
        }
    }

    @Test func commandsAreSplitAsPythonsShlexSplitsThem() {
        #expect(CredentialProcess.split("a b  c") == ["a", "b", "c"])
        #expect(CredentialProcess.split("/bin/tool --profile 'my profile' \"x \\\" y\" z\\ w") == ["/bin/tool", "--profile", "my profile", "x \" y", "z w"])
        #expect(CredentialProcess.split("a 'b\\c'") == ["a", "b\\c"])
        #expect(CredentialProcess.split("a \"b\\c\"") == ["a", "b\\c"])
        #expect(CredentialProcess.split("a ''") == ["a", ""])
        #expect(CredentialProcess.split("a 'b") == nil)
        #expect(CredentialProcess.split("$(rm -rf /) ; x") == ["$(rm", "-rf", "/)", ";", "x"], "no shell: these are plain words")
    }

    @Test func theContainerEndpointOnlyOverLoopbackOrTheLinkLocalHosts() throws {
        func endpoint(_ full: String) throws -> ContainerEndpoint? {
            try ContainerEndpoint(settings: AWSSettings(environment: ["HOME": "/nonexistent", "AWS_CONTAINER_CREDENTIALS_FULL_URI": full]))
        }
        for allowed in ["http://127.0.0.1:8080/creds", "http://127.3.4.5/x", "http://169.254.170.2/v2/credentials/x", "http://169.254.170.23/v1/credentials",
                        "http://[fd00:ec2::23]/v1/credentials", "http://localhost:9/x", "http://[::1]:80/", "https://creds.example.org/x"] {
            #expect(try endpoint(allowed) != nil, "\(allowed)")
        }
        for refused in ["http://creds.example.org/x", "http://10.0.0.1/x", "http://169.254.169.254/latest", "ftp://127.0.0.1/x", "http://user:pw@127.0.0.1/x"] {
            #expect(throws: VaultError(.credentialSourceFailed, "")) { try endpoint(refused) }
        }
        let relative = try ContainerEndpoint(settings: AWSSettings(environment: ["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/abc",
                                                                                  "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1/x"]))
        #expect(relative?.url == "http://169.254.170.2/v2/credentials/abc")
    }

    @Test func theSSOCacheFileIsNamedAsTheCLINamesIt() {
        // botocore: hashlib.sha1("my-sso".encode()).hexdigest()
        #expect(Hex.encode(SHA1.hash(Array("my-sso".utf8))) == "0ad374308c5a4e22f723adf10145eafad7c4031c")
        #expect(Hex.encode(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Hex.encode(SHA1.hash(Array(repeating: UInt8(ascii: "a"), count: 1_000))) == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
    }

    @Test func anExpiredSSOTokenAsksForALogin() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("hvt-sso-\(UUID().uuidString)").path
        written.append(home)
        try FileManager.default.createDirectory(atPath: "\(home)/.aws/sso/cache", withIntermediateDirectories: true)
        let token = "sso-token-\(UUID().uuidString)"
        let name = Hex.encode(SHA1.hash(Array("corp".utf8)))
        try Array("{\"accessToken\": \"\(token)\", \"expiresAt\": \"2020-01-01T00:00:00Z\"}".utf8).write(to: "\(home)/.aws/sso/cache/\(name).json")
        try Array("[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = Reader\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n".utf8)
            .write(to: "\(home)/config")
        do {
            _ = try S3Configuration.load(environment: ["HOME": home, "AWS_CONFIG_FILE": "\(home)/config", "AWS_PROFILE": "dev"]).credentials.current()
            Issue.record("an expired SSO token gave credentials")
        } catch let error as VaultError {
            #expect(error.reason.contains("expired"), "\(error.reason)")
            #expect(error.hint == "log in, then run the command again: aws sso login --sso-session corp")
            #expect(!error.reason.contains(token))
        }
    }
}

private extension Array where Element == UInt8 {
    func write(to path: String) throws { try Data(self).write(to: URL(fileURLWithPath: path)) }
}
