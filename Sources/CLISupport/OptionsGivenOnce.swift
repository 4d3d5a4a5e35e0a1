import ArgumentParser
import VaultCore

/// An option whose command keeps one value, given twice with two values (`-o a.vault -o b.vault`,
/// `--key-file a --key-file=b`, `-o a --output b`). swift-argument-parser keeps the last and says
/// nothing: the first output was never written, the first key never read, with exit 0. Refused
/// before the command line is parsed, for every command of every tool, from the command's own
/// description (``CommandSignature``), so an option added tomorrow is held to it too. The same
/// value twice means one thing, and is taken; lists (`--device A --device B`) and flags are
/// given as often as one likes.
enum OptionsGivenOnce {
    static func check<Root: ToolRoot>(_ root: Root.Type, _ arguments: [String]) throws {
        // Arrays, not sets: at every start, where a set's first use may cost a conformance scan.
        let helpRequests = ["-h", "--help", "--experimental-dump-help", "--version"]
        var spellings: [String] = []
        var repeated = false, singleDash = false
        for token in arguments {
            if token == "--" { break }
            if helpRequests.contains(token) || token.hasPrefix("--generate-completion-script") { return }
            guard token.count > 1, token.hasPrefix("-") else { continue }
            let spelling = String(token.prefix { $0 != "=" })
            if spellings.contains(spelling) { repeated = true } else { spellings.append(spelling) }
            singleDash = singleDash || !token.hasPrefix("--")
        }
        // Only a spelling given twice, or two spellings of one option (a short one and its
        // long one: no option here has two long ones, and the test of every option's every
        // pair of spellings would find one that did) can give an option twice. The command's
        // description costs a reflection of it (docs/performance.md): asked for only then.
        guard repeated || (singleDash && spellings.count >= 2) else { return }
        let (command, place) = runningCommand(root, arguments)
        let signature = CommandSignature(command)
        var first: [Int: (spelling: String, value: String?)] = [:]
        var index = place
        while index < arguments.count {
            let token = arguments[index]
            index += 1
            if token == "--" { break }
            guard token.count > 1, token.hasPrefix("-") else { continue }
            let spelling = String(token.prefix { $0 != "=" })
            guard let found = signature.options.firstIndex(where: { $0.spellings.contains(spelling) }) else { continue }
            let option = signature.options[found]
            guard option.takesValue else { continue }
            // Its value is the next word unless given with `=`; a value is never an option.
            var value: String?
            if let equals = token.firstIndex(of: "=") {
                value = String(token[token.index(after: equals)...])
            } else {
                value = index < arguments.count ? arguments[index] : nil
                index += 1
            }
            guard !option.repeats else { continue }
            if let earlier = first[found] {
                // The same value twice means one thing (a wrapper that adds what the command
                // line already has); two values are two meanings, of which the parser keeps one.
                if earlier.value == value { continue }
                throw VaultError.optionGivenTwice(first: earlier.spelling, second: spelling, longest: option.spellings.max { $0.count < $1.count } ?? spelling,
                                                  command: ([Root.toolConfiguration.commandName ?? ""] + arguments[..<place]).joined(separator: " "))
            }
            first[found] = (spelling, value)
        }
    }

    /// The command `arguments` run, found as the parser finds it (the leading words that name
    /// subcommands), and the place of the first argument after its name.
    private static func runningCommand<Root: ToolRoot>(_ root: Root.Type, _ arguments: [String]) -> (any ParsableCommand.Type, Int) {
        var command: any ParsableCommand.Type = root
        var subcommands = root.toolConfiguration.subcommands
        var place = 0
        while place < arguments.count,
              let next = subcommands.first(where: { $0.configuration.commandName == arguments[place] || $0.configuration.aliases.contains(arguments[place]) }) {
            command = next
            subcommands = next.configuration.subcommands
            place += 1
        }
        if let fallback = (ObjectIdentifier(command) == ObjectIdentifier(root) ? root.toolConfiguration : command.configuration).defaultSubcommand { command = fallback }
        return (command, place)
    }
}

extension VaultError.Code {
    /// An option the command keeps one value of, given twice.
    public static let optionGivenTwice = VaultError.Code(name: "optionGivenTwice", category: .usage)
}

extension VaultError {
    /// `first` and `second` are the spellings used (`-o`, `--output`), `command` the command
    /// they were given to (`vault-tool open`).
    static func optionGivenTwice(first: String, second: String, longest: String, command: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        let uses = first == second ? "\(first) is given twice, with two values" : "\(longest) is given twice, with two values (as \(first) and as \(second))"
        return VaultError(.optionGivenTwice, "\(uses); '\(command)' takes one, and the parser would keep the last without a word, so nothing was done",
                          hint: "give \(longest) once", file: file, line: line)
    }
}
