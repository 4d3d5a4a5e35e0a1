/// The environment every child of the suite gets (issue 44): only what a program needs to find
/// itself, its files, its locale, its proxy and the AWS profile it may read; never a credential
/// the tool holds (`AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
/// `AWS_CONTAINER_AUTHORIZATION_TOKEN`, `PGPASSWORD`, anything else). A key command that needs
/// more has its names listed in `HVT_CHILD_ENV` (white space or commas between them), which a
/// person sets knowingly (docs/conventions.md, "Secrets"). An allow-list, not a deny-list: a
/// secret variable the suite has never heard of stays behind too.
package enum ChildEnvironment {
    /// Names passed as they are.
    static let passed: Set<String> = [
        // Where programs and files are, who runs them, their language and time.
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
        // Secrets managers a key command calls: pass and GnuPG, a desktop keyring.
        "GNUPGHOME", "GPG_TTY", "DBUS_SESSION_BUS_ADDRESS",
        // Proxies, as curl and botocore read them.
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
        // The AWS profile a credential_process or a secrets manager's CLI reads: settings and
        // the paths of files, none of them a credential.
        "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
        "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT",
        "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "AWS_STS_REGIONAL_ENDPOINTS", "AWS_RETRY_MODE", "AWS_MAX_ATTEMPTS",
        "AWS_SDK_LOAD_CONFIG",
    ]
    /// Families of names passed as they are: the locale's categories, the XDG folders,
    /// password-store's settings and the AWS endpoints by service.
    static let passedPrefixes = ["LC_", "XDG_", "PASSWORD_STORE_", "AWS_ENDPOINT_URL"]
    /// The variable naming more variables to pass.
    package static let extraNamesVariable = "HVT_CHILD_ENV"

    /// The child's environment: what of `environment` is passed, then `extra` (the suite's own
    /// settings for the child, `HVT_HOUSEHOLD`, which win).
    package static func minimal(from environment: [String: String], adding extra: [String: String] = [:]) -> [String: String] {
        let named = Set((environment[extraNamesVariable] ?? "")
            .split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" }).map(String.init))
        var kept = environment.filter { name, _ in
            passed.contains(name) || named.contains(name) || passedPrefixes.contains { name.hasPrefix($0) }
        }
        kept.merge(extra) { $1 }
        return kept
    }
}
