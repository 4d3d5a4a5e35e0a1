import ArgumentParser
import CLIPictures
import CLISupport
import FoundationEssentials
import VaultCore
import VaultImaging

let diagnostics = Diagnostics(toolName: "device-link")

/// Device onboarding (issue 12): the MyTube device-link QR a primary shows a new iPad, and the
/// screen-time app's pairing QR. Not paper: the codes live minutes, on a screen.
@main
struct DeviceLinkTool: ToolRoot {
    static let toolConfiguration = CommandConfiguration(
        commandName: "device-link",
        abstract: "The MyTube device-link QR (the parent key, the vault URL and an expiry, for a new iPad) and the screen-time pairing QR.",
        discussion: """
        The device-link QR holds the parent key itself (seed 000, Flow 2): the PNG is created \
        0600. 'read' checks the expiry (exit 3 when expired), that parentPubkey is the nsec's \
        public key, and that the URL ends in the household's vault file; the nsec goes only to -o.

        Exit codes: 0 ok, 1 I/O failure, 2 invalid input, 3 expired or wrong key, \
        4 refused for safety, 64 usage, 69 a library the command needs is not \
        installed (the message names its Debian package).

        Examples:
          device-link create --key-file parent.nsec \\
            --vault-url https://minio.example/bucket/vaults/HOUSEHOLD.vault \\
            -o link.png
          device-link read link.png -o new-device.nsec
          device-link pairing create --share-url https://www.icloud.com/share/abc \\
            --parent-device-id UUID --shared-zone-id Zone -o pair.png
        """,
        version: SuiteVersion.text,
        subcommands: [Create.self, Read.self, Pairing.self]
    )

    static func main() { ToolMain.run(Self.self) }
}

struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Make a device-link QR (PNG, 0600).",
        discussion: """
        Examples:
          device-link create --key-file parent.nsec \\
            --vault-url https://minio.example/bucket/vaults/HOUSEHOLD.vault \\
            -o link.png
          device-link create --key-file parent.nsec --vault-url URL \\
            --expires-in 600 -o link.png
          device-link create --key-file parent.nsec --vault-url URL \\
            --encoding app -o link.png
        """
    )
    @OptionGroup var key: ParentKeyOption
    @Option(help: ArgumentHelp("Where the vault is stored: an https URL ending in vaults/<household id>.vault (a presigned URL's query kept).", valueName: "URL")) var vaultUrl: String
    @Option(help: ArgumentHelp("How long the link is valid, in seconds (at most a day).", valueName: "SECONDS")) var expiresIn: Int = 300
    @Option(help: ArgumentHelp("documented (nsec1…, RFC 3339; docs/tools.md) or app: what the app's own Swift code writes with JSONEncoder's defaults (the key's bytes in base64, the expiry in seconds since 2001).", valueName: "FORM"))
    var encoding: CodeEncoding = .documented
    @OptionGroup var now: RecordedNowOption
    @OptionGroup var output: OutputOptions

    func run() throws {
        try requireRange(expiresIn, 1...DeviceLink.maximumLifetime, "--expires-in")
        let codeOutput = output.declared(.secret)
        let files = try CommandFiles(reads: [self.key.declaredInput].compactMap { $0 }, writes: [codeOutput], force: output.force)
        let key = try self.key.load(diagnostics)
        let start = now.time
        let link = DeviceLink(vaultURL: vaultUrl, key: key, expiresAt: Timestamp(seconds: start.seconds + Int64(expiresIn)))
        let payload = try link.payload(encoding: encoding)
        _ = try DeviceLink(payload: payload, now: start)  // the same checks 'read' makes, before anything is written
        try files.writer().write(codeOutput, QRImage.picture(of: payload).pngData())
        diagnostics.note("device link for \(key.publicKey.npub), valid until \(link.expiresAt)")
    }
}

struct Read: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Read and check a device-link QR; the nsec goes only to -o.",
        discussion: """
        Both forms are read: the documented one (an nsec1… and RFC 3339 times) and the one the \
        app's Swift code writes with JSONEncoder's defaults (seconds since 2001-01-01, base64 \
        data, escaped slashes); the output's "written as" line says which it was.

        Examples:
          device-link read link.png
          device-link read link-photo.jpg -o new-device.nsec
          device-link read link.png --json | jq -r .encoding
        """
    )
    @Argument(help: ArgumentHelp("The picture of the QR.", valueName: "IMAGE")) var image: String
    @OptionGroup var now: NowOption
    @Option(name: .shortAndLong, help: ArgumentHelp("Write the nsec to FILE (0600).", valueName: "FILE")) var output: String?
    @Flag(help: "Print JSON (the vault URL, the parent's npub and public key, the expiry and the form read; never the nsec).") var json = false

    func run() throws {
        // Without -o the nsec goes nowhere: standard output carries the table.
        let keyOutput = output.map { DeclaredOutput.restoredKey("-o", $0) }
        let files = try CommandFiles(reads: [.init("image", image)], writes: keyOutput.map { [$0] } ?? [])
        let now = now.time
        let link = try DeviceLink(payload: QRPictures.singleQR(image, reads: { $0 == .deviceLink || $0 == .other }, expected: "a device-link code"), now: now)
        let report: [UInt8]
        if json {
            report = JSONValue.object([
                ("vaultURL", .string(link.vaultURL)), ("npub", .string(link.key.publicKey.npub)), ("parentPubkey", .string(link.key.publicKey.hex)),
                ("expiresAt", .string(link.expiresAt.rfc3339)), ("encoding", .string(link.encoding?.rawValue ?? "mixed")),
            ]).reported()
        } else {
            var table = TextTable()
            table.add("vault URL", link.vaultURL)
            table.add("npub", link.key.publicKey.npub)
            table.add("expires", "\(link.expiresAt.rfc3339) (\(TimeSpan.relative(link.expiresAt, now: now)))")
            table.add("written as", link.encoding?.described
                      ?? "neither form whole: the nsec as \(link.keyEncoding.described), expiresAt as \(link.timeEncoding.described)")
            report = Array(table.render().utf8)
        }
        try StandardStreams.writeOutput(report)
        if let keyOutput { try files.writer().write(keyOutput, secretLine(link.key.nsec())) }
    }
}

extension CodeEncoding: ExpressibleByArgument {
    /// How a reader says which form it read.
    var described: String {
        switch self {
        case .documented: "the documented form (docs/tools.md)"
        case .app: "the app's form (its Swift code's JSONEncoder defaults)"
        }
    }
}
