import ArgumentParser
import VaultCore

/// A command's options and argument as swift-argument-parser describes them to tools (the
/// `--experimental-dump-help` tool info its manual and documentation plug-ins read), asked for
/// through the parser's public entry points. What reads a command line before the parser does
/// (vault-tool's older mode spellings, an option given twice) knows every option from here, so
/// an option added to a command tomorrow is known without a second list to keep.
public struct CommandSignature: Sendable {
    /// One option or flag.
    public struct Option: Sendable {
        /// Its spellings, as typed: `--output`, `-o`.
        public let spellings: [String]
        /// Whether it takes a value (an option) or not (a flag).
        public let takesValue: Bool
        /// Whether the command keeps every use of it (a list, a counted flag).
        public let repeats: Bool
    }

    public private(set) var options: [Option] = []
    /// The name of its positional argument (`VAULT`), if it takes one.
    public private(set) var positional: String?

    public init(_ command: any ParsableCommand.Type) {
        // The parser's own description of the command, made from the command's declarations:
        // one it could not read is a programming error (a new swift-argument-parser), never a
        // command line, and would silently leave the command with no options; so it stops.
        guard let info = try? JSONValue(parsing: Array(Self.toolInfo(of: command).utf8)), case .array(let arguments)? = info["command"]?["arguments"] else {
            preconditionFailure("swift-argument-parser's description of \(command) has no arguments list")
        }
        for argument in arguments {
            guard case .string(let kind)? = argument["kind"] else { continue }
            if kind == "positional" {
                if case .string(let name)? = argument["valueName"] { positional = name.uppercased() }
                continue
            }
            guard case .array(let names)? = argument["names"] else { continue }
            let spellings = names.compactMap { name -> String? in
                guard case .string(let nameKind)? = name["kind"], case .string(let text)? = name["name"] else { return nil }
                return (nameKind == "long" ? "--" : "-") + text
            }
            var repeats = false
            if case .bool(let value)? = argument["isRepeating"] { repeats = value }
            options.append(Option(spellings: spellings, takesValue: kind == "option", repeats: repeats))
        }
    }

    /// The JSON the parser gives tools that read a command, asked for through its public entry
    /// points: the request is parsed as a command line, and the message for the request the
    /// parser raises is the description.
    private static func toolInfo(of command: any ParsableCommand.Type) -> String {
        do {
            _ = try command.parseAsRoot(["--experimental-dump-help"])
        } catch {
            return command.fullMessage(for: error, columns: nil)
        }
        return ""
    }
}

extension CommandSignature {
    /// The spellings the parser answers itself for every command (help, the version, its tool
    /// info), which no command's description lists. An array: read at every start, where a
    /// set's first use may cost a conformance scan.
    static let parserRequests = ["-h", "--help", "--experimental-dump-help", "--version"]

    /// Whether an option's spelling (its text before any `=`) is a request the parser answers
    /// itself: one of ``parserRequests``, or a completion script's.
    static func isParserRequest(_ spelling: some StringProtocol) -> Bool {
        spelling == "--generate-completion-script" || parserRequests.contains(String(spelling))
    }

    /// The command `arguments` run, found as the parser finds it (the leading words that name
    /// subcommands), and the place of the first argument after its name.
    static func running<Root: ToolRoot>(_ root: Root.Type, _ arguments: [String]) -> (any ParsableCommand.Type, Int) {
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

    /// The parser's words for the first option of `arguments` that the command they run does not
    /// have, with the closest one it does ("unknown option '--usr'. Did you mean '--user'?"), or
    /// nil. swift-argument-parser names an unknown option only once the command was read without
    /// it, so a command's missing option or its own check spoke first: `--usr bob` was "choose
    /// the devices one way", `--key-fil K` "give --key-file" (a trial). Asked only when a command
    /// line was refused as misused; only of a command with no subcommands (a group's words are
    /// its subcommands'), and only for a word that cannot be a value: one after an option that
    /// takes one is skipped, as the parser reads it.
    static func unknownOption<Root: ToolRoot>(_ root: Root.Type, _ arguments: [String]) -> String? {
        let (command, place) = running(root, arguments)
        guard command.configuration.subcommands.isEmpty else { return nil }
        let signature = CommandSignature(command)
        var index = place
        while index < arguments.count {
            let token = arguments[index]
            index += 1
            if token == "--" { return nil }
            guard token.count > 1, token.hasPrefix("-") else { continue }
            let spelling = String(token.prefix { $0 != "=" })
            if let option = signature.options.first(where: { $0.spellings.contains(spelling) }) {
                guard option.takesValue, !token.contains("=") else { continue }
                // `--` where its value should be: the parser says the value is missing, and what
                // follows is no option to name (a trial: `--key-file -- --weird.vault`).
                if index < arguments.count, arguments[index] == "--" { return nil }
                index += 1
                continue
            }
            // Short options grouped (`-fv`), and numbers (`-1`), are the parser's to read.
            guard !Self.isParserRequest(spelling), token.hasPrefix("--") || token.count == 2, !(token.dropFirst().first?.isNumber ?? false) else { continue }
            // The parser's suggestion: the closest long spelling fewer than 4 edits away.
            var distance = EditDistance(from: spelling, limit: 64)
            let closest = !spelling.hasPrefix("--") ? nil : signature.options.flatMap(\.spellings).filter { $0.hasPrefix("--") }
                .map { ($0, distance.to($0, limit: 64)) }.filter { $0.1 < 4 }.min { $0.1 < $1.1 }?.0
            return "unknown option '\(spelling)'" + (closest.map { ". Did you mean '\($0)'?" } ?? "")
        }
        return nil
    }
}
