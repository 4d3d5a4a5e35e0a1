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
