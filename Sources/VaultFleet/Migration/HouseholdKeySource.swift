import FoundationEssentials
import Glibc
import Synchronization
import VaultCore
import VaultFiles

/// Where a fleet run (`migrate` of a bucket, the rolling `check`) finds each household's vault
/// key: a folder of `<household id>.vaultkey` files, or a command that prints the key of the
/// household named in its environment, as restic's `--password-command` prints a password.
///
/// The command's contract:
/// - it is run once per household a run meets (the answer is kept for the run), without a
///   shell, with ``householdVariable`` set to the household id (64 lowercase hex digits);
/// - exit 0, printing the vault key (64 hex, surrounding blanks taken): the key is used;
/// - exit ``noKeyStatus`` (66, `EX_NOINPUT`), whatever it printed: the operator holds no key for
///   this household, which is `no-key`, as a household without a file in a folder is;
/// - anything else (the program not found or not executable, another status, a signal, a
///   timeout, no output or output that is no vault key) is a configuration that cannot work:
///   the run stops before it opens another vault (``HouseholdKeys/Failure``), since every
///   household would fail alike. Nothing the command printed is ever quoted.
public enum HouseholdKeySource: Sendable {
    case folder(String)
    case command(SecretCommand)

    /// The environment variable that names the household to a key command.
    public static let householdVariable = "HVT_HOUSEHOLD"
    /// A key command's answer for "no key for this household": `EX_NOINPUT`.
    public static let noKeyStatus: Int32 = 66
    /// The most a key command may take: a secrets manager asking a server, not a person typing.
    public static let commandTimeout = 30.0

    /// Refuses a folder mounted wrong before anything is listed (``VaultKeyFolder/require(_:)``);
    /// a command is first run for the first vault.
    public func requireUsable() throws {
        if case .folder(let path) = self { try VaultKeyFolder.require(path) }
    }

    /// The keys as a message names them: "the vault-key folder 'keys'".
    public var description: String {
        switch self {
        case .folder(let path): "the vault-key folder '\(path)'"
        case .command(let command): "the vault-key command '\(command.arguments[0])'"
        }
    }
}

/// One run's lookups of ``HouseholdKeySource``: a folder's file is read by `loadFile` (whose
/// errors are the vault's, as before); a command's answer is kept per household, so a
/// household with several vaults runs it once. As ``KeyCache``, past ``capacity`` answers it
/// starts over: a fleet of a million households is not held in protected memory.
public final class HouseholdKeys: Sendable {
    public static let capacity = 256

    /// A key command failed in a way that is no answer about one household: the run stops.
    /// Not a VaultError, so no job takes it for its own failure and goes on with the next.
    public struct Failure: Error, Sendable {
        public let error: VaultError
    }

    public let source: HouseholdKeySource
    private let loadFile: @Sendable (BucketMigration.KeyFiles) throws -> VaultAccess
    /// One lookup a household: workers meeting vaults of one household together wait for the
    /// first one's command instead of each running it (48 runs for 12 households of 4 vaults at
    /// --jobs 16), while other households' commands run beside it.
    private let lookups = Mutex<[HouseholdID: Lookup]>([:])
    /// Set by the first failure: every later lookup throws it without running the command again.
    private let failure = Mutex<VaultError?>(nil)

    public init(_ source: HouseholdKeySource, loadFile: @escaping @Sendable (BucketMigration.KeyFiles) throws -> VaultAccess) {
        self.source = source
        self.loadFile = loadFile
    }

    /// The household's key, or nil when the operator holds none (`no-key`).
    public func access(for household: HouseholdID) throws -> VaultAccess? {
        switch source {
        case .folder(let folder):
            let path = VaultLocation.joined(folder, VaultKeyFolder.fileName(of: household))
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return try loadFile(BucketMigration.KeyFiles(keyFile: nil, vaultKeyFile: path))
        case .command(let command):
            let lookup = lookups.withLock { lookups in
                if let known = lookups[household] { return known }
                if lookups.count >= Self.capacity { lookups.removeAll(keepingCapacity: true) }
                let new = Lookup()
                lookups[household] = new
                return new
            }
            return try lookup.answer.withLock { answer throws -> VaultAccess? in
                if let failed = failure.withLock({ $0 }) { throw Failure(error: failed) }
                if let known = answer { return known }
                do {
                    let access = try Self.ask(command, household: household)
                    answer = .some(access)
                    return access
                } catch let error as VaultError {
                    failure.withLock { $0 = $0 ?? error }
                    throw Failure(error: error)
                }
            }
        }
    }

    /// A household's answer, once asked: nil until then, `.some(nil)` for `no-key`.
    private final class Lookup: Sendable {
        let answer = Mutex<VaultAccess??>(nil)
    }

    private static func ask(_ command: SecretCommand, household: HouseholdID) throws -> VaultAccess? {
        let program = command.arguments[0]
        let outcome = try command.run(environment: [HouseholdKeySource.householdVariable: household.hex],
                                      timeout: HouseholdKeySource.commandTimeout)
        switch outcome {
        case .exited(HouseholdKeySource.noKeyStatus): return nil
        case .printed(let output):
            guard output.count > 0 else { throw VaultError.keyCommandFailed(program, household: household, "printed nothing") }
            do {
                return .vaultKey(try VaultKey(parsing: output, what: "its output"))
            } catch {
                throw VaultError.keyCommandFailed(program, household: household, "printed no vault key (64 hex digits)")
            }
        case .notStarted(let code):
            throw VaultError.keyCommandFailed(program, household: household, "could not be run (\(ErrnoText.of(code)))")
        case .exited(let status):
            throw VaultError.keyCommandFailed(program, household: household, "exited with status \(status)")
        case .killed(let signal): throw VaultError.keyCommandFailed(program, household: household, "was killed by signal \(signal)")
        case .timedOut:
            throw VaultError.keyCommandFailed(program, household: household, "did not finish within \(Int(HouseholdKeySource.commandTimeout)) seconds")
        case .printedTooMuch:
            throw VaultError.keyCommandFailed(program, household: household, "printed more than \(InputLimits.keyFile) bytes, more than a key")
        case .floodedStandardError:
            throw VaultError.keyCommandFailed(program, household: household, "wrote more than \(SecretCommand.standardErrorLimit) bytes to its standard error")
        }
    }
}

extension VaultError.Code {
    /// A fleet run's key command failed other than by saying it holds no key: the run stopped.
    public static let keyCommandFailed = VaultError.Code(name: "keyCommandFailed", category: .configuration)
}

extension VaultError {
    /// `problem` says how the command failed; nothing it printed is quoted.
    static func keyCommandFailed(_ program: String, household: HouseholdID, _ problem: String,
                                 file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyCommandFailed,
                   "the vault-key command '\(program)' \(problem) for household \(household.hex); nothing it printed was used, and the run stopped before opening another vault",
                   hint: "it must print the key of the household named in $\(HouseholdKeySource.householdVariable) and exit 0, or exit \(HouseholdKeySource.noKeyStatus) when it holds none",
                   file: file, line: line)
    }
}
