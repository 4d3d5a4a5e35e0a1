internal import CFileSystem
import Glibc
import Synchronization
import VaultCore

/// Where the standard error of a child that shares the tool's goes (a key command, a profile's
/// `credential_process`): through the relay every tool sets (its lines' secrets withheld and
/// their escapes shown, in text or JSON), never raw: a child's lines passed through broke a
/// container log of JSON Lines (issue 44), and a key command that echoed its key showed it on
/// the terminal (a hostile trial). It is read through a pipe while the child runs
/// (``Capture``, ``ChildProcess``), and relayed when the child has ended, whole lines from one
/// child together: at most ``limit`` bytes, a line at a time. (A key command asks for a
/// passphrase on the terminal itself, /dev/tty, as pass and gpg do, not on standard error.)
package enum ChildErrors {
    /// The most of a child's standard error relayed.
    package static let limit = 64 << 10

    private static let sink = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Relays each line children write to standard error to `body` (nil: their standard error
    /// is the tool's again).
    package static func relay(_ body: (@Sendable (String) -> Void)?) { sink.withLock { $0 = body } }

    /// Whether children's standard error is relayed now.
    static var isRelaying: Bool { sink.withLock { $0 != nil } }

    static var floodLimit: Int { 16 * limit }

    /// A key command's standard error while relayed (``SecretCommand`` reads its output in
    /// protected memory on its own): a pipe, read as the command runs so that it never fills
    /// and blocks it, the first ``limit`` bytes kept and the rest counted, and closed once the
    /// command has ended, so that a program it left behind writing on (`yes >&2 &`) meets a
    /// closed pipe rather than filling a file or the tool waiting for it (issue 44). Inactive
    /// (`childEnd` nil: the tool's own standard error) when nothing is relayed.
    final class Capture {
        /// The end the child writes to; the caller closes it once the child is started.
        let childEnd: Int32?
        private var readEnd: Int32?
        private var kept: [UInt8] = []
        /// Every byte read, kept or not.
        private(set) var total = 0

        init() throws {
            guard ChildErrors.isRelaying else { childEnd = nil; readEnd = nil; return }
            var ends: [Int32] = [-1, -1]
            guard hvt_pipe2(&ends, O_CLOEXEC) == 0 else { throw AtomicFile.ioError(errno: errno, "could not make a pipe for a command's standard error") }
            _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
            (readEnd, childEnd) = (ends[0], ends[1])
        }

        /// The descriptor to poll for what the child wrote (-1, which poll skips, when inactive
        /// or closed).
        var pollable: Int32 { readEnd ?? -1 }

        /// Whether it wrote more than ``floodLimit`` (`yes >&2`): then it is stopped, as one
        /// that prints too much is.
        var isFlooding: Bool { total > floodLimit }

        /// Reads what the child has written by now, without waiting.
        func readAvailable() {
            guard let readEnd else { return }
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            defer { buffer.zeroize() }
            while !isFlooding {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    if count == 0 { close(readEnd); self.readEnd = nil }  // every writer gone
                    return
                }
                kept.append(contentsOf: buffer[..<min(count, max(0, limit - kept.count))])
                total += count
            }
        }

        /// What the child answered on its standard output (a key command's key), once read:
        /// a line of its standard error that repeats it is withheld (``deliver(_:withholding:)``).
        var answer: SecretBytes?

        /// Once the child has ended: reads what is left, closes the pipe whoever else holds
        /// it, and relays the lines kept.
        func finish() {
            readAvailable()
            if let readEnd { close(readEnd) }
            readEnd = nil
            // A key it answered is one this run holds from now on (as its caller would make it):
            // the relay below then finds it in any spelling, however its lines split it.
            // Only when its lines are relayed (a tool's run): the run's held secrets are global.
            if ChildErrors.isRelaying, let answer { _ = try? SecretKey(parsing: answer, what: "the command's output") }
            var answered = answer?.withUnsafeBytes { Array($0) } ?? []
            defer { answered.zeroize() }
            ChildErrors.deliver(kept, withholding: answered)
            kept.zeroize()
        }

        deinit {
            if let readEnd { close(readEnd) }
            kept.zeroize()
        }
    }

    /// Relays `bytes`, a line at a time, at most ``limit`` of them. A line that repeats a word
    /// of `answer` (what the child printed on its standard output: a credential, a token) is
    /// withheld whole: a credential_process that logs the secret it hands over (`debug: secret
    /// …`) must not show it, and no rule about keys knows an AWS secret's form.
    static func deliver(_ bytes: [UInt8], withholding answer: [UInt8] = []) {
        guard let body = sink.withLock({ $0 }) else { return }
        deliver(bytes, withholding: answer, to: body)
    }

    /// ``deliver(_:withholding:)`` to `body`. `holdsHeldSecret` says whether text holds a
    /// secret this run holds: the process's ``HeldSecrets`` in a run; a test of the lines'
    /// rules passes its own (the process's are every in-process test's keys at once, and a test
    /// that read them failed when another test had just derived its key: issue 44's flaky test).
    static func deliver(_ bytes: [UInt8], withholding answer: [UInt8],
                        holdsHeldSecret: (ArraySlice<UInt8>) -> Bool = { HeldSecrets.appear(in: $0) }, to body: (String) -> Void) {
        // A secret this run holds anywhere in what it wrote, whatever stands between its pieces
        // (halves on two lines, colons, a nsec cut in four: a hostile trial): none of it is shown.
        if holdsHeldSecret(bytes.prefix(limit)) {
            body("(its standard error not shown: it holds a key this run holds, in some spelling)")
            return
        }
        var unescaped = jsonSlashesUnescaped(answer)
        // The answer's words of hex in lower case, made once, in the same zeroed buffer's kind.
        var hexWords = answerWords(unescaped).filter { $0.count >= 32 && $0.allSatisfy { Hex.value($0) != nil } }.map { $0.map { $0 | 0x20 } }
        defer {
            unescaped.zeroize()
            for index in hexWords.indices { hexWords[index].zeroize() }
        }
        let secrets = answerWords(unescaped)
        for line in bytes.prefix(limit).split(separator: 0x0a) where !line.isEmpty {
            if repeats(line, secrets, hexWords: hexWords) {
                body("(a line not shown: it repeats what the command answered, which may be a secret)")
                continue
            }
            body(String(decoding: line, as: UTF8.self))
        }
    }

    /// Whether `line` repeats an answer's word: whole, a run of ``answerWordLength`` of its
    /// characters or more (half a key), or, for a word of hex, its digits whatever stands
    /// between them (`ab:cd:…`, `ABCD EF…`).
    private static func repeats(_ line: ArraySlice<UInt8>, _ words: [ArraySlice<UInt8>], hexWords: [[UInt8]]) -> Bool {
        guard !words.isEmpty else { return false }
        if words.contains(where: { line.firstRange(of: $0) != nil }) { return true }
        let pieces = line.split(whereSeparator: { !isWordByte($0) }).filter { $0.count >= answerWordLength }
        if pieces.contains(where: { piece in words.contains { $0.firstRange(of: piece) != nil } }) { return true }
        guard !hexWords.isEmpty else { return false }
        var lineHex = line.filter { Hex.value($0) != nil }.map { $0 | 0x20 }
        defer { lineHex.zeroize() }
        return hexWords.contains { lineHex.firstRange(of: $0) != nil }
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || "+/=_-.~".utf8.contains(byte)
    }

    /// JSON's escaped slash (`\/`, `\u002f`), as Swift's JSONEncoder and PHP write it, as the
    /// slash it is: a secret with slashes is then one word, as the child printed it elsewhere.
    private static func jsonSlashesUnescaped(_ answer: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], index = 0
        out.reserveCapacity(answer.count)
        while index < answer.count {
            if answer[index] == 0x5c, index + 1 < answer.count, answer[index + 1] == 0x2f {
                out.append(0x2f); index += 2; continue
            }
            if answer[index] == 0x5c, index + 5 < answer.count, answer[(index + 1)...(index + 4)].elementsEqual("u002".utf8), answer[index + 5] | 0x20 == 0x66 {
                out.append(0x2f); index += 6; continue
            }
            out.append(answer[index]); index += 1
        }
        return out
    }

    /// The words of an answer long enough to be a secret: runs of at least
    /// ``answerWordLength`` characters of base64, hex or a token (JSON's quotes, colons,
    /// commas and spaces end them).
    private static func answerWords(_ answer: [UInt8]) -> [ArraySlice<UInt8>] {
        answer.split(whereSeparator: { !isWordByte($0) }).filter { $0.count >= answerWordLength }
    }

    /// An AWS access key id is 20 characters, a secret 40; a session token hundreds.
    static let answerWordLength = 16
}
