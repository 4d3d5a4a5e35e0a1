import Glibc
import VaultCore

/// What the command-line layer refuses itself (terminals, prompts, key files and commands,
/// options): coded errors as every layer's are (issue 44: one error model, where a second type
/// with a public initializer was built by hand at each throw), each made by one factory here.
extension VaultError.Code {
    /// A key file named in an object store.
    public static let keyInObjectStore = VaultError.Code(name: "keyInObjectStore", category: .invalidInput)
    /// A key file too large to be one.
    public static let keyFileTooLarge = VaultError.Code(name: "keyFileTooLarge", category: .invalidInput)
    /// A secret to be read from standard input, which is a terminal.
    public static let secretFromTerminal = VaultError.Code(name: "secretFromTerminal", category: .usage)
    /// Two inputs of a command both named `-`.
    public static let standardInputTwice = VaultError.Code(name: "standardInputTwice", category: .usage)
    /// A secret or binary output to a terminal, without --force.
    public static let outputToTerminal = VaultError.Code(name: "outputToTerminal", category: .refused)
    /// A key command that did not print a key: not started, failed, killed, too slow or too loud.
    public static let keyCommandGaveNoKey = VaultError.Code(name: "keyCommandGaveNoKey", category: .operational)
    /// A key command that exited 0 and printed nothing.
    public static let keyCommandPrintedNothing = VaultError.Code(name: "keyCommandPrintedNothing", category: .invalidInput)
    /// No terminal to prompt on, or one that cannot be set up.
    public static let noUsableTerminal = VaultError.Code(name: "noUsableTerminal", category: .usage)
    /// A prompt ended with Ctrl-C or Ctrl-D.
    public static let promptCancelled = VaultError.Code(name: "promptCancelled", category: .usage)
    /// What was typed at a prompt cannot be used: too long, twice different, words that fail.
    public static let typedInputRefused = VaultError.Code(name: "typedInputRefused", category: .invalidInput)
    /// A command that needs a key was given none (or a job none).
    public static let noKeyGiven = VaultError.Code(name: "noKeyGiven", category: .usage)
    /// A job line of a batch with no key file.
    public static let jobWithoutKey = VaultError.Code(name: "jobWithoutKey", category: .invalidInput)
    /// A number outside the range its option takes.
    public static let optionOutOfRange = VaultError.Code(name: "optionOutOfRange", category: .usage)
    /// An output that would replace a vault, a household log or a database with other content.
    public static let wouldReplaceStore = VaultError.Code(name: "wouldReplaceStore", category: .refused)
    /// A vault older than schema 3 would be written beside a household log.
    public static let olderVaultBesideLog = VaultError.Code(name: "olderVaultBesideLog", category: .refused)
    /// A vault output names the vault of another household.
    public static let vaultOfAnotherHousehold = VaultError.Code(name: "vaultOfAnotherHousehold", category: .refused)
}

extension VaultError {
    /// A vault older than schema 3 named where a household log lies beside it.
    static func olderVaultWrittenBesideLog(_ label: String, _ path: String, version: Int, log: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.olderVaultBesideLog, "\(label) \(FileNames.quoted(path)): a schema \(version) vault there would sit beside the household log \(FileNames.quoted(log)), which records the household's schema 3 vaults, and every tool would refuse it as a vault put back; nothing was written",
                   hint: "write the schema \(version) copy into another folder (devices still on the old app read it there); to leave schema 3 for good, move the log away knowingly first",
                   file: file, line: line)
    }

    /// A vault output named the vault of another household (`household`).
    static func vaultOfAnotherHousehold(_ label: String, _ path: String, _ household: HouseholdID, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.vaultOfAnotherHousehold, "\(label) \(FileNames.quoted(path)) is the vault of another household (\(household.shortHex)…); a vault replaces only its own household's, so nothing was written",
                   hint: "write it to another file; if that household's vault is kept elsewhere and this copy is not needed, move it away knowingly first",
                   file: file, line: line)
    }

    /// An output (`--ops`, a report, revealed secrets) named a file that is a vault, a log or a
    /// database: it is never replaced by anything but its own kind.
    static func wouldReplaceStore(_ label: String, _ path: String, _ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.wouldReplaceStore, "\(label) \(FileNames.quoted(path)) is \(what); \(label) would replace it with other content, so nothing was written",
                   hint: "name another file for \(label)", file: file, line: line)
    }

    static func keyInObjectStore(_ what: String, _ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyInObjectStore, "the \(what) '\(path)' is in an object store; keys are read from local files only", file: file, line: line)
    }

    static func notAKeyFileBySize(_ what: String, _ name: String, limit: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyFileTooLarge, "\(what) \(FileNames.quoted(name)) is larger than \(limit) bytes; it is not a key file", file: file, line: line)
    }

    static func standardInputTwice(_ first: String, _ second: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.standardInputTwice, "only one input may read standard input ('-'): \(first) and \(second) both name it",
                   hint: "name a file for one of them", file: file, line: line)
    }

    static func secretFromTerminalInput(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.secretFromTerminal, "the \(what) would be read from standard input, which is a terminal",
                   hint: "name a file, or pipe the \(what) in", file: file, line: line)
    }

    /// `option` names the output as the command takes it (`-o`, `--sheet`); `forceOffered`
    /// whether the command has a `--force` to offer.
    static func outputToTerminal(secret: Bool, option: String, forceOffered: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        let named = option.hasPrefix("-") ? option : "-o"
        return secret
            ? VaultError(.outputToTerminal, "refusing to write a secret to a terminal",
                         hint: "write it to a new file with \(named) FILE (made 0600)" + (forceOffered ? ", or pass --force to show it here" : ""), file: file, line: line)
            : VaultError(.outputToTerminal, "refusing to write binary data to a terminal",
                         hint: "write it to a file with \(named) FILE" + (forceOffered ? ", or pass --force" : ""), file: file, line: line)
    }

    static func keyCommandGaveNoKey(_ option: String, _ program: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyCommandGaveNoKey, "\(option) '\(program)' \(problem); nothing it printed was used", file: file, line: line)
    }

    /// posix_spawn's error, passed as it returned it (not read from the global errno).
    static func keyCommandNotStarted(_ option: String, _ program: String, errno code: Int32, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyCommandGaveNoKey, "could not run \(option) '\(program)': \(ErrnoText.of(code))", file: file, line: line)
    }

    static func keyCommandPrintedNothing(_ option: String, _ program: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyCommandPrintedNothing, "\(option) '\(program)' printed nothing", file: file, line: line)
    }

    /// `purpose` says what the terminal was for ("type the words on"); `instead` the other way.
    static func noTerminal(for purpose: String, instead: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noUsableTerminal, "there is no terminal to \(purpose)", hint: instead, file: file, line: line)
    }

    static func terminalUnusable(_ purpose: String, instead: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noUsableTerminal, "cannot \(purpose)", hint: instead, file: file, line: line)
    }

    static func promptCancelled(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.promptCancelled, "cancelled; nothing was written", file: file, line: line)
    }

    static func typedTooLong(_ prompt: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.typedInputRefused, "the \(prompt) is longer than 4 KiB", file: file, line: line)
    }

    static func typedTwiceDiffers(_ prompt: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.typedInputRefused, "the two \(prompt)s differ; nothing was written", file: file, line: line)
    }

    static func typedWordsFailTheirCheck(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.typedInputRefused, "the words do not pass their check; nothing was written", hint: "check each word against the sheet, in order",
                   file: file, line: line)
    }

    static func jobNamesNoKeyFile(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.jobWithoutKey, "a job names no key file", file: file, line: line)
    }

    static func noKeyGiven(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noKeyGiven, "give --key-file or --vault-key-file", file: file, line: line)
    }

    static func optionOutOfRange<T: Comparable>(_ option: String, _ range: ClosedRange<T>, _ value: T, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.optionOutOfRange, "\(option) takes \(range.lowerBound) to \(range.upperBound), not \(value)", file: file, line: line)
    }
}

extension VaultError.Code {
    /// An option that takes a public key (npub1… or 64 hex) was given something else.
    public static let notAPublicKeyOption = VaultError.Code(name: "notAPublicKeyOption", category: .usage)
}

/// A public key as options take it: `npub1…` or 64 hex, any case. 64 hex digits that are a
/// secret this run holds (the parent key, the vault key derived from it) are refused, never
/// taken for a public key and recorded; anything not a public key is quoted only as
/// ``QuotedInput`` allows. Commands read their keys before their public-key options, so the
/// comparison sees them.
public func publicKeyOption(_ option: String, _ text: String) throws -> PublicKey {
    let secretGiven = Array(text.utf8).withUnsafeBytes { KeyText.holdsBech32Key($0) } || HeldSecrets.appear(in: Array(text.utf8))
    guard !secretGiven else { throw VaultError.secretGivenAsPublicKey(option) }
    do {
        return text.hasPrefix("npub1") ? try PublicKey(npub: text) : try PublicKey(hex: text)
    } catch {
        throw VaultError(.notAPublicKeyOption, "\(option) \(QuotedInput(text)) is not a public key (npub1… or 64 hex)")
    }
}

extension VaultError {
    static func secretGivenAsPublicKey(_ option: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notAPublicKeyOption, "\(option) is a secret key (not shown), not a public key; nothing was written",
                   hint: "give its public key, npub1… ('vault-tool keygen' prints the npub of a key it makes)", file: file, line: line)
    }
}

extension VaultError.Code {
    /// An option that takes an id or hash (hex) was given something else.
    public static let notAHexIDOption = VaultError.Code(name: "notAHexIDOption", category: .usage)
}

/// An event id or a hash as options take it: `minimum` to 64 hex digits (a prefix as the tools
/// print it, or whole), any case; lowercased. Anything else is a usage error (exit 64), never
/// "not found" (exit 3), which would say the record was tampered with.
public func hexIDOption(_ option: String, _ text: String, minimum: Int = 12) throws -> String {
    guard (minimum...64).contains(text.utf8.count), text.utf8.allSatisfy({ Hex.value($0) != nil }) else {
        throw VaultError(.notAHexIDOption, "\(option) \(QuotedInput(text)) is not an id: give \(minimum) to 64 hex digits, as the tools print it")
    }
    return text.lowercased()
}
