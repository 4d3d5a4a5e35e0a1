import ArgumentParser
import CLIPictures
import CLISupport
import VaultCore
import VaultPaper

/// Reading the key back from a picture of a sheet: the part `scan` and `verify` share.
enum SheetReader {
    /// Finds exactly one QR code holding a key in the image, and decrypts it when needed.
    static func key(fromImage path: String, passphrase: PassphraseOption) throws -> (key: SecretKey, encrypted: Bool) {
        let payload = try QRPictures.singleQR(path, reads: { $0 == .recoveryKey || $0 == .other }, expected: "a recovery sheet", typedInstead: "type the 24 words (or the key) printed beside the code at the prompt: recovery-sheet words --decode -o restored.nsec (an encrypted key also needs --passphrase-file -)",
                                                  documents: IsolatedPDF.picture)
        do {
            return try RecoverySheet.key(fromPayload: payload, name: "the QR code in \(InputFiles.quotedName(path))") { try passphrase.read() }
        } catch let error as VaultError where error.code == .passphraseNeeded {
            throw error.withContext(hint: "pass --passphrase-file - to be asked for it without echo (or a file only you can read)")
        }
    }
}

struct Scan: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Read the key back from a scan or photo of a recovery sheet.",
        discussion: """
        Reads the QR code from a PNG or JPEG and writes the key as nsec1… (a new 0600 file, or \
        standard output, never a terminal unless --force). An existing file is never replaced \
        (exit 4): it may be the family's current key, and the sheet an old one. An encrypted sheet needs \
        --passphrase-file. The public key goes to standard error. With --json (which needs \
        -o FILE), standard output is {"npub", "householdId", "encrypted", "output"}. \
        --npub NPUB or --vault VAULT checks the key before it is written (a mismatch: exit 3, \
        nothing written): an old sheet, or another family's, reads as well as the right one.

        Examples:
          recovery-sheet scan sheet.png --vault household.vault -o restored.nsec
          recovery-sheet scan photo.jpg --passphrase-file pass.txt -o restored.nsec
          recovery-sheet scan sheet.png -o restored.nsec --json
        """
    )

    @Argument(help: ArgumentHelp("The picture of the sheet (PNG or JPEG); - for standard input.", valueName: "IMAGE"))
    var image: String

    @OptionGroup var passphrase: PassphraseOption
    @OptionGroup var expected: ExpectedKeyOptions
    @OptionGroup var output: OutputOptions
    @Flag(help: "Print what was read as JSON (needs -o FILE; the key itself is never in it).") var json = false

    func validate() throws {
        try requireOneStandardInput([image, passphrase.passphraseFile, expected.vault])
        if json, output.output == nil || output.output == "-" { throw ValidationError("--json needs -o FILE: otherwise the key is standard output") }
    }

    func run() throws {
        // With --json the report is an output too, published before the key: a report that
        // cannot be written (a closed pipe) leaves no key file that a rerun would then refuse.
        let jsonOutput = json ? DeclaredOutput("--json", "-", kind: .text) : nil, keyOutput = output.declaredRestoredKey
        let files = try CommandFiles(reads: [.init("image", image)] + passphrase.declaredInputs + expected.declaredInputs,
                                     writes: (jsonOutput.map { [$0] } ?? []) + [keyOutput], force: output.force)
        let (key, encrypted) = try SheetReader.key(fromImage: image, passphrase: passphrase)
        // The code's checksum (or an encrypted key's tag) proves it read as printed, not that
        // the sheet is the family's: an old sheet, or another family's, reads as well.
        try expected.confirm(key, from: .sheet)
        let writer = files.writer()
        if let jsonOutput {
            try writer.stage(jsonOutput, JSONValue.object([
                ("npub", .string(key.publicKey.npub)), ("householdId", .string(Household(parentPublicKey: key.publicKey).id.hex)),
                ("encrypted", .bool(encrypted)), ("output", .string(output.displayName)),
            ]).reported())
        }
        try writer.stage(keyOutput, secretLine(key.nsec()))
        try writer.publish()
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "The fire drill: prove a printed sheet, or a set of share sheets, restores the expected key.",
        discussion: """
        Scans the sheet and compares its key with --npub, with --key-file, or, with --vault, \
        derives the vault key from it and opens that vault. With --shares, combines the share \
        sheets (or files of their words) in memory and checks the key they restore; the key is \
        never shown, and when share sheets are read from pictures it must be the household \
        their check code names (a passphrase missing or wrong: exit 3). With --share, checks one share sheet alone: that it reads, and that its \
        check code names this household. Prints what was checked (--json: {"passed", "checked", \
        "npub", "report"}). Exit 0 when it matches, 3 when it does not.

        Examples:
          recovery-sheet verify sheet.png --vault household.vault
          recovery-sheet verify scan.jpg --npub npub1…
          recovery-sheet verify --shares rosa-scan.jpg luis-scan.jpg --npub npub1…
          recovery-sheet verify --share rosa-scan.jpg --npub npub1…
        """
    )

    @Argument(help: ArgumentHelp("The picture of the sheet (PNG or JPEG).", valueName: "IMAGE"))
    var image: String?

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Share sheets (pictures) or files of share words to combine and check.", valueName: "SHARE"))
    var shares: [String] = []

    @Option(help: ArgumentHelp("One share sheet (a picture) to check alone.", valueName: "SHARE"))
    var share: String?

    @Option(help: ArgumentHelp("The public key the sheet must hold.", valueName: "NPUB"))
    var npub: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("The key the sheet must hold.", valueName: "FILE"))
    var keyFile: String?

    @Option(help: ArgumentHelp("A vault the sheet's key must open: a file, or s3://BUCKET/KEY.", valueName: "VAULT"))
    var vault: String?

    @OptionGroup var passphrase: PassphraseOption

    @Flag(help: "Print what was checked as JSON.")
    var json = false

    func validate() throws {
        guard [image != nil, !shares.isEmpty, share != nil].filter({ $0 }).count == 1 else {
            throw ValidationError("give a sheet (IMAGE), --shares SHARE…, or --share SHARE")
        }
        guard [npub, keyFile, vault].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of --npub, --key-file or --vault")
        }
        try requireOneStandardInput([image, share, keyFile, vault, passphrase.passphraseFile] + shares)
    }

    func run() throws {
        var report: String
        let matched: Bool
        var restored: PublicKey?
        if let share {
            (report, matched) = try checkAlone(share)
        } else {
            let key: SecretKey
            if let image {
                let (sheetKey, encrypted) = try about("sheet", image) { try SheetReader.key(fromImage: image, passphrase: passphrase) }
                key = sheetKey
                report = "sheet: the QR code holds \(encrypted ? "an encrypted key (decrypted with the passphrase)" : "a key") with public key \(key.publicKey.npub)\n"
            } else {
                let combined = try ShareReader.combine(shares) { try passphrase.readForShares() }
                key = combined.key
                report = "shares: \(ShareReader.summary(combined, paths: shares)) restore a key with public key \(key.publicKey.npub)\n"
                    + (combined.checked ? "check code: the share sheets' check code names its household\n"
                        : "check code: none (typed shares or files of words carry none), so only the expectation below checks the key\n")
            }
            let (comparison, keyMatched) = try compare(key)
            report += comparison
            matched = keyMatched
            restored = key.publicKey
        }
        if json {
            try StandardStreams.writeOutput(JSONValue.object([
                ("passed", .bool(matched)), ("checked", .string(image != nil ? "sheet" : share != nil ? "share" : "shares")),
                ("npub", restored.map { .string($0.npub) } ?? .null),
                ("report", .array(report.split(separator: "\n").map { .string(String($0)) })),
            ]).reported())
        } else {
            try StandardStreams.writeOutput(Array(report.utf8))
        }
        if !matched {
            let what = image.map { "the sheet '\($0)'" } ?? share.map { "the share sheet '\($0)'" } ?? "the shares"
            throw VaultError.restoredKeyMismatch("\(what) \(image == nil && share == nil ? "do" : "does") not match \(expectation)")
        }
    }

    private var expectation: String {
        npub != nil ? "--npub" : keyFile.map { "--key-file '\($0)'" } ?? "--vault '\(vault!)'"
    }

    /// The key against the expectation: its public key, or the vault its derived key opens.
    private func compare(_ key: SecretKey) throws -> (String, Bool) {
        if let npub {
            let expected = try PublicKey(npub: npub.trimmingWhiteSpace())
            return expected == key.publicKey ? ("match: it is the expected public key\n", true)
                : ("MISMATCH: the expected public key is \(expected.npub)\n", false)
        }
        if let keyFile {
            let expected = try about("--key-file", keyFile) { try KeyFiles.parentKey(keyFile, diagnostics) }
            return expected == key ? ("match: it is the key in '\(keyFile.displaySafe)'\n", true)
                : ("MISMATCH: the key in '\(keyFile.displaySafe)' has public key \(expected.publicKey.npub)\n", false)
        }
        let household = Household(parentPublicKey: key.publicKey)
        var report = "derived: household \(household.id.shortHex)…, vault path \(household.vaultPath)\n"
        // Read once (a second GET of an s3:// vault only for its header was the old way).
        let bytes = try about("--vault", vault!) { try InputFiles.read(vault!, what: "vault") }
        do {
            let opened = try about("--vault", vault!) {
                try VaultOfKey.open(bytes, key: key, name: InputFiles.quotedName(vault!), what: "the key of \(image.map { "the sheet \(InputFiles.quotedName($0))" } ?? "the shares")",
                                    hint: "the paper is right: keep it; restore the vault from a backup or a device")
            }
            let document = opened.document
            report += "match: the derived vault key opens '\(vault!.displaySafe)' (\(document.childProfiles.count) children, \(document.devices.count) devices, \(document.groupMemberships.count) groups)\n"
            return (report, true)
        } catch let error as VaultError where error.code.category == .authentication {
            return (report + "MISMATCH: \(error.reason.displaySafe)\n", false)
        }
    }

    /// One share sheet alone: it reads, and its public check code names the expected household
    /// and its own set. Nothing is combined; a typed share has no check code to compare.
    private func checkAlone(_ path: String) throws -> (String, Bool) {
        let read = try ShareReader.naming([path]) { try ShareReader.read(path, number: 1) }
        let share = read.share
        let report = "share: readable, share \(share.memberIndex + 1) of group \(share.groupIndex + 1), set \(share.identifier)"
            + " (\(share.groupCount == 1 ? "\(share.memberThreshold) shares" : "\(share.groupThreshold) groups") restore the key)\n"
        guard let check = read.checkCode else {
            throw VaultError.shareWithoutCheckCode(InputFiles.displayName(path))
        }
        let expected: HouseholdID
        if let npub {
            expected = Household(parentPublicKey: try PublicKey(npub: npub.trimmingWhiteSpace())).id
        } else if let keyFile {
            expected = Household(parentPublicKey: try about("--key-file", keyFile) { try KeyFiles.parentKey(keyFile, diagnostics) }.publicKey).id
        } else {
            let header = try about("--vault", vault!) { try VaultEnvelope(parsing: InputFiles.read(vault!, what: "vault")).header }
            expected = header.householdID
        }
        switch ShareCodes.compare(check: check, share: share, household: expected) {
        case .otherSet(let set):
            return (report + "MISMATCH: the sheet's check code names set \(set), its share code set \(share.identifier)\n", false)
        case .otherHousehold(let household):
            return (report + "MISMATCH: the sheet's check code names household \(household)…, not \(expected.shortHex)…\n", false)
        case .matches:
            return (report + "match: the sheet's check code names household \(expected.shortHex)…, this household\n", true)
        }
    }
}

struct Words: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "words",
        abstract: "Write a key as 24 BIP-39 words, or turn the words back into the key.",
        discussion: """
        The words are the key's 32 bytes in the BIP-39 English word list: they are the key, so \
        they are not written to a terminal unless --force. Decoding takes any case and spacing, \
        the first four letters of a word, and numbering: numbered words may come in any order \
        (the sheet's grid typed row by row); unnumbered words typed row by row across the grid, one \
        line a row, are recognised by their checksum (words on one line are read in order). On a terminal, with no FILE, the words are asked for \
        one at a time ("word 3 of 24:"), each checked against the list as it is typed (- goes \
        back a word; several words on a line, or a row of the grid, fill the next places), and \
        the screen is cleared afterwards, even when the tool is stopped by a signal. It also \
        takes the key as the sheet prints it, nsec1 or ncryptsec1 in groups of four, any case \
        (an ncryptsec needs --passphrase-file); a character that does not fit is named by its \
        group on the sheet.

        Words that pass the checksum can still be another key (another sheet's words, one \
        wrong word that fits): --npub NPUB (the public key printed on the sheet) or --vault \
        VAULT checks the key before it is written (a mismatch: exit 3, nothing written); \
        without them, compare the public key shown with the sheet's.

        Examples:
          recovery-sheet words --key-file parent.nsec -o words.txt
          recovery-sheet words --decode words.txt --npub npub1… -o restored.nsec
          recovery-sheet words --decode typed-ncryptsec.txt --passphrase-file - \\
            -o restored.nsec
        """
    )

    @Option(name: .customLong("key-file"), help: ArgumentHelp("The key to write as words.", valueName: "FILE"))
    var keyFile: String?

    @Flag(help: "Read words and write the key instead.")
    var decode = false

    @Argument(help: ArgumentHelp("With --decode: the file of words; - or nothing for standard input.", valueName: "FILE"))
    var input: String?

    @OptionGroup var passphrase: PassphraseOption

    @OptionGroup var expected: ExpectedKeyOptions

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if decode, keyFile != nil { throw ValidationError("--decode reads words, not --key-file") }
        if !decode, expected.npub != nil || expected.vault != nil { throw ValidationError("--npub and --vault go with --decode") }
        if !decode, keyFile == nil { throw ValidationError("give --key-file, or --decode to read words") }
        if !decode, input != nil { throw ValidationError("a words file is read only with --decode") }
        if !decode, passphrase.passphraseFile != nil { throw ValidationError("--passphrase-file goes with --decode") }
        try requireOneStandardInput([input ?? "-", passphrase.passphraseFile, expected.vault])
    }

    func run() throws {
        let secretOutput = decode ? output.declaredRestoredKey : output.declared(.secret)
        let files = try CommandFiles(reads: decode ? [.init("words file", input ?? "-")] + passphrase.declaredInputs + expected.declaredInputs : [.init("--key-file", keyFile!)],
                                     writes: [secretOutput], force: output.force)
        let line: SecretBytes
        if decode {
            let path = input ?? "-"
            // On a terminal the words are asked for one at a time, each checked as it is typed.
            var prompt = WordPrompt.bip39("the 24 words of the key") { text in
                do {
                    _ = try Self.key(fromTyped: text) { nil }
                } catch let error as VaultError where error.code == .passphraseNeeded {
                    return  // an ncryptsec that decodes: its passphrase is asked for next
                }
            }
            prompt.takesKey = true
            let words = path == "-" && TerminalPrompt.inputIsTerminal
                ? try prompt.ask()
                : try InputFiles.readSecret(path, what: "words file", diagnostics: diagnostics)
            let key: SecretKey
            do {
                let found = try Self.key(fromTyped: words) { try passphrase.read() }
                key = found.key
                if let note = found.order?.note { diagnostics.note("\(note)") }
                // Only an encrypted key (ncryptsec) takes a passphrase: one given for words,
                // as a wallet's BIP-39 passphrase would be, changes nothing here (a parent's trial).
                if !found.encrypted, passphrase.passphraseFile != nil {
                    diagnostics.warning("--passphrase-file was not used: the words hold the key itself, not an encrypted one")
                }
            } catch let error as VaultError where error.code == .passphraseNeeded {
                throw error.withContext(hint: "pass --passphrase-file - to be asked for it without echo (or a file only you can read)")
            }
            try expected.confirm(key, from: .words)
            line = try secretLine(key.nsec())
        } else {
            let key = try KeyFiles.parentKey(keyFile!, diagnostics)
            line = try secretLine(key.withUnsafeBytes { try BIP39.phrase(for: SecretBytes(copying: $0)) })
        }
        try files.writer().write(secretOutput, line)
    }

    /// The key behind typed text: the words, or the key as printed, forgiven its spaces and
    /// case, and when it does not decode, the error that points at its group on the sheet.
    static func key(fromTyped text: SecretBytes, passphrase: () throws -> SecretBytes?) throws -> (key: SecretKey, encrypted: Bool, order: WordOrder?) {
        guard let typedKey = try TypedKey.normalized(text) else { return try RecoverySheet.key(fromTyped: text, passphrase: passphrase) }
        do {
            return try RecoverySheet.key(fromTyped: typedKey, passphrase: passphrase)
        } catch let error as VaultError where error.code == .malformedKey {
            throw TypedKey.problem(typedKey) ?? error
        }
    }
}
