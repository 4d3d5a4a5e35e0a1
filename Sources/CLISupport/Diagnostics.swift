import ArgumentParser
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// The suite's exit codes (docs/conventions.md).
public enum ExitStatus: Int32, Sendable {
    case ok = 0
    /// I/O and other operational failures.
    case operational = 1
    /// Malformed input, bad checksum, unknown version.
    case invalidInput = 2
    /// Wrong key, tampered file, failed check.
    case authentication = 3
    /// Refused for safety: would overwrite, would lose data, a guard rail tripped.
    case refused = 4
    /// Bad command line (swift-argument-parser's validation failure is also 64, EX_USAGE).
    case usage = 64
    /// Every failure was one a retry gets past (EX_TEMPFAIL): a job engine's retry policy runs
    /// the command again.
    case temporaryFailure = 75
    /// A fleet run found vaults and held the key of none of them (sysexits' EX_NOINPUT): the
    /// keys given are not this fleet's, or not mounted where they should be.
    case noKeys = 66
    /// A library the command needs (loaded on use: libcurl, libpq, the imaging and page stack)
    /// is not installed (EX_UNAVAILABLE); the message names its Debian package.
    case unavailable = 69
    /// The configuration cannot work (EX_CONFIG): a wrong endpoint, credentials refused, a
    /// missing bucket. A job engine fails the job at once instead of retrying it.
    case configuration = 78

    public init(_ category: VaultError.Category) {
        switch category {
        case .operational: self = .operational
        case .invalidInput: self = .invalidInput
        case .authentication: self = .authentication
        case .refused: self = .refused
        case .temporary: self = .temporaryFailure
        case .configuration: self = .configuration
        case .usage: self = .usage
        case .noKeys: self = .noKeys
        case .unavailable: self = .unavailable
        }
    }
}

/// Writes human messages to standard error as `tool: kind: text`.
public struct Diagnostics: Sendable {
    public let toolName: String
    /// Drops warnings: for work done in bulk, where one warning per file would bury the report.
    public let quiet: Bool

    /// The running tool's diagnostics, named as it was invoked: for the shared code of the write
    /// path, which warns on behalf of whichever tool runs it.
    public static var ofThisTool: Diagnostics {
        Diagnostics(toolName: CommandLine.arguments.first.map { OutputLocation.split($0).name } ?? "tool")
    }

    public init(toolName: String, quiet: Bool = false) {
        self.toolName = toolName
        self.quiet = quiet
    }

    /// An error and its hint, each on one line: a line break inside either (a name from a
    /// file quoted in it) is shown, never made.
    public func error(_ reason: String, hint: String? = nil) {
        GivenKeyFiles.holdOnce()
        let hint = SecretRedaction.commandLineHoldsSecret ? Self.secretOnCommandLine : hint
        if LogFormat.current == .json { return event("error", "error", reason, hint: hint) }
        line("error", reason)
        if let hint { line("hint", hint) }
    }

    /// The hint of every error of a run whose arguments hold a secret: its quotes of them are
    /// withheld (``SecretRedaction``), and the next step is to stop typing it there.
    static let secretOnCommandLine = "the arguments read like a key, recovery words or a share, so they are not shown; if they are one, give it at the prompt instead, or name the file that already keeps it (other users' ps and your shell history see the command line), and remove it from your history"

    /// A warning, on one line.
    public func warning(_ text: String) {
        if quiet { return }
        GivenKeyFiles.holdOnce()
        if LogFormat.current == .json { return event("warning", "warning", text) }
        line("warning", text)
    }

    /// Lines for a person (summaries, the public half of a new key, a table of what changed):
    /// the tool's own line breaks are kept, every value in them escaped (``DisplayText``).
    public func note(_ text: DisplayText) {
        if LogFormat.current == .json { return event("info", "summary", text.text) }
        StandardStreams.writeError(Array((SecretRedaction.redacting(text.text).withholdingHeldKeys.displaySafeKeepingNewlines + "\n").utf8))
    }

    /// A line a child the tool ran (a key command, a `credential_process`) wrote to standard
    /// error, its secrets withheld: a `child-stderr` event, or in text `tool: from a command:
    /// …`, escaped as every message is.
    public func childLine(_ text: String) {
        guard LogFormat.current == .json else {
            return StandardStreams.writeError(Array("\(toolName): from a command: \(VaultError.bounded(Self.childText(text)).displaySafe)\n".utf8))
        }
        StandardStreams.writeError(LogFormat.line(level: "info", event: "child-stderr", tool: toolName,
                                                  fields: [("message", .string(VaultError.bounded(Self.childText(text))))]))
    }

    /// A child's line as relayed: withheld whole when it reads as a key, words or a share (a
    /// key command that echoes what it prints), else with its quoted secrets withheld.
    private static func childText(_ text: String) -> String {
        let whole = QuotedInput(text)
        return whole.isWithheld ? whole.description : SecretRedaction.redacting(text)
    }

    /// `--log-format json`: one JSON line (``LogFormat``).
    private func event(_ level: String, _ name: String, _ text: String, hint: String? = nil) {
        var fields: [(key: String, value: JSONValue)] = [("message", .string(VaultError.bounded(SecretRedaction.redacting(text).withholdingHeldKeys)))]
        if let hint { fields.append(("hint", .string(VaultError.bounded(SecretRedaction.redacting(hint).withholdingHeldKeys)))) }
        StandardStreams.writeError(LogFormat.line(level: level, event: name, tool: toolName, fields: fields))
    }

    /// Every message is escaped here, once, line breaks included: names, ids, field names and
    /// paths in it may come from an untrusted file and must neither drive the terminal (issue
    /// 16) nor add a line that reads as the tool's own (issue 44: a device name with a line
    /// break forged a line); and bounded here, whoever wrote it (argument-parser's own errors
    /// quote the argument whole).
    private func line(_ kind: String, _ text: String) {
        // Withheld and escaped once (``Swift/String/displaySafe``), then bounded.
        StandardStreams.writeError(Array("\(toolName): \(kind): \(VaultError.bounded(SecretRedaction.redacting(text).displaySafe))\n".utf8))
    }
}

/// Runs a root command: parses, runs, and turns every error into one message and exit code.
public enum ToolMain {
    /// `objectStore` connects the tool's object store when a command first names an `s3://`
    /// object; a tool that links none passes nil, and refuses such names.
    /// `hints` are the tool's next steps for refusals its own flags resolve, by code (made only for
    /// a refusal: a dictionary built at every start costs a conformance scan).
    /// `arguments` rewrites the command line before it is parsed (vault-tool names the mode of a
    /// command given in an older spelling); an error it throws is reported as any other.
    public static func run<Command: ToolRoot>(_ command: Command.Type, objectStore: (@Sendable () throws -> any ObjectAccess)? = nil,
                                                     hints: @autoclosure () -> [VaultError.Code: String] = [:],
                                                     arguments: ([String]) throws -> [String] = { $0 }) -> Never {
        StandardStreams.holdClosedOnes()
        ObjectStores.register(objectStore)
        let diagnostics = Diagnostics(toolName: Command.configuration.commandName ?? "tool")
        // Before any argument is read: no core file, no debugger of the same user, whatever the
        // command (issue 44; ProcessHardening).
        guard ProcessHardening.apply() else {
            diagnostics.error("could not turn off core dumps for this process; nothing was read")
            exit(ExitStatus.operational.rawValue)
        }
        ProcessTuning.apply()
        // Past a file size limit (ulimit -f), write(2) then fails with EFBIG, which AtomicFile
        // reports and cleans up after, instead of the signal killing the tool mid-write.
        signal(SIGXFSZ, SIG_IGN)
        // A closed pipe on standard output is then EPIPE, which the write reports as an error,
        // instead of SIGPIPE killing the tool between two publications (a new vault published,
        // its tombstone not) with nothing said.
        signal(SIGPIPE, SIG_IGN)
        LogFormat.selectFromArguments(Array(CommandLine.arguments.dropFirst()))
        // A child's standard error (a key command, a profile's credential_process) reaches the
        // terminal or the log only through this tool, in either format: passed through as it
        // was, a key command that echoed its key showed it, and its escapes drove the terminal
        // (a hostile trial; the JSON log already withheld them).
        ChildErrors.relay { line in Diagnostics.ofThisTool.childLine(line) }
        // Arguments reach the parser as text, decoded with repair: a name with a byte that is
        // not UTF-8 would name another file (`keygen -o $'k\xfe.nsec'` wrote `k\u{fffd}.nsec`).
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            // Only the first byte that is not UTF-8 is shown: the argument may be a secret typed
            // there, and its halves around that byte read as no key.
            let bytes = Array(UnsafeRawBufferPointer(start: raw, count: strlen(raw)))
            let place = FileNames.firstInvalidByte(bytes) ?? 0
            diagnostics.error("argument \(index) is not valid UTF-8 (its byte \\x{\(Hex.encode([bytes[place]]))} at place \(place + 1)); the tools take names and values in UTF-8 only",
                              hint: "rename the file to a UTF-8 name (convmv, or mv with the name typed again)")
            exit(ExitStatus.usage.rawValue)
        }
        var given: [String] = []
        // A misused command line with an option its command does not have: that option is the
        // mistake to name (``CommandSignature/unknownOption(_:_:)``).
        func failUnknownOption() {
            guard let unknown = CommandSignature.unknownOption(Command.self, given) else { return }
            diagnostics.error(unknown, hint: "see '\(diagnostics.toolName) help' or add --help after the subcommand")
            exit(ExitStatus.usage.rawValue)
        }
        func fail(_ error: VaultError) -> Never {
            if error.code.category == .usage { failUnknownOption() }
            diagnostics.error(error.reason, hint: error.hint ?? hints()[error.code] ?? commonHints[error.code])
            exit(ExitStatus(error.code.category).rawValue)
        }
        do {
            given = try arguments(Array(CommandLine.arguments.dropFirst()))
            for repeated in OptionsGivenOnce.repeated(Command.self, given) { diagnostics.warning(repeated.warning) }
            var parsed = try CompletionScriptCheck.parse(Command.self, given)
            try parsed.run()
            exitSucceeded()
        } catch let error as VaultError {
            fail(error)
        } catch let error as ExitCode {
            exit(error.rawValue)
        } catch {
            let code = Command.exitCode(for: error)
            if code == .success {
                // --help and --version are reported as errors by swift-argument-parser.
                do {
                    try StandardStreams.writeOutput(Array((Command.fullMessage(for: error) + "\n").utf8))
                } catch let error as VaultError {
                    diagnostics.error(error.reason)
                    exit(ExitStatus(error.code.category).rawValue)
                } catch {}
                exitSucceeded()
            }
            // A library's typed refusal (a split SLIP-0039 cannot express) is a VaultError
            // like any other: it was printed as Swift wrote the value, with exit 1. Asked after
            // --help and --version: a cast to a protocol costs a conformance scan of the binary.
            if let error = Self.vaultError(in: error) { fail(error) }
            // The parser's message on one line: its readings of one argument after "or:", and
            // any other line it breaks (an unknown completion shell's list of shells), joined as
            // words; the renderer showed each line break as `\u{a}` (two trials).
            let message = Command.message(for: error).replacing("\n   or: ", with: "; or: ")
                .split(separator: "\n").map { $0.trimmingPrefix(while: \.isWhitespace) }.joined(separator: " ")
            if code == .validationFailure, !message.hasPrefix("Unknown option") { failUnknownOption() }
            diagnostics.error(message.lowercasedFirstLetter, hint: "see '\(diagnostics.toolName) help' or add --help after the subcommand")
            exit(code == .validationFailure ? ExitStatus.usage.rawValue : code.rawValue)
        }
    }
}

extension ToolMain {
    /// The suite's own error inside one swift-argument-parser hands on: a `validate()` of an
    /// option group runs as the parser decodes it, and a VaultError thrown there came back
    /// wrapped in the parser's own (internal) error types, printed as Swift writes the value
    /// ("vaultError.libraryTooOld: …") with exit 1, its code's exit status and hint lost (a
    /// trial). Found by reflection, which runs only on this path of a failed parse.
    static func vaultError(in error: any Error, depth: Int = 0) -> VaultError? {
        if let error = error as? VaultError { return error }
        if let error = error as? VaultErrorConvertible { return error.vaultError }
        guard depth < 4 else { return nil }
        for child in Mirror(reflecting: error).children {
            if let inner = child.value as? any Error, let found = vaultError(in: inner, depth: depth + 1) { return found }
        }
        return nil
    }
}

/// Exits 0, unless a message to standard error was lost (a full disk, a closed pipe): a run
/// whose warnings or summary nobody got did not succeed as far as anyone can tell.
private func exitSucceeded() -> Never {
    guard StandardStreams.errorStreamFailed.load(ordering: .relaxed) else { exit(ExitStatus.ok.rawValue) }
    RunPublications.withdrawAfterLostReport()
    exit(ExitStatus.operational.rawValue)
}

/// The next step for a refusal of the write path or of a key option, both CLISupport's; the
/// library's reasons name no option, and each tool adds the hints for its own flags.
private let commonHints: [VaultError.Code: String] = [
    .sameFile: "write to another file; inputs and other outputs are never overwritten (see \"Nothing lost\" in docs/conventions.md)",
    .unsafeOutput: "name a regular file",
    .vaultKeyGivenAsParentKey: "give it with --vault-key-file instead of --key-file",
    .parentKeyGivenAsVaultKey: "give it with --key-file instead of --vault-key-file",
]

extension String {
    /// Our messages are lowercase; swift-argument-parser capitalises its own.
    var lowercasedFirstLetter: String {
        guard let first, first.isUppercase, dropFirst().first?.isUppercase != true else { return self }
        return first.lowercased() + dropFirst()
    }
}
