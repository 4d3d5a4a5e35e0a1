import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultStorage

let diagnostics = Diagnostics(toolName: "device-revoker")

@main
struct DeviceRevokerTool: ToolRoot {
    static let toolConfiguration = CommandConfiguration(
        commandName: "device-revoker",
        abstract: "Revoke lost and stolen devices in bulk: in a household's vault, or in a server device registry.",
        discussion: """
        Guard rails are the default: revoking the primary device needs --promote, revoking every \
        device needs --allow-empty (vault), and leaving users or conversations without an \
        active device or admin, or revoking more than --max-share of the active devices, needs \
        its override or --force (registry). --dry-run shows the blast radius first.

        Exit codes: 0 ok, 1 I/O failure, 2 invalid input, 3 wrong key, 4 refused by a guard \
        rail or a stale --expect-revision, 64 usage, 75 the object store failed through every \
        attempt (run it again later), 78 the object store's configuration cannot work, 69 a library the command needs is not \
        installed (the message names its Debian package).

        Examples:
          device-revoker vault --key-file parent.nsec --vault household.vault \\
            --device OLD-IPAD-ID --dry-run
          device-revoker vault --key-file parent.nsec --vault household.vault \\
            --not-seen-since 2025-01-01 -o household.new.vault --ops ops.jsonl
          device-revoker registry revoke --db registry.sqlite \\
            --devices-file stolen.txt --reason "stolen batch" --ops ops.jsonl
        """,
        version: SuiteVersion.text,
        subcommands: [VaultMode.self, Registry.self]
    )

    static func main() {
        ToolMain.run(Self.self, objectStore: { try ObjectStore.connect(environment: ProcessInfo.processInfo.environment) }, hints: hints)
    }
}

/// A date for --not-seen-since: YYYY-MM-DD (midnight UTC) or a full RFC 3339 time.
func parseSince(_ text: String) throws -> Timestamp {
    guard let time = Timestamp(dayOrTime: text) else {
        throw ValidationError("--not-seen-since takes YYYY-MM-DD or an RFC 3339 time")
    }
    return time
}

/// Reads a list file (``ListFile``): one entry a line; blank lines and # comments skipped.
func readList(_ path: String, what: String) throws -> [String] {
    try readNumberedList(path, what: what).map(\.text)
}

/// The entries of a list file with their line numbers (1-based), for messages that name them.
func readNumberedList(_ path: String, what: String) throws -> [(line: Int, text: String)] {
    var entries: [(line: Int, text: String)] = []
    try InputFiles.forEachLine(path, what: what) { number, line in
        if let entry = ListFile.entry(line) { entries.append((number, entry)) }
    }
    // Refused whole before any entry is used: each entry not found would be listed back.
    if ListFile.holdsRecoveryWords(entries.lazy.map(\.text)) { throw VaultError.listHoldsRecoveryWords(what, path) }
    return entries
}

/// An input as a message quotes it (``QuotedInput``): at most its first 100 characters, and
/// never one that reads as a key, words or a share.
func quoted(_ text: String) -> String { QuotedInput(text).description }

/// The next steps for refusals this tool's flags resolve.
private let hints: [VaultError.Code: String] = [
    .alreadyImported: "to update rows already there, pass --upsert (what revocations wrote is never changed)",
    .batchIdTaken: "give this batch its own --batch-id (or leave it out for a random one)",
]
