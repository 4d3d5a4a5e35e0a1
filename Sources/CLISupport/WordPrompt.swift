import FoundationEssentials
import Glibc
import VaultCore

/// Secret words typed at a terminal one at a time, as a hardware wallet asks for them: "word 3
/// of 24:", each word checked against its list as it is entered (an unknown word gets the
/// list's closest words), "-" goes back to the word before, and the whole is checked at the end
/// (a check that points to one word asks for that word again, and only that word). An answer
/// may hold several words (a pasted line, or a row of the printed grid): they fill the next
/// places, and words typed row by row across the grid are then recognised by their checksum,
/// as in a file. A prompt for a key also takes the key as printed (`nsec1…` in groups). Echo
/// is on, since people must see what they type, but the prompt runs on the terminal's alternate
/// screen (as a full-screen program does), which the terminal discards when the prompt ends,
/// however it ends (a signal included): nothing typed reaches the screen's scrollback or stays
/// on it. Ctrl-C or Ctrl-D cancels with nothing written.
public struct WordPrompt {
    /// What the final check of all the words found.
    public enum Verdict {
        case valid
        /// The check points to one word (its number, from 1), with the word that would make it
        /// pass when exactly one does.
        case wrongWord(position: Int, suggestion: String?)
        /// The words do not pass; `reason` says why, naming no word.
        case invalid(reason: String)
    }

    /// What is being typed, for the first line: "the 24 words of the key".
    public let title: String
    public let count: Int
    public let check: (SecretBytes) -> TypedWord
    /// Checks the words: numbered ("1 word 2 word …"), or unnumbered, one answer a line.
    public let verify: (SecretBytes) -> Verdict
    /// Whether the first answer may be the key as printed (`nsec1…`, `ncryptsec1…`), checked
    /// by `verify` on its own.
    public var takesKey = false

    public init(title: String, count: Int, check: @escaping (SecretBytes) -> TypedWord, verify: @escaping (SecretBytes) -> Verdict) {
        self.title = title
        self.count = count
        self.check = check
        self.verify = verify
    }

    /// The words in protected memory: numbered ("1 abandon 2 ability …") when each was typed
    /// alone, else unnumbered with one answer a line, for the reader to find their order. A
    /// word is kept as the list's own spelling of it. With ``takesKey``, a typed key instead.
    public func ask() throws -> SecretBytes {
        let terminal = try Terminal()
        var words = [String](repeating: "", count: count)
        // The answer each word came in: words of one answer are one line of the result.
        var answers = [Int](repeating: 0, count: count)
        var answer = 0
        defer { for index in words.indices { words[index] = "" } }
        terminal.say("Type \(title), one at a time or several on a line" + (takesKey ? ", or the key as printed (nsec1…)" : "") + "; - goes back to the word before.")
        var position = 0
        // After the final check sends the person back to one word, only that word is asked
        // again, then the whole is checked again.
        var correcting = false
        while position < count {
            let typed = try terminal.secretLine("word \(position + 1) of \(count): ")
            if typed.withUnsafeBytes({ $0.elementsEqual([0x2d]) }) {  // "-"
                position = max(0, position - 1)
                continue
            }
            guard typed.count > 0 else { continue }
            if takesKey, position == 0, try TypedKey.normalized(typed) != nil {
                guard case .invalid(let reason) = verify(typed) else { return typed }
                terminal.say("  \(reason)")
                continue
            }
            let tokens = try Self.tokens(typed)
            guard correcting || tokens.count <= count - position else {
                terminal.say("  that is \(tokens.count) words, and \(count - position) places are left (word \(position + 1) to \(count)): type it again")
                continue
            }
            answer += 1
            // The words before an unknown one are kept; the rest of the answer is typed again.
            for token in tokens where position < count {
                guard case .word(let word) = check(token) else {
                    if case .unknown(let closest) = check(token) {
                        terminal.say("  word \(position + 1) is not a word of the list; closest: \(closest.joined(separator: ", "))")
                    }
                    break
                }
                words[position] = word
                answers[position] = answer
                position = correcting ? count : position + 1
            }
            if tokens.count > 1, (1..<count).contains(position), !correcting {
                terminal.say("  \(position) of \(count) words so far")
            }
            if position == count {
                position = try finalCheck(&words, answers, terminal)
                correcting = position < count
                if correcting { answer += 1 }
            }
        }
        return try text(words, answers)
    }

    /// The words of one answer (split at spaces and commas), each in protected memory; the
    /// sheet's numbering pasted with them ("1.", "12)") is left out.
    private static func tokens(_ typed: SecretBytes) throws -> [SecretBytes] {
        try typed.withUnsafeBytes { bytes in
            var tokens: [SecretBytes] = []
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x20 || bytes[index] == 0x2c {
                let token = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                start = index + 1
                guard !token.isEmpty, !token.allSatisfy({ (0x30...0x39).contains($0) || [0x2e, 0x29, 0x3a].contains($0) }) else { continue }
                tokens.append(try SecretBytes(copying: token))
            }
            return tokens
        }
    }

    /// Whether every word was typed alone: then each answer's number is its place, certain.
    private static func oneWordAnAnswer(_ answers: [Int]) -> Bool { Set(answers).count == answers.count }

    /// Checks all the words; returns `count` when they pass, else the place to type again.
    private func finalCheck(_ words: inout [String], _ answers: [Int], _ terminal: Terminal) throws -> Int {
        switch try verify(text(words, answers)) {
        case .valid:
            return count
        case .wrongWord(let position, let suggestion):
            // The position is the word's printed number; typed row by row it is elsewhere in
            // the typed order, so each place it may be is tried.
            var places = [position - 1]
            if !Self.oneWordAnAnswer(answers), let typed = WordOrder.printedPlaces(typedAcrossRows: count).firstIndex(of: position - 1) {
                places.append(typed)
            }
            if let suggestion {
                let answer = try terminal.line("the check points to word \(position): did you mean '\(suggestion)'? [y/n] ")
                if answer.lowercased().hasPrefix("y") {
                    for place in places {
                        var changed = words
                        changed[place] = suggestion
                        if case .valid = try verify(text(changed, answers)) {
                            words = changed
                            return count
                        }
                    }
                }
            } else {
                terminal.say("the check points to word \(position): type it again")
            }
            return places[0]
        case .invalid(let reason):
            terminal.say(reason)
            let order = Self.oneWordAnAnswer(answers) ? "" : ", counted as you typed them"
            let answer = try terminal.line("number of the word to type again (1 to \(count)\(order)), or Enter to stop: ")
            guard let number = Int(answer), (1...count).contains(number) else {
                throw VaultError.typedWordsFailTheirCheck()
            }
            return number - 1
        }
    }

    /// The words for the reader: numbered when each was typed alone, else one answer a line.
    /// Only answers no longer than a row of the printed grid may be its rows;
    /// longer ones (a pasted line) are in their order, one line, so no second reading of them
    /// can pass the checksum by chance and be refused as ambiguous.
    private func text(_ words: [String], _ answers: [Int]) throws -> SecretBytes {
        let numbered = Self.oneWordAnAnswer(answers)
        let rows = Dictionary(grouping: answers, by: { $0 }).values.allSatisfy { $0.count <= WordOrder.wordsInAGridRow }
        var text: [UInt8] = []
        text.reserveCapacity(words.reduce(0) { $0 + $1.utf8.count + 4 })  // one buffer, no regrowth
        for (index, word) in words.enumerated() {
            if index > 0 { text.append(!numbered && rows && answers[index] != answers[index - 1] ? 0x0a : 0x20) }
            if numbered { text.append(contentsOf: "\(index + 1) ".utf8) }
            text.append(contentsOf: word.utf8)
        }
        return try SecretBytes(consuming: &text)
    }
}

/// The controlling terminal in character mode on its alternate screen, echoing what is typed;
/// when it closes, the alternate screen (and all that was typed on it) is left and the settings
/// are restored.
private final class Terminal {
    private let descriptor: Int32
    private var saved = termios()

    init() throws {
        descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw VaultError.noTerminal(for: "type the words on", instead: "give them in a file") }
        var raw = termios()
        guard tcgetattr(descriptor, &saved) == 0 else {
            close(descriptor)
            throw VaultError.terminalUnusable("read words from this terminal", instead: "give them in a file")
        }
        raw = saved
        // Character at a time, our own echo, and Ctrl-C as a byte: it then cancels here, after
        // the screen is cleared and the settings restored, instead of killing the tool mid-line.
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(descriptor, TCSAFLUSH, &raw) == 0 else {
            close(descriptor)
            throw VaultError.terminalUnusable("read words from this terminal", instead: "give them in a file")
        }
        // The alternate screen has no scrollback: however many lines the words take, none
        // scrolls out of reach of the clearing. Cleared on entry and on leaving, for terminals
        // that keep its contents.
        write("\u{1b}[?1049h\u{1b}[H\u{1b}[2J")
        PromptSignals.arm(descriptor, restoring: saved, farewell: Self.farewell)
    }

    /// Clears the alternate screen and leaves it: what closing the prompt writes, however it ends.
    private static let farewell = "\u{1b}[H\u{1b}[2J\u{1b}[?1049l"

    deinit {
        // Restored before the handlers go: a signal in between finds the terminal as it was.
        write(Self.farewell)
        _ = tcsetattr(descriptor, TCSAFLUSH, &saved)
        PromptSignals.disarm()
        close(descriptor)
    }

    func say(_ text: String) {
        write(text.displaySafe + "\r\n")
    }

    /// An answer after `prompt` (y or n, a number): not a secret.
    func line(_ prompt: String) throws -> String {
        try secretLine(prompt).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// One line after `prompt`, without surrounding spaces, in protected memory: printable
    /// bytes echoed, backspace erasing, at most 512 bytes (a pasted share or key, in groups).
    func secretLine(_ prompt: String) throws -> SecretBytes {
        write(prompt)
        var typed: [UInt8] = []
        typed.reserveCapacity(512)  // no regrowth: no partial copies left in freed memory
        defer { for index in typed.indices { typed[index] = 0 } }
        var byte: UInt8 = 0
        while true {
            let got = read(descriptor, &byte, 1)
            if got < 0, errno == EINTR { continue }
            guard got == 1, byte != 0x03, byte != 0x04 else { throw VaultError.promptCancelled() }
            switch byte {
            case 0x0d, 0x0a:
                write("\r\n")
                let start = typed.firstIndex { $0 != 0x20 } ?? typed.endIndex
                let end = typed.lastIndex { $0 != 0x20 }.map { $0 + 1 } ?? start
                return try typed[start..<end].withUnsafeBytes { try SecretBytes(copying: $0) }
            case 0x7f, 0x08:
                if !typed.isEmpty {
                    typed.removeLast()
                    write("\u{8} \u{8}")
                }
            case 0x20...0x7e where typed.count < 512:
                typed.append(byte)
                write(String(UnicodeScalar(byte)))
            default:
                continue
            }
        }
    }

    private func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }
}

extension WordPrompt {
    /// 24 BIP-39 words (a key, a recovery code), checked with `decode` at the end.
    public static func bip39(_ title: String, decode: @escaping (SecretBytes) throws -> Void) -> WordPrompt {
        WordPrompt(title: title, count: 24, check: BIP39.check(typed:)) { text in
            do {
                try decode(text)
                return .valid
            } catch let error as VaultError {
                return .invalid(reason: error.reason)
            } catch {
                return .invalid(reason: "the words do not pass their check")
            }
        }
    }

    /// A family key's share: 33 SLIP-0039 words. Its checksum can point to one wrong word, and
    /// name the word that fits when exactly one does.
    public static func slip39Share(_ number: Int) -> WordPrompt {
        WordPrompt(title: "the 33 words of share \(number)", count: 33, check: SLIP39.check(typed:)) { text in
            do {
                _ = try SLIP39Share(words: text, share: number)
                return .valid
            } catch ShareProblem.wrongWord(_, let position) {
                return .wrongWord(position: position, suggestion: SLIP39Share.correctingOneWord(text)?.word)
            } catch let problem as ShareProblem {
                return .invalid(reason: problem.reason)
            } catch {
                return .invalid(reason: "the words are not a share")
            }
        }
    }
}
