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

    public init(_ code: Code, _ reason: String, hint: String? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = Self.bounded(reason)
        self.hint = hint.map(Self.bounded)
        self.file = file
        self.line = line
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
    }

    /// A stable error code. New codes may be added; match on the ones you handle.
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
        /// A rolling integrity check found damaged or truncated objects, or unreadable keys.
        public static let fleetCheckFailed = Code("fleetCheckFailed", .operational)
        /// An S3 Inventory report (its manifest.json or a CSV file) is not in the published
        /// layout, or its gzip data does not inflate.
        public static let malformedInventory = Code("malformedInventory", .invalidInput)
        /// The envelope opened, but what is inside contradicts its header.
        public static let corruptVault = Code("corruptVault", .invalidInput)
        /// An AEAD tag did not verify: wrong key, or the data was changed.
        public static let authenticationFailed = Code("authenticationFailed", .authentication)
        /// The key given belongs to another household or document.
        public static let keyMismatch = Code("keyMismatch", .authentication)
        /// A signature did not verify.
        public static let badSignature = Code("badSignature", .authentication)
        /// A library call failed where it should not (allocation, initialisation).
        public static let cryptoFailure = Code("cryptoFailure", .operational)
        /// Reading or writing a file failed.
        public static let io = Code("io", .operational)
    }
}

// MARK: - Factories: one per refusal of the write path and the limits (issue 16)

extension VaultError.Code {
    /// An output is the same file as an input or as another output.
    public static let sameFile = VaultError.Code(name: "sameFile", category: .refused)
    /// An output is not a regular file that may be replaced (a FIFO, a device, a folder).
    public static let unsafeOutput = VaultError.Code(name: "unsafeOutput", category: .refused)
    /// An output that must be new (a key, a share, a plan) already exists.
    public static let outputExists = VaultError.Code(name: "outputExists", category: .refused)
    /// A file given as a batch's journal is some other database.
    public static let notAJournal = VaultError.Code(name: "notAJournal", category: .refused)
    /// An input is larger than its documented limit.
    public static let tooLarge = VaultError.Code(name: "tooLarge", category: .invalidInput)
    /// A number is outside the range the format or the option allows.
    public static let outOfRange = VaultError.Code(name: "outOfRange", category: .invalidInput)
}

extension VaultError {
    /// `output` would overwrite `other` (an input, or another output of the same command).
    public static func sameFile(output: String, other: String, otherIsInput: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        otherIsInput
            ? VaultError(.sameFile, "\(output) is the same file as \(other); inputs are never overwritten", file: file, line: line)
            : VaultError(.sameFile, "\(output) is the same file as \(other); two outputs cannot share a file", file: file, line: line)
    }

    /// An output that may not be replaced, with why.
    public static func refusedOutput(_ path: String, _ why: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unsafeOutput, "output '\(path)' \(why); refusing to write to it", file: file, line: line)
    }

    /// A secret key's output already exists. A restore never replaces a key file: the file there
    /// may be the family's current key, and the sheet a retired one.
    public static func keyFileExists(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outputExists, "'\(path)' already exists; a key file is never replaced",
                   hint: "write the key to a new file and compare the two public keys; replacing a key file is a mv you make knowingly",
                   file: file, line: line)
    }

    /// An output that must be new already exists.
    public static func alreadyExists(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outputExists, "'\(path)' already exists; refusing to overwrite it", hint: "choose another file name, or move the old file away first",
                   file: file, line: line)
    }

    /// An input past its documented limit.
    public static func tooLarge(what: String, name: String, limit: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "\(what) '\(name)' is larger than \(InputLimits.describe(bytes: limit)), the most a \(what) may be", file: file, line: line)
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
    /// An imported row is already in the registry.
    public static let alreadyImported = VaultError.Code(name: "alreadyImported", category: .invalidInput)
    /// A vault key was given where a parent key belongs.
    public static let vaultKeyGivenAsParentKey = VaultError.Code(name: "vaultKeyGivenAsParentKey", category: .authentication)
    /// An encrypted secret was given without the passphrase it needs.
    public static let passphraseNeeded = VaultError.Code(name: "passphraseNeeded", category: .invalidInput)
    /// A three-way merge would write a vault that does not pass check.
    public static let mergeFailsCheck = VaultError.Code(name: "mergeFailsCheck", category: .refused)
    /// The registry has no such device, conversation or batch.
    public static let notInRegistry = VaultError.Code(name: "notInRegistry", category: .invalidInput)
    /// A revocation batch id is already in the log: a second batch under it would mix two.
    public static let batchIdTaken = VaultError.Code(name: "batchIdTaken", category: .refused)
    /// A parent key (nsec) was given where a vault key belongs.
    public static let parentKeyGivenAsVaultKey = VaultError.Code(name: "parentKeyGivenAsVaultKey", category: .invalidInput)
    /// A batch journal was started for another manifest or target version.
    public static let journalOfAnotherBatch = VaultError.Code(name: "journalOfAnotherBatch", category: .refused)
    /// An earlier version's batch journal is inside the output folder.
    public static let earlierJournal = VaultError.Code(name: "earlierJournal", category: .refused)
    /// The batch journal must be named: the output folder is `.`, `..` or `/`.
    public static let journalNeedsAName = VaultError.Code(name: "journalNeedsAName", category: .invalidInput)
    /// There is no file at the registry's path. Making one is the next step.
    public static let noRegistry = VaultError.Code(name: "noRegistry", category: .operational)
    /// A SQLite registry left mid-transaction that this user may not roll back.
    public static let registryNeedsRollback = VaultError.Code(name: "registryNeedsRollback", category: .operational)
    /// The file is another application's database.
    public static let notARegistry = VaultError.Code(name: "notARegistry", category: .invalidInput)
    /// A PostgreSQL database whose own `user_devices` or `members` differ from what the registry needs.
    public static let incompatibleRegistry = VaultError.Code(name: "incompatibleRegistry", category: .invalidInput)
    /// A registry connection string that carries a password.
    public static let passwordInConnection = VaultError.Code(name: "passwordInConnection", category: .invalidInput)
    /// A registry connection string libpq cannot parse.
    public static let badConnection = VaultError.Code(name: "badConnection", category: .invalidInput)
    /// The registry's PostgreSQL server could not be reached or refused the login.
    public static let cannotConnect = VaultError.Code(name: "cannotConnect", category: .operational)
    /// A bucket batch's manifest names a file.
    public static let fileInBucketBatch = VaultError.Code(name: "fileInBucketBatch", category: .invalidInput)
    /// A folder batch's manifest names an object in a bucket.
    public static let objectInFolderBatch = VaultError.Code(name: "objectInFolderBatch", category: .invalidInput)
}

extension VaultError {
    /// Guard rails, each already worded (by its refusal's `reason`).
    public static func fileInBucketBatch(line: Int, vault: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.fileInBucketBatch, "manifest line \(line) names '\(vault)', which is not an object in a bucket; a bucket run migrates objects only",
                   file: file, line: sourceLine)
    }

    public static func manifestOutputTwice(_ earlier: Int, _ line: Int, output: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "manifest lines \(earlier) and \(line) would both write '\(output)'", file: file, line: sourceLine)
    }

    public static func objectInFolderBatch(line: Int, object: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.objectInFolderBatch, "manifest line \(line) names an object, '\(object)'; a manifest of objects is migrated in its bucket, not into a folder",
                   file: file, line: sourceLine)
    }

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

    /// A device, conversation or batch the registry does not have, as "device X".
    public static func notInRegistry(_ what: String, registry: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notInRegistry, "the registry '\(registry)' has no \(what)", file: file, line: line)
    }

    /// Nothing at the registry's path.
    public static func registryNeedsRollback(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryNeedsRollback, "the registry '\(path)' was left in the middle of a transaction (a run was killed), and this user cannot write it to roll that back",
                   hint: "as a user who may write it, run: sqlite3 '\(path.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''"))' 'SELECT count(*) FROM sqlite_master' (SQLite rolls the transaction back), then this command again",
                   file: file, line: line)
    }

    public static func noRegistry(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noRegistry, "no registry at '\(path)'", file: file, line: line)
    }

    /// A database that lacks the registry's `missing` tables; `empty` when it has no table at
    /// all, so it can become one.
    public static func notARegistry(_ path: String, missing: [String], empty: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notARegistry, "'\(path)' is not a device registry (it lacks \(missing.joined(separator: ", ")))",
                   hint: empty ? "the database is empty: initialise it as a registry first" : nil, file: file, line: line)
    }

    /// The batch journal of a run begun by an earlier version, at `path` inside the output
    /// folder: that run resumes through it, or starts over by another name.
    public static func earlierJournal(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.earlierJournal, "'\(path)' is the journal of a run begun by an earlier version", file: file, line: line)
    }

    /// An output folder whose neighbour (`.`, `..`, `/`) is no place for a default journal.
    public static func journalNeedsAName(outDir: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.journalNeedsAName, "the output folder '\(outDir)' has no neighbouring place for the journal", file: file, line: line)
    }

    /// A parent key where a vault key belongs.
    public static func parentKeyGivenAsVaultKey(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.parentKeyGivenAsVaultKey, "\(what) holds a parent key (nsec), not a vault key", file: file, line: line)
    }

    /// A journal that records another batch: mixing two is how work gets lost.
    /// `belongsTo` is the command the journal records it was started by; journals older than
    /// that record (issue 38) are refused as before, without it.
    public static func journalOfAnotherBatch(_ path: String, belongsTo command: String? = nil, file: String = #fileID, line: UInt = #line) -> VaultError {
        guard let command else {
            return VaultError(.journalOfAnotherBatch, "the journal '\(path)' belongs to another batch (another manifest or target version)", file: file, line: line)
        }
        return VaultError(.journalOfAnotherBatch, "the journal '\(path)' belongs to another batch: `\(command)`", file: file, line: line)
    }

    /// A batch id already used by an earlier revocation.
    public static func batchIdTaken(_ id: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.batchIdTaken, "batch id '\(id)' is already in the revocation log; nothing was changed", file: file, line: line)
    }

    /// A PostgreSQL database whose tables differ from the registry's, each difference a sentence.
    public static func incompatibleRegistry(_ name: String, differences: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.incompatibleRegistry, "the database '\(name)' cannot become a registry: \(differences.joined(separator: "; ")); nothing was changed",
                   file: file, line: line)
    }

    /// A password inside a connection string: it would sit in the shell history and in `ps`.
    /// The message never repeats the string.
    public static func passwordInConnection(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.passwordInConnection, "the connection string contains a password", file: file, line: line)
    }

    /// A connection string libpq cannot parse. libpq's reason is left out: it may quote the
    /// string, password and all.
    public static func badConnection(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badConnection, "the connection string cannot be read as a libpq URI or key=value list", file: file, line: line)
    }

    /// No connection to the registry's server, with libpq's reason.
    public static func cannotConnect(_ name: String, _ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cannotConnect, "cannot connect to the registry '\(name)': \(reason)", file: file, line: line)
    }

    /// An imported row the registry already has.
    public static func alreadyImported(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.alreadyImported, "the registry already has this device or membership; nothing was imported", file: file, line: line)
    }
}
