import ArgumentParser
import CLISupport
import Foundation
import VaultCore
import VaultPaper

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a printable recovery sheet (PNG) for a parent key.",
        discussion: """
        The page prints at true size (the PNG records its resolution). The same key, options and \
        --date give the same pixels. With --passphrase-file the sheet carries the key encrypted \
        with NIP-49 (ncryptsec) instead, and no words; a passphrase zxcvbn estimates under 2^50 \
        guesses is refused (exit 4) unless --weak-passphrase. The PNG holds the key: it is \
        created 0600.

        Examples:
          recovery-sheet generate --key-file parent.nsec --label "Garcia family" \\
            -o sheet.png
          recovery-sheet generate --key-file parent.nsec --paper letter \\
            --lang es --app-name MyTube -o hoja.png
          recovery-sheet generate --key-file parent.nsec --passphrase-file pass.txt \\
            -o sheet.png
        """
    )

    @OptionGroup var key: ParentKeyOption

    @OptionGroup var page: PageOptions

    @OptionGroup var passphrase: PassphraseOption

    @Flag(help: "Use a passphrase that zxcvbn estimates easy to guess (under 2^50 guesses).")
    var weakPassphrase = false

    @Option(name: .customLong("log-n"), help: ArgumentHelp("scrypt cost of an encrypted sheet: 2^N iterations (memory 2^N KiB).", valueName: "N"))
    var logN: UInt8 = 16

    @Option(name: .customLong("key-security"), help: ArgumentHelp("NIP-49 key-security byte: 0 known insecure, 1 not known insecure, 2 unknown.", valueName: "N"))
    var keySecurity: UInt8 = 2

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try requireOneStandardInput([key.keyFile, passphrase.passphraseFile])
    }

    func run() throws {
        try requireRange(keySecurity, 0...2, "--key-security")
        try requireRange(logN, 1...NIP49.maximumLogN, "--log-n")
        let files = try CommandFiles(reads: [key.declaredInput] + passphrase.declaredInputs, writes: [output.declared(.secret)], force: output.force)
        let key = try self.key.load(diagnostics)
        let secret: RecoverySheet.Secret
        if let passphrase = try passphrase.readNew(allowWeak: weakPassphrase) {
            secret = .encrypted(ncryptsec: try NIP49.encrypt(key, passphrase: passphrase, logN: logN, keySecurity: NIP49.KeySecurity(rawValue: keySecurity)!),
                                publicKey: key.publicKey)
        } else {
            secret = .plain(key)
        }
        let content = RecoverySheet.Content(secret: secret, label: page.label, date: page.printedDate,
                                            appName: page.appName ?? RecoverySheet.defaultAppName)
        let sheet = try RecoverySheet.render(content, paper: page.paper, dotsPerInch: page.dpi, template: Wording.template(page.lang), fonts: SheetFonts())
        try files.writer().write("-o", sheet.image.pngData())
        diagnostics.note("recovery sheet for \(key.publicKey.npub): \(page.paper.rawValue), \(page.dpi) dpi, \(page.lang)\(passphrase.passphraseFile == nil ? "" : ", encrypted") → \(output.displayName)")
    }

}

/// How a printed page looks: paper, resolution, language, a label, the printed date and the
/// app's name (`generate`, `split`, `code new` and `code rotate`).
struct PageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Paper size: a4 or letter.", valueName: "PAPER"))
    var paper: Paper = .a4

    @Option(help: ArgumentHelp("Resolution in dots per inch (\(Paper.dotsPerInch.lowerBound) to \(Paper.dotsPerInch.upperBound)).", valueName: "N"))
    var dpi = 300

    @Option(help: ArgumentHelp("Language of the wording: \(Wording.languages.joined(separator: ", ")).", valueName: "LANG"))
    var lang = "en"

    @Option(help: ArgumentHelp("A line under the title, such as the family's name.", valueName: "TEXT"))
    var label: String?

    @Option(help: ArgumentHelp("The date printed on the sheet, YYYY-MM-DD (default today).", valueName: "DATE"))
    var date: String?

    @Option(name: .customLong("app-name"), help: ArgumentHelp("The app's name as the family knows it (default: \(RecoverySheet.defaultAppName); \(CodeSheet.defaultAppName) on a code sheet).", valueName: "NAME"))
    var appName: String?

    func validate() throws {
        guard Paper.dotsPerInch.contains(dpi) else {
            throw ValidationError("--dpi takes \(Paper.dotsPerInch.lowerBound) to \(Paper.dotsPerInch.upperBound), not \(dpi)")
        }
        guard Wording.languages.contains(lang) else {
            throw ValidationError("no wording for language '\(lang)'; use one of: \(Wording.languages.joined(separator: ", "))")
        }
        if let date, !Self.isDate(date) { throw ValidationError("--date takes YYYY-MM-DD, such as 2026-11-22") }
        if let appName, appName.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--app-name needs a name") }
    }

    /// The date to print: --date, or today.
    var printedDate: String { date ?? Self.today() }

    static func isDate(_ text: String) -> Bool { TextTemplate.calendarDate(text) != nil }

    static func today() -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let parts = calendar.dateComponents([.year, .month, .day], from: Date())
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }
}
