import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultPaper
import VaultStorage

let diagnostics = Diagnostics(toolName: "recovery-sheet")

@main
struct RecoverySheetTool: ToolRoot {
    static let toolConfiguration = CommandConfiguration(
        commandName: "recovery-sheet",
        abstract: "Print a parent's key on paper, and bring it back from paper.",
        discussion: """
        A recovery sheet is one printable page (PDF, or a PNG picture) with the key as a QR code, \
        as 24 words and as text, the public values that show which household it restores, and instructions. Keep it \
        like a passport: anyone who holds it has the family's account.

        Exit codes: 0 ok, 1 I/O failure, 2 invalid input, 3 wrong key or passphrase, \
        4 refused for safety, 64 usage, 75 the object store failed through every attempt (run it \
        again later), 78 the object store's configuration cannot work, 69 a library the command needs is not \
        installed (the message names its Debian package).

        A fire drill:
          recovery-sheet generate --key-file parent.nsec --label "Garcia family" \\
            -o sheet.pdf
          recovery-sheet verify sheet.pdf --vault household.vault
          recovery-sheet scan sheet-photo.jpg -o restored.nsec
        """,
        version: SuiteVersion.text,
        subcommands: [Generate.self, Scan.self, Verify.self, Words.self, Split.self, Combine.self, Code.self, ReadPDF.self]
    )

    static func main() {
        ToolMain.run(Self.self, objectStore: { try ObjectStore.connect(environment: ProcessInfo.processInfo.environment) }, hints: [
            // The key here is the sheet's (or its shares'), not one given with --key-file: the
            // shared hint named an option the command was not given.
            .vaultKeyGivenAsParentKey: "a family's sheet holds the parent key (the nsec), never the vault key support holds; make it again from the parent key: recovery-sheet generate --key-file parent.nsec",
        ])
    }
}

/// The passphrase of an encrypted (NIP-49) sheet or of a share set, read from a file, never from
/// the command line; `-` on a terminal asks for it without echo (twice for a new one).
struct PassphraseOption: ParsableArguments {
    @Option(name: .customLong("passphrase-file"), help: ArgumentHelp("A file holding the passphrase (one final newline is ignored); - for standard input, asked without echo on a terminal.", valueName: "FILE"))
    var passphraseFile: String?

    var declaredInputs: [FileSet.Input] { passphraseFile.map { [FileSet.Input("--passphrase-file", $0)] } ?? [] }

    /// The passphrase (UTF-8, in protected memory), or nil when none was given. `new` asks
    /// twice on a terminal.
    func read(new: Bool = false) throws -> SecretBytes? {
        guard let passphraseFile else { return nil }
        let bytes = passphraseFile == "-" && TerminalPrompt.inputIsTerminal
            ? try (new ? TerminalPrompt.newSecret("passphrase") : TerminalPrompt.secretLine("passphrase"))
            : try InputFiles.readSecret(passphraseFile, what: "passphrase file", diagnostics: diagnostics)
        // One final line ending is the file's, not the passphrase's ("\r\n" is one, as a
        // String's last Character it was).
        let ending = bytes.withUnsafeBytes { $0.count >= 2 && $0[$0.count - 2] == 0x0d && $0[$0.count - 1] == 0x0a ? 2 : ($0.last == 0x0a ? 1 : 0) }
        let passphrase = try bytes.slice(0..<(bytes.count - ending))
        guard passphrase.count > 0 else {
            throw VaultError.emptyPassphraseFile(InputFiles.displayName(passphraseFile))
        }
        return passphrase
    }

    /// A new passphrase (asked twice on a terminal), refused when zxcvbn's estimate is below
    /// ``PassphraseStrength/minimumBits`` unless `allowWeak` (--weak-passphrase).
    func readNew(allowWeak: Bool) throws -> SecretBytes? {
        guard let text = try read(new: true) else { return nil }
        // Taken knowingly: not judged, so zxcvbn is not loaded for an answer that changes nothing.
        if allowWeak { return text }
        let strength = try PassphraseStrength.estimate(text)
        guard !strength.isWeak else {
            throw VaultError.weakPassphrase(strength)
                .withContext(hint: "choose a longer one (four or more random words), or pass --weak-passphrase to use it knowingly")
        }
        return text
    }
}

/// The wording of the sheets, compiled in from Templates/: one file a sheet and language.
enum Wording {
    static let languages = ["en", "es"]

    private static let files: [String: [UInt8]] = [
        "recovery-sheet.en": PackageResources.recovery_sheet_en_txt, "recovery-sheet.es": PackageResources.recovery_sheet_es_txt,
        "recovery-code.en": PackageResources.recovery_code_en_txt, "recovery-code.es": PackageResources.recovery_code_es_txt,
        "share-sheet.en": PackageResources.share_sheet_en_txt, "share-sheet.es": PackageResources.share_sheet_es_txt,
    ]

    static func template(_ language: String) throws -> TextTemplate { try load("recovery-sheet", language) }
    static func codeTemplate(_ language: String) throws -> TextTemplate { try load("recovery-code", language) }
    static func shareTemplate(_ language: String) throws -> TextTemplate { try load("share-sheet", language) }

    private static func load(_ sheet: String, _ language: String) throws -> TextTemplate {
        guard let bytes = files["\(sheet).\(language)"] else { throw unknown(language) }
        return try TextTemplate(language: language, text: String(decoding: bytes, as: UTF8.self))
    }

    private static func unknown(_ language: String) -> VaultError {
        VaultError.noWording(for: language, languages: languages)
    }
}

extension Paper: ExpressibleByArgument {}
