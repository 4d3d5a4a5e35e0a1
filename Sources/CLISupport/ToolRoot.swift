import ArgumentParser
import Synchronization

/// A tool's root command: what `ToolMain.run` starts. The tool writes `toolConfiguration`; the
/// parser reads `configuration`, which this protocol gives, for one reason:
///
/// Before every parse, swift-argument-parser looks for `--generate-completion-script` by parsing
/// the whole command line again as two hidden commands of its own, built by reflection. On a
/// static binary each first look-up of a type's conformances scans every conformance record, so
/// that look costs more than half of `vault-tool --version`'s instructions (callgrind; see
/// docs/performance.md), on every call of every command. The parser skips it for a root command
/// that names a super-command. So `ToolMain` looks for the option's spelling itself, and only
/// while it parses a command line without it does the root name an (empty) super-command; help,
/// usage lines and manuals are written after the parse, without it, and a command line that asks
/// for a completion script is parsed exactly as before.
public protocol ToolRoot: ParsableCommand {
    static var toolConfiguration: CommandConfiguration { get }
}

extension ToolRoot {
    public static var configuration: CommandConfiguration {
        guard CompletionScriptCheck.skipped.load(ordering: .relaxed) else { return toolConfiguration }
        var configuration = toolConfiguration
        configuration._superCommandName = ""
        return configuration
    }
}

enum CompletionScriptCheck {
    /// True only while `parseAsRoot` reads a command line that cannot ask for a completion script.
    static let skipped = Atomic<Bool>(false)

    /// The command `arguments` name, parsed by `Root`; the parser's own look for a completion
    /// script request is made only when one of them is spelt as that option (`--generate-completion-script`
    /// or `--generate-completion-script=SHELL`), wherever it stands, as the parser looks.
    static func parse<Root: ToolRoot>(_ root: Root.Type, _ arguments: [String]) throws -> ParsableCommand {
        let mayAsk = arguments.contains { $0.hasPrefix("--generate-completion-script") }
        skipped.store(!mayAsk, ordering: .relaxed)
        defer { skipped.store(false, ordering: .relaxed) }
        return try Root.parseAsRoot(arguments)
    }
}

/// Whether the command line may ask for help (`--help`, `-h`, `--help-hidden`, the `help`
/// subcommand) or another answer argument-parser gives itself (`--version`, a completion
/// script, the help dump). swift-argument-parser validates each option group as it decodes it, before it
/// looks for help, so an option group whose check needs a library loaded on use (a PostgreSQL
/// connection read by libpq) asks this first and leaves the check to the run: help loads
/// nothing (issue 48; a trial found `registry devices --db postgresql://… --help` loading
/// libpq's tree). A value spelt like a help flag only defers the check to the run.
public enum HelpRequest {
    public static let mayBeAsked: Bool = {
        let arguments = CommandLine.arguments.dropFirst()
        // Every flag argument-parser answers itself, whatever else the line holds (a trial:
        // `--version` and `--experimental-dump-help` beside a PostgreSQL --db loaded libpq).
        return arguments.first == "help" || arguments.contains {
            $0 == "-h" || $0.hasPrefix("--help") || $0.hasPrefix("-help") || $0 == "--version"
                || $0.hasPrefix("--experimental-dump-help") || $0.hasPrefix("--generate-completion-script")
        }
    }()
}
