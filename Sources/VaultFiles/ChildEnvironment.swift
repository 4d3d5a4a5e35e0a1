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
        // Secrets managers a key command calls: pass and GnuPG, a desktop keyring; the folders
        // systemd gives a service (its credentials are files there, read by the command).
        "GNUPGHOME", "GPG_TTY", "DBUS_SESSION_BUS_ADDRESS", "PASSWORD_STORE_DIR",
        // The locale's categories and the XDG folders, by name (a family by prefix would pass
        // LC_TOKEN or XDG_SECRET too).
        "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME", "LC_ADDRESS",
        "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER", "LC_TELEPHONE",
        "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS", "CREDENTIALS_DIRECTORY", "RUNTIME_DIRECTORY", "STATE_DIRECTORY",
        "CACHE_DIRECTORY", "LOGS_DIRECTORY", "CONFIGURATION_DIRECTORY",
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
    /// Families of names passed as they are: the AWS endpoints, by service.
    static let passedPrefixes = ["AWS_ENDPOINT_URL"]
    /// Names whose value is a URL, passed only without a credential in it (`user:password@`,
    /// a query such as `?token=`).
    static let urls: Set<String> = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                                    "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_SERVICE_ENDPOINT"]
    /// The variable naming more variables to pass.
    package static let extraNamesVariable = "HVT_CHILD_ENV"

    /// The child's environment: what of `environment` is passed, then `extra` (the suite's own
    /// settings for the child, `HVT_HOUSEHOLD`, which win).
    package static func minimal(from environment: [String: String], adding extra: [String: String] = [:]) -> [String: String] {
        let named = Set((environment[extraNamesVariable] ?? "")
            .split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" }).map(String.init))
        var kept = environment.filter { name, value in
            if named.contains(name) { return true }
            guard passed.contains(name) || passedPrefixes.contains(where: { name.hasPrefix($0) }) else { return false }
            let isURL = urls.contains(name) || name.hasPrefix("AWS_ENDPOINT_URL")
            return !isURL || !(value.contains("@") || value.contains("?"))
        }
        kept.merge(extra) { $1 }
        return kept
    }
}
