import ArgumentParser
import FoundationEssentials
import Glibc
import VaultCore

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
    static func split(_ text: String, option: String) throws -> [String] {
        var words: [String] = []
        var word = "", inWord = false
        var characters = text.makeIterator()
        func refuse(_ what: String) -> ValidationError {
            ValidationError("\(option) is run without a shell and takes only words and quotes; it has \(what)"
                            + " (wrap a pipeline in a script and name the script)")
        }
        while let character = characters.next() {
            switch character {
            case " ", "\t":
                if inWord { words.append(word); word = ""; inWord = false }
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
                        if !"\"\\$`".contains(escaped) { word.append("\\") }
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
                if "$`|&;<>()*?[]{}\n\r".contains(character) { throw refuse("'\(character.unicodeScalars.first!.escaped(asASCII: true))'") }
                if character.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) { throw refuse("a control character") }
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        guard !words.isEmpty else { throw ValidationError("\(option) names no command") }
        return words
    }

    /// Runs the command with `extraArguments` after its own and `environment` added to the
    /// tool's, and returns what it printed (without a final newline's worth of trouble: the key
    /// parsers take surrounding blanks).
    public func read(extraArguments: [String] = [], environment extra: [String: String] = [:],
                     timeout: Double = KeyCommand.timeoutSeconds) throws -> SecretBytes {
        let argv = arguments + extraArguments
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw InputFiles.ioError("could not make a pipe for \(option)") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        // The tool ignores SIGPIPE and may catch SIGTERM; the command gets the defaults.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }.map { "\($0.key)=\($0.value)" }
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer { (cArguments + cEnvironment).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        close(writeEnd)
        guard spawned == 0 else {
            throw ToolError(.operational, "could not run \(option) '\(argv[0])': \(String(cString: strerror(spawned)))")
        }

        let limit = InputFiles.keyFileLimit
        var length = 0
        var problem: String?
        let deadline = Date().addingTimeInterval(timeout)
        let buffer = try SecretBytes(count: limit + 1) { buffer in
            while length <= limit {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { problem = "did not finish within \(Int(timeout)) seconds"; return }
                var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(min(left, 1) * 1000) + 1)
                if ready < 0, errno == EINTR { continue }
                if ready <= 0 { continue }
                let count = Glibc.read(readEnd, buffer.baseAddress! + length, buffer.count - length)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return }
                length += count
            }
            problem = "printed more than \(limit) bytes, more than a key"
        }
        if problem != nil { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        if let problem { throw ToolError(.operational, "\(option) '\(argv[0])' \(problem); nothing it printed was used") }
        let exited = status & 0x7f == 0
        if !exited {
            throw ToolError(.operational, "\(option) '\(argv[0])' was killed by signal \(status & 0x7f); nothing it printed was used")
        }
        let code = (status >> 8) & 0xff
        guard code == 0 else {
            throw ToolError(.operational, "\(option) '\(argv[0])' exited with status \(code); nothing it printed was used")
        }
        guard length > 0 else { throw ToolError(.invalidInput, "\(option) '\(argv[0])' printed nothing") }
        return try buffer.slice(0..<length)
    }
}
