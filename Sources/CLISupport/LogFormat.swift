import ArgumentParser
import FoundationEssentials
import Synchronization
import VaultCore
import VaultFiles

/// `--log-format json`: every message to standard error (summaries, warnings, errors, progress)
/// as one JSON object a line, `{"time": RFC 3339, "level": "info|warning|error", "event": …,
/// "tool": …, "message": …}`, so a container log that merges both streams is JSON Lines
/// throughout (the JSON report on standard output is unchanged). Progress, on a terminal a bar,
/// is then a `progress` event at most every 10 seconds.
public enum LogFormat: String, Sendable, CaseIterable, ExpressibleByArgument {
    case text, json

    /// The format of this run's messages; set once, from the command line.
    public static var current: LogFormat { selected.load(ordering: .relaxed) ? .json : .text }
    private static let selected = Atomic<Bool>(false)

    /// Seconds between two progress events.
    public static let progressInterval = 10.0

    /// One event's line: `time`, `level`, `event`, `tool`, then `fields` in order.
    public static func line(level: String, event: String, tool: String, fields: [(key: String, value: JSONValue)]) -> [UInt8] {
        let time = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)
            .dateSeparator(.dash).timeSeparator(.colon).dateTimeSeparator(.standard))
        let object = JSONValue.object([("time", .string(time)), ("level", .string(level)), ("event", .string(event)), ("tool", .string(tool))] + fields)
        return object.reported(pretty: false) + Array("\n".utf8)
    }

    fileprivate static func select(_ format: LogFormat) {
        selected.store(format == .json, ordering: .relaxed)
    }

    /// The format a command line asks for, read before it is parsed, so that a usage error on
    /// that line is JSON too (issue 44: `--log-format json` printed plain lines for them). Up to
    /// `--`, as the parser reads options; the last given wins, as it does for the parser (a
    /// trial: `--log-format json --log-format text` wrote its first lines as JSON, the rest as text).
    static func selectFromArguments(_ arguments: [String]) {
        for (index, argument) in arguments.enumerated() {
            if argument == "--" { return }
            if argument.hasPrefix("--log-format=") {
                select(argument == "--log-format=json" ? .json : .text)
            } else if argument == "--log-format" {
                select(arguments.dropFirst(index + 1).first == "json" ? .json : .text)
            }
        }
    }
}

/// The option, for any command that runs long enough to be logged by an engine.
public struct LogFormatOption: ParsableArguments {
    @Option(name: .customLong("log-format"), help: ArgumentHelp("How messages on standard error are written: text, or json (one JSON object a line, for a container log).", valueName: "MODE"))
    public var logFormat: LogFormat = .text

    public init() {}

    /// Makes the format this run's; first thing in `run()`.
    public func apply() { LogFormat.select(logFormat) }
}
