import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultPaper

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Make a printable recovery sheet (PDF or PNG) for a parent key.",
        discussion: """
        A PDF is the page at its true size, fonts embedded, the QR code as vector squares: \
        print it at 100%; the 5 cm line at its foot shows whether the printer shrank it. A PNG \
        is the same page at --dpi and records its resolution. The output's extension picks the \
        format, or --format (standard output needs it). The same key, options and --date give \
        the same bytes. With --passphrase-file the sheet carries the key encrypted with NIP-49 \
        (ncryptsec) instead, and no words; a passphrase zxcvbn estimates under 2^50 guesses is \
        refused (exit 4) unless --weak-passphrase. The sheet holds the key: it is created 0600.

        Examples:
          recovery-sheet generate --key-file parent.nsec --label "Garcia family" \\
            -o sheet.pdf
          recovery-sheet generate --key-file parent.nsec --paper letter \\
            --lang es --app-name MyTube -o hoja.pdf
          recovery-sheet generate --key-file parent.nsec --passphrase-file pass.txt \\
            -o sheet.pdf
          recovery-sheet generate --key-file parent.nsec --dpi 150 -o sheet.png
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
        let sheetOutput = output.declared(.secret)
        let files = try CommandFiles(reads: [key.declaredInput].compactMap { $0 } + passphrase.declaredInputs, writes: [sheetOutput], force: output.force)
        let format = try page.format(for: output.output, option: "-o")
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
        let sheet = try RecoverySheet.render(content, paper: page.paper, dotsPerInch: page.dpi, template: Wording.template(page.lang))
        try files.writer().write(sheetOutput, format.bytes(of: sheet))
        diagnostics.note("recovery sheet for \(key.publicKey.npub): \(format.describe(page)), \(page.lang)\(passphrase.passphraseFile == nil ? "" : ", encrypted") → \(output.displayName)")
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

    @Option(help: ArgumentHelp("pdf (prints at true size), png, or layout (the page description as JSON, for review); by default the output's extension (.pdf, .png) says which.", valueName: "FORMAT"))
    var format: SheetFormat?

    func validate() throws {
        guard Paper.dotsPerInch.contains(dpi) else {
            throw ValidationError("--dpi takes \(Paper.dotsPerInch.lowerBound) to \(Paper.dotsPerInch.upperBound), not \(dpi)")
        }
        guard Wording.languages.contains(lang) else {
            throw ValidationError("no wording for language '\(lang)'; use one of: \(Wording.languages.joined(separator: ", "))")
        }
        if let date, !Self.isDate(date) { throw ValidationError("--date takes YYYY-MM-DD, such as 2026-11-22") }
        if let appName, appName.trimmingBlanks().isEmpty { throw ValidationError("--app-name needs a name") }
    }

    /// The format of the sheet written to `path` (`option` names it in messages): --format, or
    /// the file's extension. Standard output (`-`) has no extension, so it needs --format.
    /// Asked after the command's files are checked: a sheet named like an input is refused as
    /// that, first.
    func format(for path: String?, option: String) throws -> SheetFormat {
        let named = path.flatMap(SheetFormat.init(path:))
        if let format {
            if let named, named != format {
                throw VaultError.sheetFormat("\(option) \(path!) names a \(named.rawValue.uppercased()) file, but --format is \(format.rawValue)")
            }
            return format
        }
        if let named { return named }
        guard let path, path != "-" else { throw VaultError.sheetFormat("a sheet written to standard output needs --format pdf or --format png") }
        throw VaultError.sheetFormat("\(option) \(path): name the sheet .pdf or .png, or give --format")
    }

    /// The date to print: --date, or today.
    var printedDate: String { date ?? Self.today() }

    static func isDate(_ text: String) -> Bool { TextTemplate.calendarDate(text) != nil }

    /// Today in the local time zone (TZ, /etc/localtime), as C reads it.
    static func today() -> String {
        var now = time(nil), parts = tm()
        localtime_r(&now, &parts)
        return zeroPadded(Int(parts.tm_year) + 1900, width: 4) + "-" + zeroPadded(Int(parts.tm_mon) + 1, width: 2) + "-"
            + zeroPadded(Int(parts.tm_mday), width: 2)
    }
}

/// The two forms of a printed sheet, from one layout: a PDF (the page at its true size, for
/// printing) or a PNG (a picture at the resolution asked for).
/// `layout` is the page description itself (JSON: every box and text run, in points), for
/// reviewing a change of layout and for tests; it holds what the sheet holds.
enum SheetFormat: String, CaseIterable, ExpressibleByArgument {
    case pdf, png, layout

    /// The format a file's extension names (any case), if it names one.
    init?(path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/"),
              let format = SheetFormat(rawValue: path[path.index(after: dot)...].lowercased()), format != .layout else { return nil }
        self = format
    }

    func bytes(of sheet: RecoverySheet.Rendered) throws -> [UInt8] {
        switch self {
        case .pdf: try sheet.pdf()
        case .png: try sheet.image().pngData()
        case .layout: sheet.page.jsonValue().revealed() + [0x0a]
        }
    }

    /// "a4 PDF", "a4, 300 dpi PNG": for the tool's note.
    func describe(_ page: PageOptions) -> String {
        switch self {
        case .pdf: "\(page.paper.rawValue) PDF"
        case .png: "\(page.paper.rawValue), \(page.dpi) dpi PNG"
        case .layout: "\(page.paper.rawValue) page description"
        }
    }
}
