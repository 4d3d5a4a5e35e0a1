import ArgumentParser
import CLIPictures
import CLISupport
import FoundationEssentials
import VaultCore
import VaultImaging

struct Pairing: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pairing",
        abstract: "The screen-time app's pairing QR: share URL, parent device, token, zone, time.",
        discussion: """
        'read' checks every field (an https share URL, a UUID device id, a timestamp at most \
        --max-age seconds old, default 600, and at most 60 s in the future) and prints the payload.

        Examples:
          device-link pairing create --share-url https://www.icloud.com/share/abc \\
            --parent-device-id UUID --shared-zone-id Zone -o pair.png
          device-link pairing read pair.png --json
        """,
        subcommands: [Create.self, Read.self]
    )

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Make a pairing QR (PNG, 0600) with a random verification token and the time now.",
            discussion: """
            Examples:
              device-link pairing create --share-url https://www.icloud.com/share/abc \\
                --parent-device-id 6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01 \\
                --shared-zone-id FamilyZone -o pair.png
            """
        )
        @Option(help: ArgumentHelp("The CloudKit share URL (https).", valueName: "URL")) var shareUrl: String
        @Option(help: ArgumentHelp("The parent's device id (a UUID).", valueName: "ID")) var parentDeviceId: String
        @Option(help: ArgumentHelp("The shared zone's name; without it the code has none (seed 004's field is optional).", valueName: "ZONE")) var sharedZoneId: String?
        @Option(help: ArgumentHelp("documented (RFC 3339; docs/tools.md) or app: what the app's own Swift code writes with JSONEncoder's defaults (the time in seconds since 2001).", valueName: "FORM"))
        var encoding: CodeEncoding = .documented
        @OptionGroup var now: RecordedNowOption
        @OptionGroup var output: OutputOptions

        func run() throws {
            let codeOutput = output.declared(.secret)
            let files = try CommandFiles(reads: [], writes: [codeOutput], force: output.force)
            let token = PairingCode.newVerificationToken(random: SystemRandom())
            let code = PairingCode(shareURL: shareUrl, parentDeviceID: parentDeviceId, verificationToken: token, sharedZoneID: sharedZoneId, timestamp: now.time)
            let payload = code.payload(encoding: encoding)
            _ = try PairingCode(payload: payload, now: code.timestamp)  // the same checks 'read' makes
            try files.writer().write(codeOutput, QRImage.picture(of: payload).pngData())
            diagnostics.note("pairing code for device \(parentDeviceId) at \(code.timestamp)")
        }
    }

    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Read and check a pairing QR, and print its payload.",
            discussion: """
            Both forms are read: the documented one (RFC 3339 times) and the one the app's \
            Swift code writes with JSONEncoder's defaults (seconds since 2001-01-01, escaped \
            slashes); the output says which it was.

            Examples:
              device-link pairing read pair.png
              device-link pairing read pair-photo.jpg --json
            """
        )
        @Argument(help: ArgumentHelp("The picture of the QR.", valueName: "IMAGE")) var image: String
        @Option(help: ArgumentHelp("The oldest a code may be, in seconds.", valueName: "SECONDS")) var maxAge: Int64 = PairingCode.defaultMaximumAge
        @OptionGroup var now: NowOption
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            try requireRange(maxAge, 1...PairingCode.maximumAllowedAge, "--max-age")
            let code = try PairingCode(payload: QRPictures.singleQR(image, reads: { $0 == .pairing || $0 == .other }, expected: "a pairing code"), now: now.time, maximumAge: maxAge)
            if json {
                try StandardStreams.writeOutput(JSONValue.object(code.reportedFields).reported())
                return
            }
            var table = TextTable()
            // No row for a zone the code does not name: any text said in its place could be a
            // zone's own name (a review: a zone named "(none: …)").
            let zone = code.sharedZoneID.map { [("shared zone", $0)] } ?? []
            for (key, value) in [("share URL", code.shareURL), ("parent device", code.parentDeviceID), ("verification token", code.verificationToken)]
                + zone + [("timestamp", code.timestamp.rfc3339), ("written as", code.encoding.described)] { table.add(key, value) }
            if code.sharedZoneID == nil { diagnostics.note("the code names no shared zone") }
            try StandardStreams.writeOutput(Array(table.render().utf8))
        }
    }
}
