internal import CFileSystem
import FoundationEssentials
import Glibc
import VaultCore

/// A program that prints a secret, as restic's `--password-command` (a secrets manager's CLI,
/// `pass`, `systemd-creds cat`): run without a shell, standard input `/dev/null`, its standard
/// error the tool's, and what it prints read into protected memory, at most `limit` bytes within
/// `timeout` seconds. The outcome says how it ended; what it means (a key, no key, a failure)
/// is the caller's rule, and no outcome carries what a failed command printed.
public struct SecretCommand: Sendable {
    /// The program and its words, already split.
    public let arguments: [String]

    public init(arguments: [String]) {
        precondition(!arguments.isEmpty, "a command has at least its program")
        self.arguments = arguments
    }

    /// How much a command may write to its standard error while it is relayed.
    public static var standardErrorLimit: Int { ChildErrors.floodLimit }

    public enum Outcome: Sendable {
        /// It exited 0 having printed these bytes (maybe none).
        case printed(SecretBytes)
        /// It exited with this status, not 0; its output was dropped.
        case exited(Int32)
        /// A signal ended it.
        case killed(Int32)
        /// It ran longer than the timeout, and was killed.
        case timedOut
        /// It printed more than the limit, and was killed.
        case printedTooMuch
        /// It wrote more than ``standardErrorLimit`` bytes to its standard error while it was
        /// relayed (`yes >&2`), and was killed.
        case floodedStandardError
        /// It could not be started: `errno` of posix_spawn (ENOENT: no such program).
        case notStarted(Int32)
    }

    /// Runs the command with `extraArguments` after its own, in the tool's environment less its
    /// credentials (``ChildEnvironment``), `environment` added.
    public func run(extraArguments: [String] = [], environment extra: [String: String] = [:],
                    timeout: Double, limit: Int = InputLimits.keyFile) throws -> Outcome {
        try ChildSignals.watch { try runWatched(extraArguments: extraArguments, environment: extra, timeout: timeout, limit: limit) }
    }

    private func runWatched(extraArguments: [String], environment extra: [String: String], timeout: Double, limit: Int) throws -> Outcome {
        let argv = arguments + extraArguments
        // Close-on-exec from the start, and every other descriptor closed in the child (as
        // ChildProcess does): a fleet run asks for several households at once, and a command
        // spawned meanwhile by another thread would otherwise hold this pipe's write end, so
        // this read saw no end until that other command exited (or wrote into it), and the
        // command would get the tool's own descriptors (sockets, databases, journals).
        var pipeEnds: [Int32] = [-1, -1]
        guard hvt_pipe2(&pipeEnds, O_CLOEXEC) == 0 else { throw AtomicFile.ioError(errno: errno, "could not make a pipe for a key command") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }
        let environment = ChildEnvironment.minimal(from: ProcessInfo.processInfo.environment, adding: extra).map { "\($0.key)=\($0.value)" }
        // Its standard error is the tool's, or relayed when the tool's is JSON (ChildErrors),
        // read as it comes and closed once it has ended (deferred: after it is reaped).
        let relayed = try ChildErrors.Capture()
        defer { relayed.finish() }
        let (pid, spawned) = ChildProcess.spawn(argv, environment: environment, searchingPath: true,
                                                input: nil, output: writeEnd, errors: relayed.childEnd)
        close(writeEnd)
        if let childEnd = relayed.childEnd { close(childEnd) }
        guard spawned == 0 else { return .notStarted(spawned) }

        var length = 0
        var problem: Outcome?
        var status: Int32 = 0
        var ended = false
        let deadline = Date().addingTimeInterval(timeout)
        let buffer = try SecretBytes(count: limit + 1) { buffer in
            while length <= limit {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { problem = .timedOut; return }
                // The tool is being ended (``ChildSignals``): the command is killed below.
                guard !ChildSignals.arrived else { problem = .killed(SIGKILL); return }
                var pollers = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: relayed.pollable, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&pollers, 2, Int32(min(left, 0.02) * 1000) + 1)
                if ready < 0, errno == EINTR { continue }
                relayed.readAvailable()
                guard !relayed.isFlooding else { problem = .floodedStandardError; return }
                // Has it ended? Then what it printed is all in the pipe, and a program it left
                // in the background, holding the pipe (`sleep 600 &`) or writing on into it, is
                // not waited for (issue 44). Asked at every turn, not only when nothing came.
                if !ended, waitpid(pid, &status, WNOHANG) == pid { ended = true }
                if ended {
                    _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
                    while length <= limit {
                        let count = Glibc.read(readEnd, buffer.baseAddress! + length, buffer.count - length)
                        if count < 0, errno == EINTR { continue }
                        if count <= 0 { return }
                        length += count
                    }
                    problem = .printedTooMuch
                    return
                }
                if ready <= 0 || pollers[0].revents == 0 { continue }
                let count = Glibc.read(readEnd, buffer.baseAddress! + length, buffer.count - length)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return }
                length += count
            }
            problem = .printedTooMuch
        }
        // Its output ends when it closes it, which need not be when it ends (`exec >&-; sleep`):
        // it is waited for within the same deadline, then killed, or the tool waited forever.
        while problem == nil, !ended {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { ended = true } else if reaped < 0, errno != EINTR { break }
            guard !ended else { break }
            guard deadline.timeIntervalSinceNow > 0 else { problem = .timedOut; break }
            guard !ChildSignals.arrived else { problem = .killed(SIGKILL); break }
            relayed.readAvailable()
            guard !relayed.isFlooding else { problem = .floodedStandardError; break }
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
            nanosleep(&pause, nil)
        }
        if problem != nil, !ended { ChildProcess.killWithDescendants(pid) }
        if !ended { while waitpid(pid, &status, 0) < 0, errno == EINTR {} }
        // What it printed, however it ended: a line of its standard error repeating it is
        // withheld when that is relayed (the deferred finish).
        relayed.answer = try buffer.slice(0..<length)
        if let problem { return problem }
        guard status & 0x7f == 0 else { return .killed(status & 0x7f) }
        let code = (status >> 8) & 0xff
        guard code == 0 else { return .exited(code) }
        return .printed(try buffer.slice(0..<length))
    }
}
