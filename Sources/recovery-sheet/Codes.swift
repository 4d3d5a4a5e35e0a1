import ArgumentParser
import CLISupport
import Foundation
import VaultCore

/// Secret bytes and a newline, in protected memory: how a key or code is written to a file.
func secretLine(_ secret: SecretBytes) throws -> SecretBytes {
    try SecretBytes(count: secret.count + 1) { buffer in
        secret.withUnsafeBytes { buffer.copyMemory(from: $0) }
        buffer[secret.count] = 0x0a
    }
}

struct Code: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Recovery codes of the Family Medical app: 24 words that encrypt the Master Key.",
        discussion: """
        key = PBKDF2-HMAC-SHA256(the 24 words joined by single spaces, salt, 100,000 iterations); \
        the blob holds AES-256-GCM nonce, ciphertext and tag, and records its parameters. The \
        code appears only on the printed sheet (words and a Standard SeedQR) and in --code-out.

        Examples:
          recovery-sheet code new --master-key-file mk.hex --user-id emma@example.org -o blob.json --sheet code.png
          recovery-sheet code unwrap --blob blob.json --sheet code.png -o mk.hex
          recovery-sheet code rotate --blob blob.json --code-file old-words.txt -o new-blob.json --sheet new-code.png
        """,
        subcommands: [New.self, Unwrap.self, Rotate.self]
    )

    /// The code, from typed words or from a scan of the sheet's SeedQR.
    struct CodeSource: ParsableArguments {
        @Option(help: ArgumentHelp("A file holding the 24 words (any case or spacing; four letters a word are enough).", valueName: "WORDS")) var codeFile: String?
        @Option(help: ArgumentHelp("A scan or photo of the code sheet; its SeedQR is read.", valueName: "CODE.png")) var sheet: String?

        init() {}

        func validate() throws {
            guard (codeFile == nil) != (sheet == nil) else { throw ValidationError("give --code-file or --sheet, not both") }
        }

        var declaredInputs: [FileSet.Input] {
            [codeFile.map { FileSet.Input("--code-file", $0) }, sheet.map { FileSet.Input("--sheet", $0) }].compactMap { $0 }
        }

        func read() throws -> SecretBytes {
            let entropy: SecretBytes
            if let codeFile {
                let text = try InputFiles.readSecret(codeFile, what: "code file", diagnostics: diagnostics).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                entropy = try BIP39.entropy(fromWords: text)
            } else {
                let payload = String(decoding: try SheetReader.singleQR(sheet!), as: UTF8.self)
                entropy = try SeedQR.entropy(fromDigits: payload)
            }
            guard entropy.count == 32 else { throw ToolError(.invalidInput, "a recovery code is 24 words; this one has \(entropy.count * 3 / 4)") }
            return entropy
        }
    }

    /// The outputs of a new code: the sheet (0600), the words if asked (0600, never
    /// overwritten), and the blob; at most one of them may be standard output.
    static func outputs(sheet: String, codeOut: String?, blob: String) -> [DeclaredOutput] {
        [DeclaredOutput("--sheet", sheet, kind: .secret)]
            + (codeOut.map { [DeclaredOutput("--code-out", $0, kind: .secret, exclusive: true)] } ?? [])
            + [DeclaredOutput("-o", blob, kind: .text)]
    }

    /// Stages a new code's sheet and words, then the blob, and publishes them in that order:
    /// the blob makes the old code useless, so it is published only once the only record of
    /// the new code (the sheet) is on disk (issue 16).
    static func issue(_ code: SecretBytes, blob: RecoveryCodeBlob, userID: String, codeOut: Bool, date: String?, paper: Paper, writer: OutputWriter) throws {
        let rendered = try CodeSheet.render(code: code, userID: userID, date: date ?? Generate.today(), paper: paper, dotsPerInch: 300,
                                            template: Wording.codeTemplate(), fonts: SheetFonts())
        try writer.stage("--sheet", rendered.image.pngData())
        if codeOut {
            var words = Array(try BIP39.words(for: code).joined(separator: " ").utf8)
            try writer.stage("--code-out", secretLine(SecretBytes(consuming: &words)))
        }
        try writer.stage("-o", blob.jsonValue().serialized())
        try writer.publish()
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A fresh code for a Master Key: the blob for the server and the printed sheet.")
        @Option(help: ArgumentHelp("The 32-byte Master Key as 64 hex.", valueName: "MK")) var masterKeyFile: String
        @Option(help: ArgumentHelp("The account the blob belongs to.", valueName: "ID")) var userId: String
        @Option(name: .shortAndLong, help: ArgumentHelp("The blob (JSON) for the server.", valueName: "BLOB.json")) var output: String
        @Option(help: ArgumentHelp("The printed code sheet (PNG, 0600).", valueName: "CODE.png")) var sheet: String
        @Option(help: ArgumentHelp("Also write the 24 words to FILE (0600, never overwritten).", valueName: "FILE")) var codeOut: String?
        @Option(help: ArgumentHelp("The date printed (default today).", valueName: "YYYY-MM-DD")) var date: String?
        @Option(help: "Paper size: a4 or letter.") var paper: Paper = .a4

        func run() throws {
            let files = try CommandFiles(reads: [.init("--master-key-file", masterKeyFile)], writes: Code.outputs(sheet: sheet, codeOut: codeOut, blob: output))
            let masterKey = try SecretBytes.parsingHex(InputFiles.readSecret(masterKeyFile, what: "master key file", diagnostics: diagnostics),
                                                       byteCount: 32, what: "master key file '\(masterKeyFile)'")
            let code = try SystemRandom().secret(32)
            let blob = try RecoveryCodes.wrap(masterKey: masterKey, code: code, userID: userId)
            try Code.issue(code, blob: blob, userID: userId, codeOut: codeOut != nil, date: date, paper: paper, writer: files.writer())
            diagnostics.note("recovery code for \(userId): blob → \(output), sheet → \(sheet)".displaySafe)
        }
    }

    struct Unwrap: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The Master Key back from a blob and its code. A wrong code: exit 3, nothing written.")
        @Option(help: ArgumentHelp("The blob.", valueName: "BLOB.json")) var blob: String
        @OptionGroup var code: CodeSource
        @Option(name: .shortAndLong, help: ArgumentHelp("The Master Key, as 64 hex (0600).", valueName: "MK")) var output: String?
        @Flag(help: "Allow the key to go to a terminal.") var force = false

        func run() throws {
            let files = try CommandFiles(reads: [.init("--blob", self.blob)] + code.declaredInputs, writes: [DeclaredOutput("-o", output, kind: .secret)], force: force)
            let blob = try RecoveryCodeBlob(json: InputFiles.read(blob, what: "blob"))
            let masterKey = try RecoveryCodes.unwrap(blob, code: code.read())
            var hex = Array(masterKey.withUnsafeBytes { Hex.encode($0) }.utf8)
            try files.writer().write("-o", secretLine(SecretBytes(consuming: &hex)))
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A new code and salt for the same Master Key; the old code stops working on the new blob.",
            discussion: """
            The old code comes from --code-file, or from the first --sheet; the new sheet is the \
            last --sheet:
              recovery-sheet code rotate --blob blob.json --code-file old.txt -o new.json --sheet new.png
              recovery-sheet code rotate --blob blob.json --sheet old.png -o new.json --sheet new.png
            """
        )
        @Option(help: ArgumentHelp("The current blob.", valueName: "BLOB.json")) var blob: String
        @Option(help: ArgumentHelp("A file holding the current 24 words.", valueName: "OLD")) var codeFile: String?
        @Option(help: ArgumentHelp("The current code sheet (to scan), then the new one (to write).", valueName: "PNG")) var sheet: [String] = []
        @Option(name: .shortAndLong, help: ArgumentHelp("The new blob.", valueName: "NEWBLOB.json")) var output: String
        @Option(help: ArgumentHelp("Also write the new words to FILE (0600).", valueName: "FILE")) var codeOut: String?
        @Option(help: ArgumentHelp("The date printed (default today).", valueName: "YYYY-MM-DD")) var date: String?
        @Option(help: "Paper size of the new sheet: a4 or letter.") var paper: Paper = .a4

        func validate() throws {
            guard sheet.count == (codeFile == nil ? 2 : 1) else {
                throw ValidationError(codeFile == nil ? "give --sheet OLD.png (the current code) and --sheet NEW.png" : "give one --sheet NEW.png with --code-file")
            }
        }

        func run() throws {
            let oldCode = codeFile.map { FileSet.Input("--code-file", $0) } ?? FileSet.Input("--sheet (the current code)", sheet[0])
            let files = try CommandFiles(reads: [.init("--blob", blob), oldCode], writes: Code.outputs(sheet: sheet.last!, codeOut: codeOut, blob: output))
            let old = try RecoveryCodeBlob(json: InputFiles.read(blob, what: "blob"))
            var source = CodeSource()
            source.codeFile = codeFile
            source.sheet = codeFile == nil ? sheet[0] : nil
            let masterKey = try RecoveryCodes.unwrap(old, code: source.read())
            let newCode = try SystemRandom().secret(32)
            let newBlob = try RecoveryCodes.wrap(masterKey: masterKey, code: newCode, userID: old.userID, iterations: old.iterations)
            try Code.issue(newCode, blob: newBlob, userID: old.userID, codeOut: codeOut != nil, date: date, paper: paper, writer: files.writer())
            diagnostics.note("new recovery code for \(old.userID): blob → \(output), sheet → \(sheet.last!); the old code no longer opens the new blob".displaySafe)
        }
    }
}

struct Link: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The MyTube device-link QR: the parent key, the vault URL and an expiry, for a new iPad.",
        discussion: """
        The QR holds the parent key itself (seed 000, Flow 2): the PNG is created 0600. 'read' \
        checks the expiry (exit 3 when expired), that parentPubkey is the nsec's public key, and \
        that the URL ends in the household's vault file; the nsec goes only to -o.

        Examples:
          recovery-sheet link create --key-file parent.nsec --vault-url https://minio.example/bucket/vaults/HOUSEHOLD.vault -o link.png
          recovery-sheet link read link.png -o new-device.nsec
        """,
        subcommands: [Create.self, Read.self]
    )

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a device-link QR (PNG, 0600).")
        @Option(name: .customLong("key-file"), help: ArgumentHelp("The parent key.", valueName: "F")) var keyFile: String
        @Option(help: ArgumentHelp("Where the vault is stored; must end in vaults/<household id>.vault.", valueName: "URL")) var vaultUrl: String
        @Option(help: "How long the link is valid, in seconds (at most a day).") var expiresIn: Int = 300
        @Option(help: ArgumentHelp("The time the link is made (RFC 3339), instead of now.", valueName: "TIME")) var now: String?
        @Option(name: .shortAndLong, help: ArgumentHelp("The QR image.", valueName: "LINK.png")) var output: String?
        @Flag(help: "Allow the image to go to a terminal.") var force = false

        func run() throws {
            try requireRange(expiresIn, 1...DeviceLink.maximumLifetime, "--expires-in")
            let files = try CommandFiles(reads: [.init("--key-file", keyFile)], writes: [DeclaredOutput("-o", output, kind: .secret)], force: force)
            let key = try KeyFiles.parentKey(keyFile, diagnostics)
            let start = try time(now)
            let link = DeviceLink(vaultURL: vaultUrl, key: key, expiresAt: Timestamp(seconds: start.seconds + Int64(expiresIn)))
            let payload = try link.payload()
            _ = try DeviceLink(payload: payload, now: start)  // the same checks 'read' makes, before anything is written
            try files.writer().write("-o", qrImage(payload).pngData())
            diagnostics.note("device link for \(key.publicKey.npub), valid until \(link.expiresAt)")
        }
    }

    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Read and check a device-link QR; the nsec goes only to -o.")
        @Argument(help: ArgumentHelp("The picture of the QR.", valueName: "IMAGE")) var image: String
        @Option(help: ArgumentHelp("Check the expiry against this time (RFC 3339), instead of now.", valueName: "TIME")) var now: String?
        @Option(name: .shortAndLong, help: ArgumentHelp("Write the nsec to FILE (0600).", valueName: "SECRET")) var output: String?

        func run() throws {
            // Without -o the nsec goes nowhere: standard output carries the table.
            let files = try CommandFiles(reads: [.init("image", image)], writes: output.map { [DeclaredOutput("-o", $0, kind: .secret)] } ?? [])
            let link = try DeviceLink(payload: SheetReader.singleQR(image), now: time(now))
            var table = TextTable()
            table.add("vault URL", link.vaultURL)
            table.add("npub", link.key.publicKey.npub)
            table.add("expires", link.expiresAt.rfc3339)
            StandardStreams.writeOutput(Array(table.render().utf8))
            if output != nil { try files.writer().write("-o", secretLine(link.key.nsec())) }
        }
    }
}

struct Pairing: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The screen-time app's pairing QR: share URL, parent device, token, zone, time.",
        discussion: """
        'read' checks every field (an https share URL, a UUID device id, a timestamp at most \
        --max-age seconds old, default 600, and at most 60 s in the future) and prints the payload.

        Examples:
          recovery-sheet pairing create --share-url https://www.icloud.com/share/abc --parent-device-id UUID --shared-zone-id Zone -o pair.png
          recovery-sheet pairing read pair.png --json
        """,
        subcommands: [Create.self, Read.self]
    )

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a pairing QR (PNG, 0600) with a random verification token and the time now.")
        @Option(help: ArgumentHelp("The CloudKit share URL (https).", valueName: "URL")) var shareUrl: String
        @Option(help: ArgumentHelp("The parent's device id (a UUID).", valueName: "ID")) var parentDeviceId: String
        @Option(help: ArgumentHelp("The shared zone's name.", valueName: "ZONE")) var sharedZoneId: String
        @Option(help: ArgumentHelp("The time to record (RFC 3339), instead of now.", valueName: "TIME")) var now: String?
        @Option(name: .shortAndLong, help: ArgumentHelp("The QR image.", valueName: "PAIR.png")) var output: String?
        @Flag(help: "Allow the image to go to a terminal.") var force = false

        func run() throws {
            let files = try CommandFiles(reads: [], writes: [DeclaredOutput("-o", output, kind: .secret)], force: force)
            var bytes = SystemRandom().bytes(16)
            bytes[6] = bytes[6] & 0x0f | 0x40  // a version 4 UUID
            bytes[8] = bytes[8] & 0x3f | 0x80
            let token = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])).uuidString
            let code = PairingCode(shareURL: shareUrl, parentDeviceID: parentDeviceId, verificationToken: token, sharedZoneID: sharedZoneId, timestamp: try time(now))
            let payload = code.jsonValue().serialized(pretty: false)
            _ = try PairingCode(payload: payload, now: code.timestamp)  // the same checks 'read' makes
            try files.writer().write("-o", qrImage(payload).pngData())
            diagnostics.note("pairing code for device \(parentDeviceId) at \(code.timestamp)".displaySafe)
        }
    }

    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Read and check a pairing QR, and print its payload.")
        @Argument(help: ArgumentHelp("The picture of the QR.", valueName: "IMAGE")) var image: String
        @Option(help: "The oldest a code may be, in seconds.") var maxAge: Int64 = PairingCode.defaultMaximumAge
        @Option(help: ArgumentHelp("Check against this time (RFC 3339), instead of now.", valueName: "TIME")) var now: String?
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            try requireRange(maxAge, 1...PairingCode.maximumAllowedAge, "--max-age")
            let code = try PairingCode(payload: SheetReader.singleQR(image), now: time(now), maximumAge: maxAge)
            if json {
                StandardStreams.writeOutput(code.jsonValue().serialized())
                return
            }
            var table = TextTable()
            for (key, value) in [("share URL", code.shareURL), ("parent device", code.parentDeviceID), ("verification token", code.verificationToken),
                                 ("shared zone", code.sharedZoneID), ("timestamp", code.timestamp.rfc3339)] { table.add(key, value) }
            StandardStreams.writeOutput(Array(table.render().utf8))
        }
    }
}

/// `--now`, or the current time.
func time(_ text: String?) throws -> Timestamp {
    guard let text else { return currentTime() }
    guard let time = Timestamp(rfc3339: text) else { throw ValidationError("--now takes an RFC 3339 time such as 2026-11-22T10:00:00Z") }
    return time
}

/// A QR image of a payload for screens and paper: error correction Q, modules of 1.2 mm at
/// 300 dpi (15 px), so a print still reads after a 100 dpi scan.
func qrImage(_ payload: [UInt8]) throws -> GrayImage {
    QRImage.render(try QRCode(payload: payload, level: .quartile), modulePixels: 15, dotsPerInch: 300)
}
