import FoundationEssentials
import VaultCore

/// The AWS SDKs' default credential chain, in botocore's order (`create_credential_resolver`):
///
/// 1. the environment: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`);
/// 2. the profile's `role_arn` with `source_profile` or `credential_source`: STS AssumeRole,
///    signed with the source's credentials (a source profile may itself assume a role);
/// 3. web identity: `AWS_WEB_IDENTITY_TOKEN_FILE`/`AWS_ROLE_ARN`/`AWS_ROLE_SESSION_NAME`, each
///    else the profile's `web_identity_token_file`/`role_arn`/`role_session_name` (EKS IRSA):
///    STS AssumeRoleWithWebIdentity;
/// 4. the profile's SSO (`sso_session` or the legacy `sso_start_url`): the AWS CLI's cached
///    token, then the SSO portal's GetRoleCredentials;
/// 5. static keys of the profile in the shared credentials file;
/// 6. the profile's `credential_process`;
/// 7. static keys of the profile in the config file;
/// 8. the container endpoint (ECS, Batch, EKS Pod Identity): `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`
///    or `…_FULL_URI`;
/// 9. EC2 instance metadata (IMDSv2), unless `AWS_EC2_METADATA_DISABLED=true`.
///
/// A source that is not configured is passed over, and the reason kept for the message when
/// nothing is found; a source that is configured but fails ends the search with its error, as
/// in the SDKs (a role that cannot be assumed must not silently become the instance's role).
/// Instance metadata alone is passed over when it cannot be reached: off EC2 it never can.
struct CredentialChain: Sendable {
    let settings: AWSSettings

    func resolve() throws -> ResolvedCredentials {
        var passed: [String] = []
        let name = settings.profileName
        // As botocore and the AWS CLI: a profile named on purpose must exist, whatever else is set.
        if settings.env("AWS_PROFILE") != nil, settings.profile(name) == nil {
            throw VaultError.profileNotFound(name, credentialsFile: settings.credentialsPath, configFile: settings.configPath)
        }
        if let found = try environment(&passed) { return found }
        // A profile in neither file is one line of the message, not one per source it could have.
        let profileExists = settings.profile(name) != nil
        if profileExists, let found = try assumedRole(&passed) { return found }
        if let found = try webIdentity(profile: name, useEnvironment: true, &passed) { return found }
        if profileExists, let found = try profileSources(name, &passed) { return found }
        if !profileExists {
            let files = [settings.credentialsPath, settings.configPath].map { settings.fileExists($0) ? $0 : "\($0) (no such file)" }
            passed.append("profile '\(name)' (in neither \(files[0]) nor \(files[1]))")
        }
        if let found = try container(&passed) { return found }
        if let found = try instanceMetadata(&passed) { return found }
        throw VaultError.noCredentials(passed)
    }

    // MARK: The environment

    private func environment(_ passed: inout [String]) throws -> ResolvedCredentials? {
        guard let id = settings.env("AWS_ACCESS_KEY_ID") else {
            passed.append("the environment (AWS_ACCESS_KEY_ID unset)")
            return nil
        }
        guard let secret = settings.env("AWS_SECRET_ACCESS_KEY") else {
            throw VaultError.credentialSourceFailed("the environment", "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
        }
        let credentials = try SigV4.Credentials(accessKeyID: id, secret: .fromText(secret), sessionToken: settings.env("AWS_SESSION_TOKEN"))
        return .fixed(credentials, source: "the environment (AWS_ACCESS_KEY_ID)")
    }

    // MARK: Profiles

    /// Steps 4 to 7, the ones a source profile is also read through (without the environment).
    private func profileSources(_ name: String, _ passed: inout [String]) throws -> ResolvedCredentials? {
        if let found = try sso(profile: name, &passed) { return found }
        if let found = try staticKeys(settings.credentialsSection(name), profile: name, file: settings.credentialsPath, &passed) { return found }
        if let found = try process(profile: name, &passed) { return found }
        return try staticKeys(settings.configSection(name), profile: name, file: settings.configPath, &passed)
    }

    private func staticKeys(_ section: ProfileFile.Section?, profile: String, file: String, _ passed: inout [String]) throws -> ResolvedCredentials? {
        let source = "profile '\(profile)' in \(file)"
        guard let section else {
            passed.append("\(source) (\(settings.fileExists(file) ? "no such profile" : "no such file"))")
            return nil
        }
        guard let id = section["aws_access_key_id"] else {
            passed.append("\(source) (no aws_access_key_id)")
            return nil
        }
        guard let secret = section["aws_secret_access_key"] else {
            throw VaultError.credentialSourceFailed(source, "aws_access_key_id is set but aws_secret_access_key is not")
        }
        let token = section["aws_session_token"] ?? section["aws_security_token"]
        return .fixed(try SigV4.Credentials(accessKeyID: id, secret: .fromText(secret), sessionToken: token), source: source)
    }

    /// `role_arn` with `source_profile` or `credential_source`, followed through source profiles
    /// that assume roles themselves; a loop of source profiles is refused.
    private func assumedRole(_ passed: inout [String]) throws -> ResolvedCredentials? {
        let name = settings.profileName
        guard let profile = settings.profile(name), profile["role_arn"] != nil, profile["web_identity_token_file"] == nil else {
            passed.append("profile '\(name)' assuming a role (no role_arn)")
            return nil
        }
        let chain = self
        let first = try chain.assumeRole(profile: name, visited: [])
        return ResolvedCredentials(source: "role \(profile["role_arn"]!) assumed by profile '\(name)' (STS AssumeRole)", first: first) {
            try chain.assumeRole(profile: name, visited: [])
        }
    }

    private func assumeRole(profile name: String, visited: [String]) throws -> ExpiringCredentials {
        let what = "profile '\(name)' assuming a role"
        guard let profile = settings.profile(name), let role = profile["role_arn"] else {
            throw VaultError.credentialSourceFailed(what, "the profile does not exist or has no role_arn")
        }
        guard profile["mfa_serial"] == nil else {
            throw VaultError.credentialSourceFailed(what, "mfa_serial asks for a code at a prompt, which these tools never show; "
                                                    + "get temporary credentials first (aws sts get-session-token) or use a profile without it")
        }
        let source: ExpiringCredentials
        switch (profile["source_profile"], profile["credential_source"]) {
        case (let sourceProfile?, nil):
            source = try credentials(ofSourceProfile: sourceProfile, visited: visited + [name], for: what)
        case (nil, let credentialSource?):
            source = try credentials(ofCredentialSource: credentialSource, for: what)
        case (.some, .some):
            throw VaultError.credentialSourceFailed(what, "the profile has both source_profile and credential_source; it may have one")
        case (nil, nil):
            throw VaultError.credentialSourceFailed(what, "the profile has role_arn but neither source_profile nor credential_source")
        }
        return try STS(settings: settings).assumeRole(role: role, sessionName: profile["role_session_name"] ?? Self.sessionName(),
                                                      externalID: profile["external_id"], duration: profile["duration_seconds"],
                                                      signedWith: source.credentials, what: what)
    }

    /// The longest chain of roles followed (botocore follows any, recursively: 5,000 chained
    /// profiles crashed the tool's stack). A real chain has two or three.
    static let maximumRoleChain = 32

    private func credentials(ofSourceProfile name: String, visited: [String], for what: String) throws -> ExpiringCredentials {
        guard visited.count <= Self.maximumRoleChain else {
            throw VaultError.credentialSourceFailed(what, "its source_profile chain is longer than \(Self.maximumRoleChain) roles")
        }
        guard let profile = settings.profile(name) else {
            throw VaultError.credentialSourceFailed(what, "its source_profile '\(name)' does not exist")
        }
        let hasKeys = profile["aws_access_key_id"] != nil
        // As botocore: a profile with keys (even one naming itself as its source) or without a
        // role is read for credentials; one with a role assumes it in turn.
        if hasKeys || profile["role_arn"] == nil {
            var passed: [String] = []
            if let found = try webIdentity(profile: name, useEnvironment: false, &passed) ?? profileSources(name, &passed) {
                return found.first
            }
            throw VaultError.credentialSourceFailed(what, "its source_profile '\(name)' has no credentials: tried " + passed.joined(separator: ", "))
        }
        guard !visited.contains(name) else {
            throw VaultError.credentialSourceFailed(what, "its source_profile chain loops: " + (visited + [name]).joined(separator: " → "))
        }
        return try assumeRole(profile: name, visited: visited)
    }

    private func credentials(ofCredentialSource source: String, for what: String) throws -> ExpiringCredentials {
        var passed: [String] = []
        let found: ResolvedCredentials?
        switch source {
        case "Environment": found = try environment(&passed)
        case "Ec2InstanceMetadata": found = try instanceMetadata(&passed)
        case "EcsContainer": found = try container(&passed)
        default:
            throw VaultError.credentialSourceFailed(what, "credential_source '\(source)' is not one of Environment, Ec2InstanceMetadata, EcsContainer")
        }
        guard let found else {
            throw VaultError.credentialSourceFailed(what, "its credential_source \(source) gave none: " + passed.joined(separator: ", "))
        }
        return found.first
    }

    /// A role session name as botocore makes one when none is configured.
    static func sessionName() -> String { "household-vault-tools-\(Int(Date().timeIntervalSince1970))" }

    // MARK: Web identity

    private func webIdentity(profile name: String, useEnvironment: Bool, _ passed: inout [String]) throws -> ResolvedCredentials? {
        let profile = settings.profile(name)
        func setting(_ variable: String, _ key: String) -> String? {
            (useEnvironment ? settings.env(variable) : nil) ?? profile?[key]
        }
        guard let tokenFile = setting("AWS_WEB_IDENTITY_TOKEN_FILE", "web_identity_token_file") else {
            passed.append(!useEnvironment ? "web identity (profile '\(name)' has no web_identity_token_file)"
                          : profile == nil ? "web identity (AWS_WEB_IDENTITY_TOKEN_FILE unset)"
                          : "web identity (AWS_WEB_IDENTITY_TOKEN_FILE unset, profile '\(name)' has no web_identity_token_file)")
            return nil
        }
        let what = "web identity from \(QuotedInput(tokenFile))"
        guard let role = setting("AWS_ROLE_ARN", "role_arn") else {
            throw VaultError.credentialSourceFailed(what, "a web identity token file is set but no role (AWS_ROLE_ARN or role_arn)")
        }
        let sessionName = setting("AWS_ROLE_SESSION_NAME", "role_session_name") ?? Self.sessionName()
        let sts = STS(settings: settings)
        // The token file is read at every fetch: EKS replaces it before the token expires.
        let fetch: @Sendable () throws -> ExpiringCredentials = {
            try sts.assumeRoleWithWebIdentity(role: role, sessionName: sessionName, tokenFile: tokenFile, what: what)
        }
        return ResolvedCredentials(source: "role \(role) by web identity (\(QuotedInput(tokenFile)))", first: try fetch(), fetchAgain: fetch)
    }

    // MARK: SSO, credential_process

    private func sso(profile name: String, _ passed: inout [String]) throws -> ResolvedCredentials? {
        guard let profile = settings.profile(name),
              ["sso_session", "sso_start_url", "sso_region", "sso_account_id", "sso_role_name"].contains(where: { profile[$0] != nil }) else {
            passed.append("profile '\(name)' SSO (no sso_session or sso_start_url)")
            return nil
        }
        let sso = try SSO(settings: settings, profile: name, values: profile)
        return ResolvedCredentials(source: "role \(sso.roleName) in account \(sso.accountID) by SSO (profile '\(name)')", first: try sso.fetch()) {
            try sso.fetch()
        }
    }

    private func process(profile name: String, _ passed: inout [String]) throws -> ResolvedCredentials? {
        guard let command = settings.profile(name)?["credential_process"] else {
            passed.append("profile '\(name)' credential_process (none)")
            return nil
        }
        let process = try CredentialProcess(command: command, profile: name, environment: settings.environment)
        return ResolvedCredentials(source: "the credential_process of profile '\(name)'", first: try process.run()) { try process.run() }
    }

    // MARK: Container and instance metadata

    private func container(_ passed: inout [String]) throws -> ResolvedCredentials? {
        guard let endpoint = try ContainerEndpoint(settings: settings) else {
            passed.append("the container endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI unset)")
            return nil
        }
        return ResolvedCredentials(source: "the container endpoint \(endpoint.url)", first: try endpoint.fetch()) { try endpoint.fetch() }
    }

    private func instanceMetadata(_ passed: inout [String]) throws -> ResolvedCredentials? {
        guard let metadata = try InstanceMetadata(settings: settings) else {
            passed.append("EC2 instance metadata (AWS_EC2_METADATA_DISABLED)")
            return nil
        }
        let first: (credentials: ExpiringCredentials, role: String)
        switch metadata.fetch() {
        case .success(let found): first = found
        case .failure(let problem) where problem.isBusy:
            // The instance's metadata service is there and failing: a retry may get through.
            throw VaultError.credentialSourceBusy("EC2 instance metadata at \(metadata.endpoint)", problem.message)
        case .failure(let problem):
            passed.append("EC2 instance metadata at \(metadata.endpoint) (\(problem.message))")
            return nil
        }
        return ResolvedCredentials(source: "EC2 instance metadata (role \(first.role))", first: first.credentials) {
            try metadata.fetch().mapError { VaultError.credentialSourceUnreachable("EC2 instance metadata", metadata.endpoint, $0.message) }.get().credentials
        }
    }
}

extension ResolvedCredentials {
    static func fixed(_ credentials: SigV4.Credentials, source: String) -> ResolvedCredentials {
        ResolvedCredentials(source: source, first: ExpiringCredentials(credentials)) { ExpiringCredentials(credentials) }
    }
}

extension SecretBytes {
    /// A secret read as text (from the environment, a file, an answer) into protected memory.
    /// The text itself is an ordinary string until then, a known limit (docs/object-storage.md).
    static func fromText(_ text: String) throws -> SecretBytes {
        var bytes = Array(text.utf8)
        return try SecretBytes(consuming: &bytes)
    }
}

/// The environment and the two shared files, as the chain and the configuration read them.
struct AWSSettings: Sendable {
    let environment: [String: String]
    let profileName: String
    let configPath: String
    let credentialsPath: String
    let config: ProfileFile?
    let credentials: ProfileFile?
    let region: String
    let noProxy: String?

    init(environment: [String: String]) throws {
        self.environment = environment
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = env("HOME") ?? "/nonexistent"
        profileName = env("AWS_PROFILE") ?? "default"
        configPath = env("AWS_CONFIG_FILE") ?? "\(home)/.aws/config"
        credentialsPath = env("AWS_SHARED_CREDENTIALS_FILE") ?? "\(home)/.aws/credentials"
        config = try ProfileFile.read(configPath)
        credentials = try ProfileFile.read(credentialsPath)
        let section = config?.section(Self.configSectionName(profileName))
        region = env("AWS_REGION") ?? env("AWS_DEFAULT_REGION") ?? section?["region"] ?? "us-east-1"
        noProxy = env("NO_PROXY") ?? env("no_proxy")
    }

    func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }

    var home: String { env("HOME") ?? "/nonexistent" }

    /// In the config file a profile's section is "[profile NAME]", except "[default]".
    static func configSectionName(_ profile: String) -> String { profile == "default" ? "default" : "profile \(profile)" }

    func configSection(_ profile: String) -> ProfileFile.Section? { config?.section(Self.configSectionName(profile)) }
    func credentialsSection(_ profile: String) -> ProfileFile.Section? { credentials?.section(profile) }

    /// The profile as botocore sees it: the config file's section with the credentials file's
    /// values over it; nil when neither file has it.
    func profile(_ name: String) -> [String: String]? {
        let fromConfig = configSection(name), fromCredentials = credentialsSection(name)
        guard fromConfig != nil || fromCredentials != nil else { return nil }
        return (fromConfig?.values ?? [:]).merging(fromCredentials?.values ?? [:]) { $1 }
    }

    func fileExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// A service's endpoint as the SDKs read it: `AWS_ENDPOINT_URL_<SERVICE>`, `AWS_ENDPOINT_URL`,
    /// the profile's `services` section's block for the service, the profile's `endpoint_url`;
    /// nil for AWS's own.
    func endpoint(service: String) -> String? {
        let section = configSection(profileName)
        let services = section?["services"].flatMap { config?.section("services \($0)") }
        return env("AWS_ENDPOINT_URL_\(service.uppercased())") ?? env("AWS_ENDPOINT_URL")
            ?? services?.nested(service)["endpoint_url"] ?? section?["endpoint_url"]
    }

    /// The proxy for a request to `url`: `HTTPS_PROXY` or `HTTP_PROXY` by its scheme.
    func proxy(for url: String) -> String? {
        url.hasPrefix("https:") ? env("HTTPS_PROXY") ?? env("https_proxy") : env("HTTP_PROXY") ?? env("http_proxy")
    }
}
