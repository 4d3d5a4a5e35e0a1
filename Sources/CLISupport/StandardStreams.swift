import FoundationEssentials
import Glibc
import Synchronization
import VaultCore
import VaultFiles

/// Standard output and error: outputs like any file (docs/conventions.md, "Nothing lost"). Every
/// write is checked: a full disk or a closed pipe on standard output is an error with its exit
/// code, never a lost report with exit 0 (SIGPIPE is ignored by ``ToolMain``, so a closed pipe
/// is EPIPE here, reported, instead of a death between two publications).
public enum StandardStreams {
    /// Writes a command's output (a report, a listing, JSON) to standard output; throws when
    /// it cannot be written whole. When a declared output (`-o -`) has standard output, the
    /// report goes to standard error, so what is piped on is that output alone.
    public static func writeOutput(_ bytes: [UInt8]) throws {
        if outputClaimed.load(ordering: .relaxed) { writeError(bytes) } else { try write(bytes, to: STDOUT_FILENO) }
    }

    /// A declared output (``CommandFiles``) writes to standard output in this run.
    static let outputClaimed = Atomic<Bool>(false)

    /// Writes a message to standard error. A message that cannot be written cannot be reported
    /// either: the failure is remembered, and ``ToolMain`` then exits 1 instead of 0.
    public static func writeError(_ bytes: [UInt8]) {
        do { try write(bytes, to: STDERR_FILENO) } catch { errorStreamFailed.store(true, ordering: .relaxed) }
    }

    /// Whether a message to standard error was lost in this run.
    static let errorStreamFailed = Atomic<Bool>(false)

    /// A standard stream the tool was started without (`>&-`) is given /dev/null, opened the
    /// other way round, before anything else is opened: the next file or socket would otherwise
    /// take its number, and the tool's output went into the registry's PostgreSQL connection
    /// (a trial) or a database file. Writing to it still fails, as on a closed stream.
    static func holdClosedOnes() {
        for (descriptor, flags) in [(STDIN_FILENO, O_WRONLY), (STDOUT_FILENO, O_RDONLY), (STDERR_FILENO, O_RDONLY)] where fcntl(descriptor, F_GETFD) == -1 {
            let held = open("/dev/null", flags | O_CLOEXEC)
            if held >= 0, held != descriptor {
                dup2(held, descriptor)
                close(held)
            }
        }
    }

    public static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    public static var errorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether standard output and standard error are one terminal: then a line written to
    /// standard output lands in the middle of a progress bar drawn on standard error.
    public static var outputAndErrorShareTerminal: Bool {
        guard outputIsTerminal, errorIsTerminal else { return false }
        var output = stat(), error = stat()
        guard fstat(STDOUT_FILENO, &output) == 0, fstat(STDERR_FILENO, &error) == 0 else { return false }
        return output.st_rdev == error.st_rdev
    }

    /// The mode of standard output when it is a regular file that others may read (a shell
    /// redirection under the usual umask makes it 0644); nil otherwise.
    public static var outputFileReadableByOthers: mode_t? {
        var info = stat()
        guard fstat(STDOUT_FILENO, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o077 != 0 else { return nil }
        return info.st_mode & 0o7777
    }

    /// Writes everything, retrying short writes and interruptions (VaultFiles' loop); a closed
    /// pipe says so in words a person knows.
    static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws {
        let name = descriptor == STDOUT_FILENO ? "standard output" : "standard error"
        let failure = AtomicFile.writeAll(bytes, to: descriptor)
        guard failure == 0 else {
            if failure == EPIPE { throw VaultError.streamClosed(name) }
            throw AtomicFile.ioError(errno: failure, "could not write \(name)")
        }
    }

    static func write(_ bytes: [UInt8], to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { try write($0, to: descriptor) }
    }
}

extension VaultError {
    /// Standard output or error is a pipe whose reader has gone (`| head`, a consumer that died):
    /// what was not written is lost, so the command fails.
    static func streamClosed(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "could not write \(name): the reading end of the pipe was closed, so the output is incomplete", file: file, line: line)
    }
}
