import FoundationEssentials
import Glibc
import VaultCore

/// Asking a person for a secret on their terminal (issue 12): the prompt and the answer go
/// through /dev/tty with echo off, so the secret is neither shown nor in the shell's history.
public enum TerminalPrompt {
    /// Whether standard input is a terminal (then a secret "from standard input" is asked for).
    public static var inputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// One line typed without echo after `prompt`, without its newline; at most 4 KiB.
    public static func secretLine(_ prompt: String) throws -> SecretBytes {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard terminal >= 0 else { throw VaultError.noTerminal(for: "ask for the \(prompt) on", instead: "give it in a file") }
        defer { close(terminal) }
        // Echo off, and signals off too: Ctrl-C then arrives as a byte and cancels here, after
        // the terminal is restored, instead of killing the tool with echo still off.
        var saved = termios()
        guard tcgetattr(terminal, &saved) == 0 else { throw VaultError.terminalUnusable("turn off echo to ask for the \(prompt)", instead: "give it in a file") }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO | ISIG)
        guard tcsetattr(terminal, TCSAFLUSH, &silent) == 0 else { throw VaultError.terminalUnusable("turn off echo to ask for the \(prompt)", instead: "give it in a file") }
        PromptSignals.arm(terminal, restoring: saved, farewell: "\n")
        defer {
            _ = tcsetattr(terminal, TCSAFLUSH, &saved)
            _ = write(terminal, "\n", 1)
            PromptSignals.disarm()  // after the restore: a signal in between finds the terminal as it was
        }
        let question = Array("\(prompt): ".utf8)
        _ = question.withUnsafeBytes { write(terminal, $0.baseAddress, $0.count) }
        var typed: [UInt8] = []
        defer { for index in typed.indices { typed[index] = 0 } }
        var byte: UInt8 = 0
        while read(terminal, &byte, 1) == 1, byte != 0x0a {
            guard byte != 0x03, byte != 0x04 else { throw VaultError.promptCancelled() }  // Ctrl-C, Ctrl-D
            guard typed.count < InputLimits.keyFile else { throw VaultError.typedTooLong(prompt) }
            typed.append(byte)
        }
        if typed.last == 0x0d { typed.removeLast() }
        return try SecretBytes(consuming: &typed)
    }

    /// A new secret, typed twice; they must agree.
    public static func newSecret(_ prompt: String) throws -> SecretBytes {
        let first = try secretLine(prompt)
        let second = try secretLine("\(prompt) again")
        guard first == second else { throw VaultError.typedTwiceDiffers(prompt) }
        return first
    }
}

/// What a prompt undoes when a signal ends the tool while it asks (issue 37): SIGTERM, SIGHUP
/// or SIGINT (sent by another process: at the prompt Ctrl-C is a byte) would otherwise leave
/// the terminal without echo or in character mode, and typed words on its screen. The handler
/// writes the prompt's farewell (leaving the alternate screen, or a new line), restores the
/// settings, and lets the signal end the process with its own status. One prompt at a time.
enum PromptSignals {
    static let handled = [SIGTERM, SIGHUP, SIGINT]

    /// The terminal, its settings and the farewell, where the handler reads them without
    /// allocating or locking (write and tcsetattr are async-signal-safe).
    nonisolated(unsafe) private static var descriptor: Int32 = -1
    nonisolated(unsafe) private static let saved = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    nonisolated(unsafe) private static let farewell = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 32)
    nonisolated(unsafe) private static var farewellCount = 0
    nonisolated(unsafe) private static var previous: [Int32: sighandler_t?] = [:]

    static func arm(_ terminal: Int32, restoring settings: termios, farewell text: String) {
        saved.pointee = settings
        scratch.pointee = 0  // made now: a static is made on first use, which the handler may not do
        let bytes = Array(text.utf8.prefix(farewell.count))
        for (index, byte) in bytes.enumerated() { farewell[index] = byte }
        farewellCount = bytes.count
        descriptor = terminal
        for number in handled { previous[number] = signal(number, promptSignalHandler) }
    }

    static func disarm() {
        for number in handled { _ = signal(number, previous[number] ?? SIG_DFL) }
        descriptor = -1
    }

    /// A byte to read into in the handler, which may not allocate.
    nonisolated(unsafe) private static let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    /// In the handler: the farewell, then the settings. What was typed just before the signal
    /// may still be on its way through the terminal's buffers (the kernel hands a pty's input
    /// to the line discipline later, from a work queue): once echo was back on it was shown on
    /// the screen, a secret's first letters among it. A read that finds nothing makes the kernel
    /// finish that work first, echo still off; the flush then drops it (a test saw this only on
    /// a loaded machine: the letters arrived after the restore).
    fileprivate static func restore() {
        guard descriptor >= 0 else { return }
        _ = write(descriptor, farewell.baseAddress, farewellCount)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = read(descriptor, scratch, 1)
        scratch.pointee = 0
        _ = tcsetattr(descriptor, TCSAFLUSH, saved)
    }
}

private let promptSignalHandler: @convention(c) (Int32) -> Void = { number in
    PromptSignals.restore()
    _ = signal(number, SIG_DFL)
    _ = raise(number)
}
