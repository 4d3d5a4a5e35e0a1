import ArgumentParser
import CLISupport
import Foundation
import VaultCore

let diagnostics = Diagnostics(toolName: "device-revoker")

@main
struct DeviceRevokerTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-revoker",
        abstract: "Revoke lost and stolen devices in bulk: in a household's vault, or in a server device registry.",
        discussion: """
        Guard rails are the default: revoking the primary device needs --promote, revoking every \
        device needs --allow-empty (vault), and leaving users or conversations without an \
        active device or admin needs --force (registry). --dry-run shows the blast radius first.

        Exit codes: 0 ok, 1 I/O failure, 2 invalid input, 3 wrong key, 4 refused by a guard \
        rail or a stale --expect-revision, 64 usage.

        Examples:
          device-revoker vault --key-file parent.nsec --vault household.vault --device OLD-IPAD-ID --dry-run
          device-revoker vault --key-file parent.nsec --vault household.vault --not-seen-since 2025-01-01 -o household.new.vault --ops ops.jsonl
          device-revoker registry revoke --db registry.sqlite --devices-file stolen.txt --reason "stolen batch" --ops ops.jsonl
        """,
        version: "0.1.0",
        subcommands: [VaultMode.self, Registry.self]
    )

    static func main() { ToolMain.run(Self.self) }
}

/// A date for --not-seen-since: YYYY-MM-DD (midnight UTC) or a full RFC 3339 time.
func parseSince(_ text: String) throws -> Timestamp {
    guard let time = Timestamp(rfc3339: text) ?? Timestamp(rfc3339: text + "T00:00:00Z") else {
        throw ValidationError("--not-seen-since takes YYYY-MM-DD or an RFC 3339 time")
    }
    return time
}

/// Reads a list file: one entry a line; blank lines and # comments skipped.
func readList(_ path: String, what: String) throws -> [String] {
    let text = String(decoding: try InputFiles.read(path, what: what), as: UTF8.self)
    return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
}

func writeOperations(_ operations: [JSONValue], to path: String?) throws {
    guard let path else { return }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(operations.count * 120)
    for operation in operations { bytes += operation.serialized(pretty: false) + [0x0a] }
    try OutputTarget(path).write(bytes, kind: .text, force: false)
}
