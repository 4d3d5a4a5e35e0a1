import ArgumentParser
import VaultCore

/// An option whose command keeps one value, given twice with two values (`-o a.vault -o b.vault`,
/// `--key-file a --key-file=b`, `-o a --output b`, `-oo a b`). swift-argument-parser keeps the
/// last and said nothing: the first output was never written, the first key never read, with
/// exit 0 (a trial). The last still wins, as scripts and wrappers that add an option to override
/// one rely on (a test of our own did), but never silently: each such option is named in a
/// warning before anything is read, for every command of every tool, from the command's own
/// description (``CommandSignature``), so an option added tomorrow is held to it too. The same
/// value twice means one thing and is not warned of; lists (`--device A --device B`) and flags
/// are given as often as one likes.
enum OptionsGivenOnce {
    /// What a warning says of each option given twice with two values: its longest spelling,
    /// and the two spellings used (`-o`, `--output`).
    struct Repeat: Equatable {
        let option: String
        let first: String
        let last: String
    }

    static func repeated<Root: ToolRoot>(_ root: Root.Type, _ arguments: [String]) -> [Repeat] {
        // Only a spelling given twice, two spellings of one option (a short one and its long
        // one: no option here has two long ones, and the test of every option's every pair of
        // spellings would find one that did), or short options grouped (`-oo a b`) can give an
        // option twice. The command's description costs a reflection of it
        // (docs/performance.md): asked for only then, or past 64 spellings, which are not
        // searched one by one (a trial: 32,000 of them took 35 s).
        var spellings: [String] = []
        var repeated = false, singleDash = false, grouped = false, asked = false
        for token in arguments {
            if token == "--" { break }
            guard token.count > 1, token.hasPrefix("-") else { continue }
            let spelling = String(token.prefix { $0 != "=" })
            if CommandSignature.isParserRequest(spelling) { return [] }
            guard !asked else { continue }
            if spellings.contains(spelling) { repeated = true } else { spellings.append(spelling) }
            singleDash = singleDash || !token.hasPrefix("--")
            grouped = grouped || (!token.hasPrefix("--") && spelling.count > 2)
            asked = repeated || grouped || (singleDash && spellings.count >= 2) || spellings.count > 64
        }
        guard asked else { return [] }
        let (command, place) = CommandSignature.running(root, arguments)
        let signature = CommandSignature(command)
        var first: [Int: (spelling: String, value: String)] = [:]
        var repeats: [Repeat] = []
        var index = place
        while index < arguments.count {
            let token = arguments[index]
            index += 1
            if token == "--" { break }
            guard token.count > 1, token.hasPrefix("-") else { continue }
            let spelling = String(token.prefix { $0 != "=" })
            // A word of one dash the command has no option for is short options grouped, as the
            // parser reads it (`-oo a b` is `-o a -o b`), each taking the next value in turn.
            let uses: [(spelling: String, attached: String?)]
            if signature.options.contains(where: { $0.spellings.contains(spelling) }) {
                uses = [(spelling, token.firstIndex(of: "=").map { String(token[token.index(after: $0)...]) })]
            } else if !token.hasPrefix("--"), !token.contains("=") {
                uses = token.dropFirst().map { ("-\($0)", nil) }
            } else {
                continue
            }
            for use in uses {
                guard let found = signature.options.firstIndex(where: { $0.spellings.contains(use.spelling) }), signature.options[found].takesValue else { continue }
                let option = signature.options[found]
                // Its value is the next word unless given with `=`; a value is never an option.
                let value: String
                if let attached = use.attached {
                    value = attached
                } else {
                    // No value left: the parser says so itself.
                    guard index < arguments.count else { return repeats }
                    value = arguments[index]
                    index += 1
                }
                guard !option.repeats else { continue }
                if let earlier = first[found] {
                    // The same value twice means one thing (a wrapper that adds what the command
                    // line already has); two values are two meanings, of which the parser keeps
                    // the last. Compared as bytes: two spellings of "café" name two files.
                    if Array(earlier.value.utf8) != Array(value.utf8) {
                        let named = Repeat(option: option.spellings.max { $0.count < $1.count } ?? use.spelling, first: earlier.spelling, last: use.spelling)
                        if !repeats.contains(where: { $0.option == named.option }) { repeats.append(named) }
                    }
                }
                first[found] = (use.spelling, value)
            }
        }
        return repeats
    }
}

extension OptionsGivenOnce.Repeat {
    /// The warning's words. No value is quoted: one may be a secret's path or worse.
    var warning: String {
        let uses = first == last ? "\(first) is given more than once" : "\(option) is given more than once (as \(first) and as \(last))"
        return "\(uses), with different values: the last one given is used, and the others are ignored"
    }
}
