import ArgumentParser
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// `--key-command CMD` and `--vault-key-command CMD`: a key printed by a program where operators
/// keep keys (a secrets manager's CLI, `pass`, `systemd-creds cat`), as restic's
/// `--password-command`. The command is split into words as a shell splits plain words and
/// quotes, and run without a shell; a shell's other syntax (`$`, backquotes, `|`, `;`, `&`, `<`,
/// `>`, globs, `~`, `#`) is refused rather than guessed at. Its standard output is read into
/// protected memory, at most the key-file limit; a failure, a timeout or too much output is an
/// error that never quotes what it printed. Its standard error is the tool's.
public struct KeyCommand: Sendable {
    public let arguments: [String]
    /// What the option is called, for messages.
    public let option: String

    /// The most a key command may take: a secrets manager asking a server, not a person typing.
    public static let timeoutSeconds = 30.0

    public init(parsing text: String, option: String) throws {
        self.option = option
        arguments = try Self.split(text, option: option)
    }

    /// Words as a POSIX shell splits them: blanks separate, '…' is literal, "…" is literal but
    /// for \" \\ \$ \`, and \ outside quotes takes the next character as it is.
    /// Read by code points, as a shell reads bytes: by Characters, a blank or a quote followed by
    /// a combining mark would be one Character and neither separate nor quote.
    static func split(_ text: String, option: String) throws -> [String] {
        var words: [String] = []
        var word = String.UnicodeScalarView(), inWord = false
        var characters = text.unicodeScalars.makeIterator()
        func refuse(_ what: String) -> ValidationError {
            ValidationError("\(option) is run without a shell and takes only words and quotes; it has \(what)"
                            + " (wrap a pipeline in a script and name the script)")
        }
        while let character = characters.next() {
            switch character {
            case " ", "\t":
                if inWord { words.append(String(word)); word = String.UnicodeScalarView(); inWord = false }
            case "'":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw refuse("an unterminated '") }
                    if next == "'" { break }
                    word.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw refuse("an unterminated \"") }
                    if next == "\"" { break }
                    if next == "$" || next == "`" { throw refuse("'\(next)' (an expansion)") }
                    if next == "\\" {
                        guard let escaped = characters.next() else { throw refuse("an unterminated \"") }
                        if !"\"\\$`".unicodeScalars.contains(escaped) { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
            case "\\":
                guard let escaped = characters.next() else { throw refuse("a \\ at the end") }
                inWord = true
                word.append(escaped)
            case "~" where !inWord, "#" where !inWord:
                throw refuse("'\(character)'")
            default:
                if "$`|&;<>()*?[]{}\n\r".unicodeScalars.contains(character) { throw refuse("'\(character.escaped(asASCII: true))'") }
                if character.value < 0x20 || character.value == 0x7f { throw refuse("a control character") }
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(String(word)) }
        guard !words.isEmpty else { throw ValidationError("\(option) names no command") }
        return words
    }

    /// Runs the command with `extraArguments` after its own and `environment` added to the
    /// tool's, and returns what it printed (without a final newline's worth of trouble: the key
    /// parsers take surrounding blanks).
    public func read(extraArguments: [String] = [], environment extra: [String: String] = [:],
                     timeout: Double = KeyCommand.timeoutSeconds) throws -> SecretBytes {
        let program = arguments[0]
        let outcome = try SecretCommand(arguments: arguments).run(extraArguments: extraArguments, environment: extra, timeout: timeout,
                                                                  limit: InputFiles.keyFileLimit)
        func failed(_ problem: String) -> VaultError {
            VaultError.keyCommandGaveNoKey(option, program, problem)
        }
        switch outcome {
        case .notStarted(let error):
            throw VaultError.keyCommandNotStarted(option, program, errno: error)
        case .timedOut: throw failed("did not finish within \(Int(timeout)) seconds")
        case .printedTooMuch: throw failed("printed more than \(InputFiles.keyFileLimit) bytes, more than a key")
        case .floodedStandardError: throw failed("wrote more than \(SecretCommand.standardErrorLimit) bytes to its standard error")
        case .killed(let signal): throw failed("was killed by signal \(signal)")
        case .exited(let code): throw failed("exited with status \(code)")
        case .printed(let output):
            guard output.count > 0 else { throw VaultError.keyCommandPrintedNothing(option, program) }
            return output
        }
    }
}
