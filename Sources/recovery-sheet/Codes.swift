import ArgumentParser
import CLIPictures
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultPaper

struct Code: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code",
        abstract: "Recovery codes of the Family Medical app: 24 words that encrypt the Master Key.",
        discussion: """
        key = PBKDF2-HMAC-SHA256(the 24 words joined by single spaces, salt, 100,000 iterations); \
        the blob holds AES-256-GCM nonce, ciphertext and tag, and records its parameters. The \
        code appears only on the printed sheet (words and a Standard SeedQR) and in --code-out.

        Examples:
          recovery-sheet code new --master-key-file mk.hex \\
            --user-id emma@example.org -o blob.json --sheet code.png
          recovery-sheet code verify --blob blob.json --sheet code-scan.png
          recovery-sheet code unwrap --blob blob.json --sheet code.png -o mk.hex
          recovery-sheet code rotate --blob blob.json --code-file old-words.txt \\
            -o new-blob.json --sheet new-code.png
        """,
        subcommands: [New.self, Verify.self, Unwrap.self, Rotate.self]
    )

    /// The code, from typed words or from a scan of the sheet's SeedQR.
    struct CodeSource: ParsableArguments {
        @Option(help: ArgumentHelp("A file holding the 24 words (any case or spacing; four letters a word are enough).", valueName: "FILE")) var codeFile: String?
        @Option(help: ArgumentHelp("A scan or photo of the code sheet, or its PDF; its SeedQR is read.", valueName: "IMAGE")) var sheet: String?

        init() {}

        func validate() throws {
            guard codeFile != nil || sheet != nil else { throw ValidationError("give --code-file or --sheet") }
        }

        /// For a command that reads the code once: one source, not both.
        func requireOne() throws {
            guard codeFile == nil || sheet == nil else { throw ValidationError("give --code-file or --sheet, not both") }
        }

        var declaredInputs: [FileSet.Input] {
            [codeFile.map { FileSet.Input("--code-file", $0) }, sheet.map { FileSet.Input("--sheet", $0) }].compactMap { $0 }
        }

        /// The code; given both, the typed words and the sheet's SeedQR must be the same code.
        func read() throws -> SecretBytes {
            guard let codeFile, let sheet else { return try readOne() }
            let typed = try CodeSource.only(codeFile: codeFile).readOne(), scanned = try CodeSource.only(sheet: sheet).readOne()
            guard typed == scanned else { throw VaultError.wordsAreNotTheSheetsCode() }
            return scanned
        }

        private static func only(codeFile: String? = nil, sheet: String? = nil) -> CodeSource {
            var source = CodeSource()
            source.codeFile = codeFile
            source.sheet = sheet
            return source
        }

        private func readOne() throws -> SecretBytes {
            let entropy: SecretBytes
            if let codeFile {
                let words = codeFile == "-" && TerminalPrompt.inputIsTerminal
                    ? try WordPrompt.bip39("the 24 words of the recovery code") { _ = try BIP39.entropy(fromWords: $0) }.ask()
                    : try InputFiles.readSecret(codeFile, what: "code file", diagnostics: diagnostics)
                entropy = try BIP39.entropy(fromWords: words)
            } else {
                var payload = try QRPictures.singleQR(sheet!, reads: { $0 == .recoveryCode || $0 == .other }, expected: "a recovery-code sheet",
                                                      typedInstead: "give --code-file - instead and type the 24 words at the prompt",
                                                      documents: IsolatedPDF.picture)
                entropy = try SeedQR.entropy(fromDigits: SecretBytes(consuming: &payload))
            }
            guard entropy.count == 32 else { throw VaultError.recoveryCodeLength(words: entropy.count * 3 / 4) }
            // A code read is a secret this run holds, its words too: no message or sheet of the
            // run may say four of them (a trial: `-o nodir/‹its first four words›` was quoted).
            entropy.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
            return entropy
        }
    }

    /// The outputs of a new code: the sheet and the words if asked (0600, never overwritten:
    /// an existing file may be the only copy of another code), and the blob; at most one of
    /// them may be standard output.
    struct Outputs {
        let sheet: DeclaredOutput
        let words: DeclaredOutput?
        let blob: DeclaredOutput

        init(sheet: String, codeOut: String?, blob: String) {
            self.sheet = DeclaredOutput("--sheet", sheet, kind: .secret, exclusive: true)
            words = codeOut.map { DeclaredOutput("--code-out", $0, kind: .secret, exclusive: true) }
            self.blob = DeclaredOutput("-o", blob, kind: .text)
        }

        var all: [DeclaredOutput] { [sheet] + (words.map { [$0] } ?? []) + [blob] }
    }

    /// Stages a new code's sheet and words, then the blob, and publishes them in that order:
    /// the blob makes the old code useless, so it is published only once the only record of the
    /// new code (the sheet) is on disk (issue 16). A blob that cannot be written (a closed pipe,
    /// a full disk) takes the new sheet and words back (``OutputWriter/publish()``): no sheet
    /// is left that opens nothing, and the command can be run again.
    static func issue(_ code: SecretBytes, blob: RecoveryCodeBlob, userID: String, outputs: Outputs, page: PageOptions, format: SheetFormat,
                      writer: OutputWriter) throws {
        let content = CodeSheet.Content(code: code, userID: userID, label: page.label, date: page.printedDate,
                                        appName: page.appName ?? CodeSheet.defaultAppName)
        let rendered = try CodeSheet.render(content, paper: page.paper, dotsPerInch: page.dpi, template: Wording.codeTemplate(page.lang))
        try writer.stage(outputs.sheet, format.bytes(of: rendered))
        if let words = outputs.words {
            try writer.stage(words, secretLine(BIP39.phrase(for: code)))
        }
        // A document, not a report: the app reads the blob back as its format writes it.
        try writer.stage(outputs.blob, blob.jsonValue().serialized())
        try writer.publish()
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "A fresh code for a Master Key: the blob for the server and the printed sheet.",
            discussion: """
            Examples:
              recovery-sheet code new --master-key-file mk.hex \\
                --user-id emma@example.org -o blob.json --sheet code.png
              recovery-sheet code new --master-key-file mk.hex --user-id emma \\
                --lang es --paper letter -o blob.json --sheet codigo.png
            """
        )
        @Option(help: ArgumentHelp("The 32-byte Master Key as 64 hex.", valueName: "FILE")) var masterKeyFile: String
        @Option(help: ArgumentHelp("The account the blob belongs to.", valueName: "ID")) var userId: String
        @Option(name: .shortAndLong, help: ArgumentHelp("The blob (JSON) for the server.", valueName: "FILE")) var output: String
        @Option(help: ArgumentHelp("The printed code sheet (PDF or PNG, by its extension or --format; 0600).", valueName: "FILE")) var sheet: String
        @Option(help: ArgumentHelp("Also write the 24 words to FILE (0600, never overwritten).", valueName: "FILE")) var codeOut: String?
        @OptionGroup var page: PageOptions

        func run() throws {
            let outputs = Code.Outputs(sheet: sheet, codeOut: codeOut, blob: output)
            let files = try CommandFiles(reads: [.init("--master-key-file", masterKeyFile)], writes: outputs.all)
            let format = try page.format(for: sheet, option: "--sheet")
            let masterKey = try SecretBytes.parsingHex(InputFiles.readSecret(masterKeyFile, what: "master key file", diagnostics: diagnostics),
                                                       byteCount: 32, what: "master key file '\(masterKeyFile)'")
            let code = try SystemRandom().secret(32)
            let blob = try RecoveryCodes.wrap(masterKey: masterKey, code: code, userID: userId)
            try Code.issue(code, blob: blob, userID: userId, outputs: outputs, page: page, format: format, writer: files.writer())
            diagnostics.note("recovery code for \(userId): blob → \(output), sheet → \(sheet)")
        }
    }

    struct Unwrap: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unwrap",
            abstract: "The Master Key back from a blob and its code. A wrong code: exit 3, nothing written.",
            discussion: """
            Examples:
              recovery-sheet code unwrap --blob blob.json --sheet code-photo.jpg -o mk.hex
              recovery-sheet code unwrap --blob blob.json --code-file words.txt -o mk.hex
            """
        )
        @Option(help: ArgumentHelp("The blob.", valueName: "FILE")) var blob: String
        @OptionGroup var code: CodeSource

        func validate() throws {
            try code.requireOne()
            try requireOneStandardInput([blob, code.codeFile, code.sheet])
        }
        /// The Master Key, as 64 hex (0600).
        @OptionGroup var output: OutputOptions

        func run() throws {
            let keyOutput = output.declaredRestoredKey
            let files = try CommandFiles(reads: [.init("--blob", self.blob)] + code.declaredInputs, writes: [keyOutput], force: output.force)
            let blob = try RecoveryCodeBlob(json: InputFiles.read(blob, what: "blob"))
            let masterKey = try RecoveryCodes.unwrap(blob, code: code.read())
            try files.writer().write(keyOutput, secretLine(masterKey.hex()))
        }
    }

    /// The code sheet's yearly check: does this code still open this blob? Nothing is written,
    /// and neither the code nor the Master Key is shown.
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check a code sheet (the yearly check): alone, or against its blob. A wrong code: exit 3.",
            discussion: """
            With the sheet alone (--sheet, its PDF, a scan or a photo), its SeedQR must read and \
            pass the BIP-39 checksum; with --code-file too, the typed words must be the same \
            code. With --blob, the code must open the blob. Prints what was checked; nothing is \
            written, and neither the code nor the Master Key is shown. Exit 0 when every check \
            passes, 3 when the code does not open the blob or the words are another code.

            Examples:
              recovery-sheet code verify --sheet code.pdf
              recovery-sheet code verify --sheet code-scan.png --code-file words.txt
              recovery-sheet code verify --blob blob.json --sheet code-scan.png
              recovery-sheet code verify --blob blob.json --code-file words.txt
            """
        )
        @Option(help: ArgumentHelp("The blob (from the server); without it the sheet is checked alone.", valueName: "FILE")) var blob: String?
        @OptionGroup var code: CodeSource

        func validate() throws { try requireOneStandardInput([blob, code.codeFile, code.sheet]) }

        func run() throws {
            _ = try CommandFiles(reads: (blob.map { [FileSet.Input("--blob", $0)] } ?? []) + code.declaredInputs, writes: [])
            let read = try code.read()
            var checked = [code.sheet != nil && code.codeFile != nil ? "the sheet's code and the typed words are one code" : "the code reads",
                           "its checksum passes"]
            if let blob {
                let blob = try RecoveryCodeBlob(json: InputFiles.read(blob, what: "blob"))
                _ = try RecoveryCodes.unwrap(blob, code: read)
                checked.append("it opens the blob of account \(blob.userID.displaySafe)")
            }
            try StandardStreams.writeOutput(Array("code: \(checked.joined(separator: "; "))\n".utf8))
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "A new code and salt for the same Master Key; the old code stops working on the new blob.",
            discussion: """
            The old code comes from --code-file, or from the first --sheet; the new sheet is the \
            last --sheet.

            Examples:
              recovery-sheet code rotate --blob blob.json --code-file old.txt \\
                -o new.json --sheet new.png
              recovery-sheet code rotate --blob blob.json --sheet old.png -o new.json \\
                --sheet new.png --paper letter --lang es
            """
        )
        @Option(help: ArgumentHelp("The current blob.", valueName: "FILE")) var blob: String
        @Option(help: ArgumentHelp("A file holding the current 24 words.", valueName: "FILE")) var codeFile: String?
        @Option(help: ArgumentHelp("The current code sheet (to scan), then the new one (to write).", valueName: "IMAGE")) var sheet: [String] = []
        @Option(name: .shortAndLong, help: ArgumentHelp("The new blob.", valueName: "FILE")) var output: String
        @Option(help: ArgumentHelp("Also write the new words to FILE (0600).", valueName: "FILE")) var codeOut: String?
        @OptionGroup var page: PageOptions

        func validate() throws {
            guard sheet.count == (codeFile == nil ? 2 : 1) else {
                throw ValidationError(codeFile == nil ? "give --sheet OLD (the current code sheet) and --sheet NEW (the new one)" : "give one --sheet NEW (the new code sheet) with --code-file")
            }
        }

        func run() throws {
            let oldCode = codeFile.map { FileSet.Input("--code-file", $0) } ?? FileSet.Input("--sheet (the current code)", sheet[0])
            let outputs = Code.Outputs(sheet: sheet.last!, codeOut: codeOut, blob: output)
            let files = try CommandFiles(reads: [.init("--blob", blob), oldCode], writes: outputs.all)
            let format = try page.format(for: sheet.last!, option: "--sheet")
            let old = try RecoveryCodeBlob(json: InputFiles.read(blob, what: "blob"))
            var source = CodeSource()
            source.codeFile = codeFile
            source.sheet = codeFile == nil ? sheet[0] : nil
            let masterKey = try RecoveryCodes.unwrap(old, code: source.read())
            let newCode = try SystemRandom().secret(32)
            let newBlob = try RecoveryCodes.wrap(masterKey: masterKey, code: newCode, userID: old.userID, iterations: old.iterations)
            try Code.issue(newCode, blob: newBlob, userID: old.userID, outputs: outputs, page: page, format: format, writer: files.writer())
            diagnostics.note("new recovery code for \(old.userID): blob → \(output), sheet → \(sheet.last!); the old code no longer opens the new blob")
        }
    }
}

extension VaultError {
    /// The words typed and the code on the sheet are two codes.
    static func wordsAreNotTheSheetsCode(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyMismatch, "the typed words are not the code on the sheet", file: file, line: line)
    }
}
