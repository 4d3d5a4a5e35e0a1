/// An error from VaultCore: a stable ``Code`` that says what kind of failure it was, and a
/// reason for a person.
///
/// Equality looks at the code only, so tests can assert which error came without matching
/// prose (the shape of swift-certificates' `CertificateError`). Reasons may quote public
/// input such as a file name or a device id, never secret input.
public struct VaultError: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Code
    public let reason: String
    /// An optional next step for the user ("pass --vault-key-file instead").
    public let hint: String?
    public let file: String
    public let line: UInt

    /// Made only here and by each layer's factories (`VaultError.keyFileExists`, …), one per
    /// outcome beside the code that raises it; context is added on the way up by
    /// ``withContext(prefix:suffix:hint:)``, never by building the error again.
    package init(_ code: Code, _ reason: String, hint: String? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        // Secrets withheld before anything is cut: an error quotes its input, and wherever the
        // error goes (standard error, a report line, a JSON event), what reads as a key does not
        // (issue 44: SecretRedaction, one door for every error of every layer).
        self.reason = Self.bounded(SecretRedaction.redacting(reason))
        self.hint = hint.map { Self.bounded(SecretRedaction.redacting($0)) }
        self.file = file
        self.line = line
    }

    /// This error said about something: `prefix` before its reason ("'a.vault': ", "list.jsonl
    /// line 3: "), `suffix` after it, and `hint`, when given, in place of its own. The code and
    /// the place that raised it stay, so a test still sees which error came.
    public func withContext(prefix: String = "", suffix: String = "", hint: String? = nil) -> VaultError {
        VaultError(code, prefix + reason + suffix, hint: hint ?? self.hint, file: file, line: line)
    }

    /// The most a reason or hint says: one that quotes an input (a 5-million-digit number, a
    /// megabyte line) is cut here, whatever quoted it, so no message grows with its input.
    public static let maximumMessageLength = 1_000

    /// `text` cut to ``maximumMessageLength`` characters, saying how much was left out.
    public static func bounded(_ text: String) -> String {
        guard text.utf8.count > maximumMessageLength else { return text }
        let kept = text.prefix(maximumMessageLength)
        return kept + "… (\(text.utf8.count - kept.utf8.count) more bytes)"
    }

    public static func == (lhs: VaultError, rhs: VaultError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "VaultError.\(code): \(reason)" }

    /// What kind of failure, broad enough for an exit code.
    public enum Category: Sendable, Hashable {
        /// The system failed us: I/O, memory, a library that would not initialise.
        case operational
        /// The input is malformed or of an unknown version.
        case invalidInput
        /// A key is wrong, or a file was changed: authentication or verification failed.
        case authentication
        /// The operation would lose data or break a guard rail.
        case refused
        /// Something a retry gets past: the object store throttled (503 SlowDown), kept failing
        /// (5xx) or could not be reached, through every attempt.
        case temporary
        /// The configuration cannot work (a wrong endpoint, a host that does not resolve, TLS
        /// that fails, credentials refused, a missing bucket): no retry gets past it.
        case configuration
        /// The command names the wrong thing (a key folder that holds no key, a prefix that
        /// lists nothing) or lacks what it needs (an encrypted key's passphrase): as with a
        /// mistyped option, the same command would fail again.
        case usage
        /// A run found its inputs and held the key of none of them: the keys given are not
        /// these inputs' (sysexits' EX_NOINPUT).
        case noKeys
        /// A library the command needs is not installed (sysexits' EX_UNAVAILABLE): the libraries
        /// loaded on use (issue 48), each named with the Debian package that ships it.
        case unavailable
    }

    /// A stable error code. New codes may be added; match on the ones you handle. Each layer
    /// defines the codes it raises in an extension (`package init(name:category:)`): VaultCore's
    /// are here, the write path's in VaultFiles' `FileErrors.swift`, VaultFleet's in
    /// `FleetErrors.swift`, VaultRegistry's in `RegistryErrors.swift`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public let category: Category

        package init(name: String, category: Category) {
            self.init(name, category)
        }

        private init(_ name: String, _ category: Category) {
            self.name = name
            self.category = category
        }

        public var description: String { name }

        /// A key or key file could not be parsed (bech32, hex, prefix, length).
        public static let malformedKey = Code("malformedKey", .invalidInput)
        /// The 32 bytes are not a valid secp256k1 secret key or public key.
        public static let invalidKey = Code("invalidKey", .invalidInput)
        /// The bytes are not a vault envelope (magic, truncation).
        public static let malformedEnvelope = Code("malformedEnvelope", .invalidInput)
        /// The envelope names a format, suite or schema version this build does not know.
        public static let unsupportedVersion = Code("unsupportedVersion", .invalidInput)
        /// The vault document is not valid JSON of the schema.
        public static let malformedDocument = Code("malformedDocument", .invalidInput)
        /// The envelope opened, but what is inside contradicts its header.
        public static let corruptVault = Code("corruptVault", .invalidInput)
        /// An AEAD tag did not verify: wrong key, or the data was changed.
        public static let authenticationFailed = Code("authenticationFailed", .authentication)
        /// The key given belongs to another household or document.
        public static let keyMismatch = Code("keyMismatch", .authentication)
        /// A signature did not verify.
        public static let badSignature = Code("badSignature", .authentication)
        /// A cryptographic library (libsodium, libsecp256k1) or protected memory failed where it
        /// should not (allocation, initialisation). Other C libraries fail with ``libraryFailure``,
        /// or with a code of the layer that owns them (`sqliteFailure`, `postgresFailure`).
        public static let cryptoFailure = Code("cryptoFailure", .operational)
        /// A C library below the suite (libunistring, cairo, zbar, libqrencode, libpng) failed where
        /// it should not: memory, initialisation, a write to its stream. Input a library rejects
        /// is the input's fault, with its own code.
        public static let libraryFailure = Code("libraryFailure", .operational)
        /// Reading or writing a file failed.
        public static let io = Code("io", .operational)
    }
}

extension VaultError {
    /// `library` failed, saying what: "zbar could not create a scanner".
    package static func libraryFailure(_ library: String, _ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.libraryFailure, "\(library) \(what)", file: file, line: line)
    }
}

// MARK: - Factories: the limits (issue 16); the write path's refusals are VaultFiles'
// (`FileErrors.swift`)

extension VaultError.Code {
    /// An input is larger than its documented limit.
    public static let tooLarge = VaultError.Code(name: "tooLarge", category: .invalidInput)
    /// A number is outside the range the format or the option allows.
    public static let outOfRange = VaultError.Code(name: "outOfRange", category: .invalidInput)
}

extension VaultError {
    /// An input past its documented limit.
    public static func tooLarge(what: String, name: String, limit: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "\(what) \(FileNames.quoted(name)) is larger than \(InputLimits.describe(bytes: limit)), the most a \(what) may be", file: file, line: line)
    }

    /// A number outside its range.
    public static func outOfRange(_ what: String, _ range: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outOfRange, "\(what) must be \(range)", file: file, line: line)
    }
}

// MARK: - Factories: guard rails (typed refusals, worded without options)

extension VaultError.Code {
    /// A revocation guard rail tripped (``VaultRevocation/Refusal``, ``DeviceRegistry/Refusal``).
    public static let guardRail = VaultError.Code(name: "guardRail", category: .refused)
    /// A downgrade would drop values the older schema cannot carry.
    public static let lossyDowngrade = VaultError.Code(name: "lossyDowngrade", category: .refused)
    /// A vault key was given where a parent key belongs: a usage error (64), not a wrong key,
    /// as the key is the household's own (issue 45: a vault key alone is refused with 64).
    public static let vaultKeyGivenAsParentKey = VaultError.Code(name: "vaultKeyGivenAsParentKey", category: .usage)
    /// An encrypted secret was given without the passphrase it needs.
    public static let passphraseNeeded = VaultError.Code(name: "passphraseNeeded", category: .usage)
    /// A three-way merge would write a vault that does not pass check.
    public static let mergeFailsCheck = VaultError.Code(name: "mergeFailsCheck", category: .refused)
    /// A parent key (nsec) was given where a vault key belongs.
    public static let parentKeyGivenAsVaultKey = VaultError.Code(name: "parentKeyGivenAsVaultKey", category: .invalidInput)
}

extension VaultError {
    /// The guard rails a plan tripped, each already worded by its refusal's `reason`.
    public static func guardRails(_ reasons: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.guardRail, reasons.joined(separator: "; "), file: file, line: line)
    }

    /// A migration to `target` would drop `losses`.
    public static func lossyDowngrade(target: Int, losses: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.lossyDowngrade, "migrating to version \(target) would lose: \(losses.joined(separator: "; "))", file: file, line: line)
    }

    /// A merge whose result breaks the rules `findings` describe.
    public static func mergeFailsCheck(_ findings: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.mergeFailsCheck, "the merged vault would not pass check: " + findings.joined(separator: "; "), file: file, line: line)
    }

    /// An encrypted secret and no passphrase for it.
    public static func passphraseNeeded(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.passphraseNeeded, what, file: file, line: line)
    }

    /// The key given as the parent key is this vault's vault key.
    public static func vaultKeyGivenAsParentKey(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.vaultKeyGivenAsParentKey, "this looks like the vault's vault key, not the parent key", file: file, line: line)
    }

    /// A parent key where a vault key belongs.
    public static func parentKeyGivenAsVaultKey(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.parentKeyGivenAsVaultKey, "\(what) holds a parent key (nsec), not a vault key", file: file, line: line)
    }
}
