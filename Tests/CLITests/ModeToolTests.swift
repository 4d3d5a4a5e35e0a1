import Foundation
import Testing

/// `migrate` and `check` have a subcommand per mode (issue 39): each mode's help shows only its
/// own options, the spellings from before the split run as the mode they name, and options of
/// two modes together are a usage error naming both.
@Suite struct ModeHelpGoldenTests {
    static let cases: [GoldenCase] = [
        GoldenCase(tool: "vault-tool", name: "migrate-help", arguments: ["migrate", "--help"]),
        GoldenCase(tool: "vault-tool", name: "migrate-vault-help", arguments: ["migrate", "vault", "--help"]),
        GoldenCase(tool: "vault-tool", name: "migrate-batch-help", arguments: ["migrate", "batch", "--help"]),
        GoldenCase(tool: "vault-tool", name: "migrate-bucket-help", arguments: ["migrate", "bucket", "--help"]),
        GoldenCase(tool: "vault-tool", name: "check-help", arguments: ["check", "--help"]),
        GoldenCase(tool: "vault-tool", name: "check-vault-help", arguments: ["check", "vault", "--help"]),
        GoldenCase(tool: "vault-tool", name: "check-bucket-help", arguments: ["check", "bucket", "--help"]),
        GoldenCase(tool: "vault-tool", name: "migrate-modes-mixed", arguments: ["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "out",
                                                                                  "--vault-key-dir", "keys"]),
        GoldenCase(tool: "vault-tool", name: "migrate-batch-foreign-option", arguments: ["migrate", "batch", "--manifest", "jobs.jsonl", "--to", "2",
                                                                                           "--out-dir", "out", "--key-file", "keys/parent.nsec"]),
    ]

    @Test(arguments: cases)
    func golden(_ golden: GoldenCase) throws {
        try Golden.check(golden)
    }
}

/// The modes of `migrate` and `check` as the tool's own parser describes them.
struct Modes {
    /// "migrate" → "batch" → its long and short options ("--manifest", "-o").
    let options: [String: [String: Set<String>]]
    /// Options that take a value.
    let valued: Set<String>
    /// Modes with a positional argument.
    let positional: Set<String>

    static let shared: Modes = {
        let workspace = try! Workspace()
        let dump = try! workspace.run("vault-tool", ["--experimental-dump-help"])
        let root = (try! JSONSerialization.jsonObject(with: Data(dump.stdout)) as! [String: Any])["command"] as! [String: Any]
        var options: [String: [String: Set<String>]] = [:], valued = Set<String>(), positional = Set<String>()
        for command in root["subcommands"] as! [[String: Any]] where ["migrate", "check"].contains(command["commandName"] as! String) {
            let name = command["commandName"] as! String
            for mode in command["subcommands"] as! [[String: Any]] {
                let modeName = mode["commandName"] as! String
                var names = Set<String>()
                for argument in mode["arguments"] as? [[String: Any]] ?? [] {
                    if argument["kind"] as? String == "positional" { positional.insert("\(name) \(modeName)") }
                    for spelling in argument["names"] as? [[String: Any]] ?? [] {
                        let option = (spelling["kind"] as! String == "long" ? "--" : "-") + (spelling["name"] as! String)
                        names.insert(option)
                        if argument["kind"] as? String == "option" { valued.insert(option) }
                    }
                }
                options[name, default: [:]][modeName] = names.subtracting(["-h", "--help"])
            }
        }
        return Modes(options: options, valued: valued, positional: positional)
    }()

    /// The options of `mode` no other mode of `command` has.
    func exclusive(_ command: String, _ mode: String) -> Set<String> {
        options[command]![mode]!.subtracting(options[command]!.filter { $0.key != mode }.values.reduce(into: Set<String>()) { $0.formUnion($1) })
    }

    /// An option with a value if it takes one.
    func spelled(_ option: String) -> [String] { valued.contains(option) ? [option, "x"] : [option] }
}

@Suite struct ModeTests {
    static let modes = [("migrate", "vault"), ("migrate", "batch"), ("migrate", "bucket"), ("check", "vault"), ("check", "bucket")]

    /// The long options a help text's OPTIONS section lists.
    static func listedOptions(_ help: String) throws -> Set<String> {
        let section = try #require(help.components(separatedBy: "\nOPTIONS:\n").last)
        return Set(section.split(separator: "\n").compactMap { line in
            line.firstMatch(of: #/^  (?:-[a-z], )?(--[a-z][a-z0-9-]*)/#).map { String($0.output.1) }
        })
    }

    @Test(arguments: modes)
    func eachModesHelpListsItsOwnOptionsAndNoOtherModes(_ command: String, _ mode: String) throws {
        let all = Modes.shared
        let own = try #require(all.options[command]?[mode])
        #expect(own.count >= 4, "\(command) \(mode): \(own)")
        let run = try Workspace().run("vault-tool", [command, mode, "--help"])
        #expect(run.status == 0, "\(run.stderrText)")
        let listed = try Self.listedOptions(run.stdoutText)
        #expect(listed == own.filter { $0.hasPrefix("--") }.union(["--help"]), "\(command) \(mode) --help lists \(listed.sorted())")
        for (other, options) in all.options[command]! where other != mode {
            let foreign = options.subtracting(own).filter { $0.hasPrefix("--") }
            #expect(listed.isDisjoint(with: foreign), "\(command) \(mode) --help lists \(other)'s \(listed.intersection(foreign).sorted())")
        }
        // No option says which mode it is for: the mode says it.
        #expect(!run.stdoutText.contains("Batch mode:") && !run.stdoutText.contains("Bucket mode:") && !run.stdoutText.contains("Fleet mode:"))
    }

    /// `--help` after the options of one mode, in the spelling without the mode, shows that
    /// mode's help; with nothing of one mode, the command's, which lists the modes.
    @Test func helpInTheOldSpellingShowsTheHelpOfTheModeTheOptionsName() throws {
        let workspace = try Workspace()
        for (arguments, mode) in [(["migrate", "--manifest", "m.jsonl", "--help"], ["migrate", "batch"]),
                                  (["migrate", "--source", "s3://b/p/", "--help"], ["migrate", "bucket"]),
                                  (["migrate", "--key-file", "k", "--help"], ["migrate", "vault"]),
                                  (["check", "--subset", "auto/7", "--help"], ["check", "bucket"]),
                                  (["check", "--json", "--help"], ["check", "vault"]),
                                  (["migrate", "--to", "2", "--help"], ["migrate"]),
                                  (["check", "--help"], ["check"]),
                                  (["check", "-h", "bucket"], ["check", "bucket"]),
                                  (["migrate", "--help", "batch"], ["migrate", "batch"]),
                                  (["migrate", "-h", "vault"], ["migrate", "vault"]),
                                  // An option's value that is a mode's name names no mode.
                                  (["migrate", "--out-dir", "vault", "--manifest", "m.jsonl", "--help"], ["migrate", "batch"]),
                                  (["check", "--vault-key-dir", "vault", "-h"], ["check", "bucket"]),
                                  // A VAULT named like a mode, after options, is a file, not a mode.
                                  (["check", "--key-file", "k", "bucket", "--help"], ["check", "vault"]),
                                  (["migrate", "--key-file", "k", "--to", "2", "--in-place", "batch", "--help"], ["migrate", "vault"]),
                                  // A mode named: its help, whatever else is on the line.
                                  (["check", "bucket", "-h", "vault"], ["check", "bucket"]),
                                  (["migrate", "bucket", "--help", "batch"], ["migrate", "bucket"]),
                                  (["check", "bucket", "--help", "--key-file", "x"], ["check", "bucket"])] {
            let old = try workspace.run("vault-tool", arguments)
            let new = try workspace.run("vault-tool", mode + ["--help"])
            #expect(old.status == 0 && old.stdout == new.stdout && !new.stdout.isEmpty, "\(arguments): \(old.stderrText)")
        }
    }

    /// A mistyped option is the mode's parser's to name, its value not taken for a VAULT of
    /// another mode.
    @Test func aMistypedOptionIsNamedAsUnknown() throws {
        let workspace = try Workspace()
        for arguments in [["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "out", "--jbos", "4"],
                          ["migrate", "batch", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "out", "--jbos", "4"],
                          ["check", "--source", "s3://family-vaults/vaults/", "--vault-key-dri", "keys"]] {
            let run = try workspace.run("vault-tool", arguments)
            let option = arguments[arguments.count - 2]
            #expect(run.status == 64 && run.stderrText.hasPrefix("vault-tool: error: unknown option '\(option)'"), "\(arguments): \(run.stderrText)")
        }
    }

    /// The spelling without the mode and the one with it: the same standard output, standard
    /// error, exit code and files (by name and size: a sealed vault's nonce is new each time),
    /// for each mode's successes and refusals.
    @Test(arguments: [
        ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "--dry-run", "testkit/ok-household.vault"],
        ["migrate", "--vault-key-file", "keys/parent.vaultkey", "--to", "1", "--dry-run", "--json", "--allow-lossy", "testkit/ok-v2-household.vault"],
        ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "-o", "up.vault", "testkit/ok-household.vault"],
        ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "--in-place", "testkit/ok-minimal.vault"],
        ["migrate", "--key-file", "keys/parent.nsec", "--to", "1", "-o", "down.vault", "testkit/ok-v2-household.vault"],
        ["migrate", "--to", "2", "--in-place", "--key-file", "keys/parent.nsec", "-"],
        ["migrate", "--to", "2", "--key-file", "keys/parent.nsec", "--dry-run"],
        ["migrate", "testkit/ok-household.vault"],
        ["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "out"],
        ["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "out", "--dry-run", "--jobs", "1"],
        ["migrate", "--to", "2", "--manifest", "jobs.jsonl"],
        ["migrate", "--to", "2", "--out-dir", "out"],
        ["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--in-place"],
        ["migrate", "--source", "s3://family-vaults/vaults/", "--to", "2", "--in-place", "--vault-key-dir", "missing-keys"],
        ["migrate", "--source", "s3://family-vaults/vaults/", "--to", "2", "--vault-key-dir", "keys"],
        ["migrate", "--inventory", "s3://family-vaults/inv/manifest.json", "--to", "2", "--in-place"],
        ["migrate", "--source", "s3://family-vaults/vaults/", "--to", "2", "--in-place", "--vault-key-dir", "keys", "--completion-report", "-"],
        ["check", "--key-file", "keys/parent.nsec", "testkit/ok-household.vault"],
        ["check", "--key-file", "keys/parent.nsec", "--json", "testkit/check-findings.vault"],
        ["check", "testkit/ok-household.vault"],
        ["check", "--source", "s3://family-vaults/vaults/", "--vault-key-dir", "missing-keys"],
        ["check", "--source", "s3://family-vaults/vaults/", "--manifest", "m.jsonl"],
        ["check", "--subset", "0/3", "--source", "s3://family-vaults/vaults/"],
        ["check", "--manifest", "objects.jsonl", "--vault-key-dir", "keys"],
    ])
    func theSpellingWithoutTheModeRunsAsTheModeItNames(_ arguments: [String]) throws {
        let mode = Self.expectedMode(arguments)
        var runs: [(ToolRun, [String: Int])] = []
        for spelling in [arguments, [arguments[0], mode] + arguments.dropFirst()] {
            let workspace = try Workspace()
            try Data("{\"vault\": \"testkit/ok-minimal.vault\", \"keyFile\": \"keys/parent.nsec\"}\n".utf8).write(to: URL(fileURLWithPath: workspace.path("jobs.jsonl")))
            let run = try workspace.run("vault-tool", spelling, stdin: "testkit/ok-household.vault")
            var files: [String: Int] = [:]
            for case let name as String in FileManager.default.enumerator(atPath: workspace.folder.path)! where !name.hasPrefix(".") {
                files[name] = workspace.contents(name)?.count ?? -1
            }
            runs.append((run, files))
        }
        let (old, new) = (runs[0], runs[1])
        #expect(old.0.status == new.0.status && old.0.stdout == new.0.stdout && old.0.stderr == new.0.stderr,
                "\(arguments) exits \(old.0.status): \(old.0.stderrText)\nwith '\(mode)' exits \(new.0.status): \(new.0.stderrText)")
        #expect(old.1 == new.1, "\(arguments): the files differ")
        // The mode's own parser took the options: no option unknown, none of another mode.
        for text in ["nknown option", "belong to different modes", "has no option"] { #expect(!old.0.stderrText.contains(text), "\(old.0.stderrText)") }
    }

    /// The mode as the help says it is read, written out independently of the tool's reading:
    /// --source, --inventory, or --manifest with --in-place or --out is a bucket; --manifest or
    /// --out-dir a batch; anything else one vault.
    static func expectedMode(_ arguments: [String]) -> String {
        let given = Set(arguments)
        if arguments[0] == "check" { return given.contains("--source") || given.contains("--manifest") || given.contains("--subset") ? "bucket" : "vault" }
        if given.contains("--source") || given.contains("--inventory") || (given.contains("--manifest") && (given.contains("--in-place") || given.contains("--out"))) {
            return "bucket"
        }
        return given.contains("--manifest") || given.contains("--out-dir") ? "batch" : "vault"
    }
}

/// The modes' option pairs: hundreds of starts of vault-tool, so scripts/test runs them against
/// the release tools (``Workspace/sweepBinaries``).
@Suite struct ModeOptionSweep {
    /// Every pair of options of two different modes, each only its own mode's, in either order:
    /// a usage error (64) naming both, before anything runs; and each such option after another
    /// mode's name: a usage error naming the option and the mode it is for.
    @Test(arguments: ["migrate", "check"])
    func optionsOfTwoModesAreAUsageErrorNamingBoth(_ command: String) throws {
        let all = Modes.shared
        let workspace = try Workspace(sweep: true)
        let modes = all.options[command]!.keys.sorted()
        var pairs = 0
        for first in modes {
            for second in modes where second != first {
                for a in all.exclusive(command, first) where a.hasPrefix("--") {
                    for b in all.exclusive(command, second) where b.hasPrefix("--") {
                        let run = try workspace.run("vault-tool", [command] + all.spelled(a) + all.spelled(b))
                        #expect(run.status == 64, "\(command) \(a) \(b): \(run.stderrText)")
                        #expect(run.stderrText.contains("vault-tool: error: \(a) and \(b) belong to different modes of '\(command)'"), "\(run.stderrText)")
                        #expect(run.stderrText.contains("'vault-tool \(command) \(first)'") && run.stderrText.contains("'vault-tool \(command) \(second)'"))
                        #expect(run.stdout.isEmpty)
                        pairs += 1
                    }
                }
                for foreign in all.exclusive(command, second) where foreign.hasPrefix("--") {
                    let run = try workspace.run("vault-tool", [command, first] + all.spelled(foreign))
                    #expect(run.status == 64, "\(command) \(first) \(foreign): \(run.stderrText)")
                    #expect(run.stderrText.contains("vault-tool: error: 'vault-tool \(command) \(first)' has no option \(foreign): it is for"), "\(run.stderrText)")
                    #expect(run.stderrText.contains("'vault-tool \(command) \(second)'"), "\(run.stderrText)")
                }
            }
        }
        #expect(pairs >= (command == "migrate" ? 60 : 8), "only \(pairs) pairs: were the modes read?")
        // A vault named with a fleet's options: the argument is named too.
        let run = try workspace.run("vault-tool", [command, "--source", "s3://family-vaults/vaults/", "household.vault"])
        #expect(run.status == 64 && run.stderrText.contains("--source and VAULT 'household.vault' belong to different modes"), "\(run.stderrText)")
        let argument = try workspace.run("vault-tool", [command, "bucket", "household.vault"])
        #expect(argument.status == 64 && argument.stderrText.contains("'vault-tool \(command) bucket' takes no VAULT 'household.vault': it is for one vault"),
                "\(argument.stderrText)")
        // Nothing was written by any of them.
        #expect(try workspace.topLevelNames().subtracting(Workspace().topLevelNames()).isEmpty)
    }
}
