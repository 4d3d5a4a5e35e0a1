import ArgumentParser
import CLISupport
import VaultCore

/// The spellings from before `migrate` and `check` had a subcommand per mode (issue 39), still
/// read as they were: `vault-tool migrate --manifest jobs.jsonl --out-dir out --to 2` is
/// `migrate batch …`. A pass over the arguments, before they are parsed, finds the one mode whose
/// options are all those given and names it; options of two modes together are a usage error
/// that names the two, instead of one mode's parser calling the other's option unknown.
///
/// What options each mode has is read from the mode's own parser (the description its `--help`,
/// the manual page and the completions come from, as the parser gives it to tools through its
/// public entry points), so an option added to a mode is known here without a second list to keep.
enum ModeDispatch {
    struct Mode {
        /// The subcommand's name: `vault`, `batch`, `bucket`.
        let name: String
        /// What the mode works on, for messages: "one vault".
        let what: String
        let command: any ParsableCommand.Type
    }

    /// The modes of a command that has them, in the order that wins when the options given fit
    /// several (`migrate --to 2 --in-place FILE` is one vault, not a bucket run). A switch, not a
    /// dictionary: it is asked at every start, and a dictionary's first use costs a conformance
    /// scan of the whole binary (docs/performance.md).
    static func modes(of command: String) -> [Mode]? {
        switch command {
        case "migrate":
            [Mode(name: "vault", what: "one vault", command: MigrateVault.self),
             Mode(name: "batch", what: "a folder batch", command: MigrateBatch.self),
             Mode(name: "bucket", what: "a fleet in a bucket", command: MigrateBucket.self)]
        case "check":
            [Mode(name: "vault", what: "one vault", command: CheckVault.self),
             Mode(name: "bucket", what: "a fleet in a bucket", command: CheckBucket.self)]
        default: nil
        }
    }

    /// The arguments (without the tool's name) with the mode named where it was left out.
    static func arguments(_ arguments: [String]) throws -> [String] {
        guard let command = arguments.first, let modes = modes(of: command) else { return arguments }
        let rest = Array(arguments.dropFirst())
        let signatures = modes.map { Signature($0.command) }
        let named = rest.first.flatMap { first in modes.firstIndex { $0.name == first } }
        let uses = Signature.used(in: Array(rest.dropFirst(named == nil ? 0 : 1)), by: signatures)
        // After an option no mode has (a typo), the next word may be its value, not a VAULT:
        // arguments are then left for the mode's parser, which names the unknown option.
        let unknownOption = uses.contains { use in use.option != Signature.positionalKey && !signatures.contains { $0.accepts(use.option) } }
        let given = uses.filter { use in
            signatures.contains { $0.accepts(use.option) } && !(unknownOption && use.option == Signature.positionalKey)
        }
        func owners(_ option: String) -> String {
            modes.indices.filter { signatures[$0].accepts(option) }
                .map { "\(modes[$0].what) ('vault-tool \(command) \(modes[$0].name)')" }.joined(separator: " or ")
        }
        let helpFlags = ["-h", "--help", "--experimental-dump-help"]
        let asksForHelp = rest.contains { helpFlags.contains($0) }
        if let index = named {
            // The mode named and its help asked for: its help, whatever else the line holds, as
            // every other command's parser shows help.
            if asksForHelp { return arguments }
            // The mode named: an option of another mode is said to be one, not merely unknown.
            if let foreign = given.first(where: { !signatures[index].accepts($0.option) }) {
                let what = foreign.option == Signature.positionalKey ? "takes no \(foreign.spelling)" : "has no option \(foreign.spelling)"
                throw VaultError.optionOfAnotherMode("'vault-tool \(command) \(modes[index].name)' \(what): it is for \(owners(foreign.option))",
                                                     hint: "see 'vault-tool \(command) \(modes[index].name) --help' for the options of \(modes[index].what)")
            }
            return arguments
        }
        let fitting = signatures.indices.filter { index in given.allSatisfy { signatures[index].accepts($0.option) } }
        // `check -h bucket`, as `git -h commit` would be typed: the help of the mode named right
        // after the help flags, not of the mode whose VAULT a mode's name would be. Only there:
        // an option's value is no mode's name (`--out-dir vault` names a folder), nor is a VAULT
        // after options (`check --key-file K bucket --help` checks a file named bucket).
        if asksForHelp, let argument = uses.first(where: { $0.option == Signature.positionalKey }),
           rest[..<argument.place].allSatisfy(helpFlags.contains), modes.contains(where: { $0.name == rest[argument.place] }) {
            return [command, rest[argument.place]] + rest.enumerated().filter { $0.offset != argument.place }.map(\.element)
        }
        // `migrate --help` with nothing of one mode: the command's own help, which lists the modes.
        if asksForHelp, fitting.count == modes.count { return arguments }
        guard let mode = fitting.first else { throw conflict(command, given, signatures, owners) }
        return [command, modes[mode].name] + rest
    }

    /// The first two options given that no one mode takes together, named with their modes.
    private static func conflict(_ command: String, _ given: [Signature.Use], _ signatures: [Signature], _ owners: (String) -> String) -> VaultError {
        let hint = "give the options of one mode; 'vault-tool \(command) --help' lists the modes, and each mode's --help its options"
        for (position, first) in given.enumerated() {
            for second in given[(position + 1)...] where !signatures.contains(where: { $0.accepts(first.option) && $0.accepts(second.option) }) {
                return VaultError.optionOfAnotherMode("\(first.spelling) and \(second.spelling) belong to different modes of '\(command)': "
                                                      + "\(first.spelling) is for \(owners(first.option)), \(second.spelling) is for \(owners(second.option))", hint: hint)
            }
        }
        return VaultError.optionOfAnotherMode("\(given.map(\.spelling).joined(separator: ", ")) do not all belong to one mode of '\(command)'", hint: hint)
    }

    /// A mode's options as its parser describes them (the `--experimental-dump-help` tool info):
    /// each spelling (`--to`, `-o`), whether it takes a value, and whether it takes arguments.
    struct Signature {
        /// Option spellings → whether the option takes a value.
        private(set) var options: [String: Bool] = [:]
        /// The name of its positional argument (`VAULT`), if it takes one.
        private(set) var positional: String?

        /// How a positional argument is named in ``Use``, whatever its value name.
        static let positionalKey = "<argument>"

        init(_ command: any ParsableCommand.Type) {
            let signature = CommandSignature(command)
            positional = signature.positional
            for option in signature.options {
                for spelling in option.spellings { options[spelling] = option.takesValue }
            }
        }

        func accepts(_ option: String) -> Bool {
            option == Self.positionalKey ? positional != nil : options[option] != nil
        }

        /// One option or argument the command line gives: `option` as the modes know it
        /// (`--to`, or ``positionalKey``), `spelling` as a message names it.
        struct Use {
            let option: String
            let spelling: String
            /// Its place among the arguments.
            let place: Int
        }

        /// The options and arguments `arguments` gives, in order, the first use of each; an
        /// option's value is skipped when one of the modes says the option takes one.
        static func used(in arguments: [String], by signatures: [Signature]) -> [Use] {
            var uses: [Use] = []
            var index = 0
            var onlyArguments = false
            func add(_ use: Use) { if !uses.contains(where: { $0.option == use.option }) { uses.append(use) } }
            while index < arguments.count {
                let token = arguments[index]
                index += 1
                if onlyArguments || token == "-" || !token.hasPrefix("-") {
                    let name = signatures.lazy.compactMap(\.positional).first ?? "ARGUMENT"
                    add(Use(option: positionalKey, spelling: "\(name) '\(token)'", place: index - 1))
                    continue
                }
                if token == "--" {
                    onlyArguments = true
                    continue
                }
                let option = String(token.prefix { $0 != "=" })
                add(Use(option: option, spelling: option, place: index - 1))
                if !token.contains("="), signatures.contains(where: { $0.options[option] == true }) { index += 1 }
            }
            return uses
        }
    }
}

extension VaultError.Code {
    /// Options of different modes of one command given together, or one of another mode.
    public static let optionOfAnotherMode = VaultError.Code(name: "optionOfAnotherMode", category: .usage)
}

extension VaultError {
    /// `text` names the options and the modes they belong to.
    static func optionOfAnotherMode(_ text: String, hint: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.optionOfAnotherMode, text, hint: hint, file: file, line: line)
    }
}
