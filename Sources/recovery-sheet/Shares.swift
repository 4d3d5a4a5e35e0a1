import ArgumentParser
import CLIPictures
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultImaging
import VaultPaper

/// Reads shares (issue 14): a picture of a share sheet (its share code), or a file of typed
/// words. Problems name the file a share came from.
enum ShareReader {
    /// What a share sheet's picture holds: the share, and the check code printed beside it.
    struct Read {
        let share: SLIP39Share
        let checkCode: (set: Int, household: String)?
    }

    static func read(_ path: String, number: Int) throws -> Read {
        // "-" on a terminal: the share's words are asked for one at a time (once per "-").
        if path == "-", TerminalPrompt.inputIsTerminal {
            let words = try WordPrompt.slip39Share(number).ask()
            let share = try SLIP39Share(words: words, share: number)
            // The prompt's screen is gone: say which sheet the words were, as its title says.
            diagnostics.note("typed: \(sheetName(share)) of set \(share.identifier)")
            return Read(share: share, checkCode: nil)
        }
        var bytes = try InputFiles.read(path, what: "share", limit: InputLimits.imageFile)
        if GrayImage.isPicture(bytes) || SheetPDF.isPDF(bytes) {
            let name = InputFiles.displayName(path)
            let image = try IsolatedPDF.picture(of: bytes, name: name) ?? GrayImage(decoding: bytes, name: "the picture '\(name)'")
            var payloads = try QRScanner.scan(image)
            defer { for i in payloads.indices { payloads[i].zeroize() } }  // the share code, out of protected memory
            let page = try ShareCodes.read(payloads: payloads.map { try $0.withUnsafeBytes { try SecretBytes(copying: $0) } }, share: number)
            if let share = page.share { return Read(share: share, checkCode: page.check) }
            switch PrintedCode.mostTelling(payloads) {
            case .other, .share, .shareCheck:
                break  // a share sheet whose share code did not read, or no code of ours: the advice below
            case let found:
                throw VaultError.wrongKindOfCode(found, expected: "a share sheet", name: "'\(name)'")
                    .withContext(hint: QRPictures.commandReading(found).map { "read it with \($0)" })
            }
            throw VaultError.noShareCode(in: name)
        }
        // A file of words is as secret as the share: moved to protected memory, the array zeroed.
        defer { for index in bytes.indices { bytes[index] = 0 } }
        // Words are text; anything else is a picture in a format we do not read (HEIC, WebP).
        guard String(validating: bytes, as: UTF8.self) != nil, !bytes.contains(0) else {
            throw VaultError.neitherPictureNorWords(InputFiles.displayName(path))
        }
        guard bytes.count <= InputLimits.keyFile else {
            throw VaultError.tooLarge(what: "words file", name: InputFiles.displayName(path), limit: InputLimits.keyFile)
        }
        // The check code `split --text` writes under the words, or a person copied from the
        // sheet: public, and what proves the restored key (issue 44).
        let (words, check) = try ShareCodes.splitCheckCode(SecretBytes(consuming: &bytes))
        let share = try SLIP39Share(words: words, share: number)
        // A check code copied from another set's sheet proves nothing of these words, as a
        // title over another sheet's words does not (the set is the code's own first number).
        if let check, check.set != share.identifier {
            throw ShareProblem.headingNamesAnotherShare(share: number, named: "set \(check.set)", words: "set \(share.identifier)")
        }
        return Read(share: share, checkCode: check)
    }

    /// What combining found: the key, the shares, and what their sheets' check codes said.
    struct Combined {
        let key: SecretKey
        let shares: [SLIP39Share]
        /// Which given shares repeat an earlier one (counted once), as (share, same as), from 1.
        let repeats: [(share: Int, sameAs: Int)]
        /// Whether a share sheet's check code named the restored key's household; false when
        /// no share came with one (typed words, files of words).
        let checked: Bool
    }

    /// Every share, then the secret they restore, as the family's key, checked against the
    /// check code of every share sheet read from a picture: a mismatch (the passphrase missing
    /// or wrong) is refused. Pictures and files are read before any share or the passphrase is
    /// typed, so a picture that does not read fails before someone types 33 words.
    static func combine(_ paths: [String], passphrase readPassphrase: () throws -> SecretBytes?) throws -> Combined {
        try naming(paths) {
            let typed = { (path: String) in path == "-" && TerminalPrompt.inputIsTerminal }
            var reads = [Read?](repeating: nil, count: paths.count)
            for (index, path) in paths.enumerated() where !typed(path) { reads[index] = try read(path, number: index + 1) }
            for (index, path) in paths.enumerated() where typed(path) { reads[index] = try read(path, number: index + 1) }
            for (index, read) in reads.enumerated() { try ShareCodes.requireOneSet(check: read!.checkCode, share: read!.share, number: index + 1) }
            let shares = reads.map { $0!.share }
            let passphrase = try readPassphrase()
            let secret = try SLIP39.combine(shares, passphrase: passphrase, countingRepeatsOnce: true)
            guard secret.count == 32 else {
                throw VaultError.sharesRestoreNoFamilyKey(byteCount: secret.count)
            }
            let key = try SecretKey(secret: secret)
            let checks = reads.compactMap { $0!.checkCode }
            if case .otherHousehold(let named, let agreeing) = ShareCodes.check(restored: Household(parentPublicKey: key.publicKey).id, against: checks) {
                throw VaultError.sharesRestoreAnotherKey(named: named, checkCodesAgree: agreeing, passphraseGiven: passphrase != nil).withContext(
                    hint: !agreeing ? "compare each sheet's check code line with the printed sheet; combine only the family's own shares"
                        : passphrase != nil ? "check the passphrase in --passphrase-file, character by character"
                        : "give the family's share passphrase with --passphrase-file (- asks for it)")
            }
            return Combined(key: key, shares: shares, repeats: repeats(shares), checked: !checks.isEmpty)
        }
    }

    /// The shares that repeat an earlier one: the same place in the same group, the same value.
    private static func repeats(_ shares: [SLIP39Share]) -> [(share: Int, sameAs: Int)] {
        shares.indices.compactMap { later in
            shares[..<later].firstIndex { $0.groupIndex == shares[later].groupIndex && $0.memberIndex == shares[later].memberIndex
                && $0.value == shares[later].value }.map { (later + 1, $0 + 1) }
        }
    }

    /// What a note says of the shares combined, each named as its sheet's title names it:
    /// "2 shares of set 7945 (share 1, share 3)", and the repeats.
    static func summary(_ combined: Combined, paths: [String]) -> String {
        let repeated = Set(combined.repeats.map(\.share))
        let named = combined.shares.enumerated().filter { !repeated.contains($0.offset + 1) }.map { sheetName($0.element) }
        let repeats = combined.repeats.map { "\(InputFiles.quotedName(paths[$0.share - 1])) is the same share as \(InputFiles.quotedName(paths[$0.sameAs - 1])), counted once" }
        return "\(counted(named.count, "share")) of set \(combined.shares[0].identifier) (\(named.joined(separator: ", ")))"
            + (repeats.isEmpty ? "" : "; \(repeats.joined(separator: "; "))")
    }

    /// A share as its sheet's title numbers it: "share 2", or "share 2 of group 3".
    static func sheetName(_ share: SLIP39Share) -> String {
        "share \(share.memberIndex + 1)" + (share.groupCount > 1 ? " of group \(share.groupIndex + 1)" : "")
    }

    /// Runs `body`, turning a ``ShareProblem`` into a message that names the files it means.
    static func naming<T>(_ paths: [String], _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let problem as ShareProblem {
            let files = problem.shares.filter { paths.indices.contains($0 - 1) }
                .map { "share \($0) is \(InputFiles.quotedName(paths[$0 - 1]))" }
            throw problem.vaultError.withContext(suffix: files.isEmpty ? "" : " (\(files.joined(separator: ", ")))", hint: hint(for: problem))
        }
    }

    private static func hint(for problem: ShareProblem) -> String? {
        switch problem {
        case .notEnoughShares, .notEnoughGroups: "give more sheets of the same set (the set number is printed on each)"
        case .unknownWord, .checksumFailed: "compare the typed words with the sheet, or scan the sheet's share code instead"
        case .digestMismatch: "check the passphrase and that every sheet is of this set"
        default: nil
        }
    }
}

/// The key's passphrase for shares: optional, printable ASCII (SLIP-0039).
extension PassphraseOption {
    func readForShares() throws -> SecretBytes? { try read() }

    /// A new passphrase for a split, checked as ``readNew(allowWeak:)`` checks it.
    func readNewForShares(allowWeak: Bool) throws -> SecretBytes? { try readNew(allowWeak: allowWeak) }
}

struct Split: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "split",
        abstract: "Split the parent key into family shares: any K of N printed sheets restore it.",
        discussion: """
        The key's 32 bytes are split with SLIP-0039 (the published standard; the reference \
        implementation restores them too: pip install shamir-mnemonic, then shamir recover). \
        One share sheet a share, in the folder given by -o (PNG, or PDF with --format pdf), \
        each created 0600 and never overwriting a file. Fewer than K sheets reveal nothing about the key. A passphrase \
        (--passphrase-file) that zxcvbn estimates under 2^50 guesses is refused (exit 4) unless \
        --weak-passphrase. --holder names \
        the sheets' keepers in order; each sheet names its own keeper and the others (never \
        their shares). --groups gives two levels: --group-threshold 1 --groups 1of1,1of1,2of3 \
        means either parent's sheet alone, or two of three relatives' sheets.

        Examples:
          recovery-sheet split --key-file parent.nsec --threshold 2 --shares 3 \\
            --holder "Grandma Rosa" --holder "Uncle Luis" --holder "Bank safe" \\
            --format pdf -o shares
          recovery-sheet split --key-file parent.nsec --group-threshold 1 \\
            --groups 1of1,1of1,2of3 --label "Garcia family" -o shares
        """
    )

    @OptionGroup var key: ParentKeyOption

    @Option(help: ArgumentHelp("How many sheets restore the key (one group).", valueName: "N"))
    var threshold: Int?

    @Option(help: ArgumentHelp("How many sheets to make (one group, at most 16).", valueName: "N"))
    var shares: Int?

    @Option(name: .customLong("group-threshold"), help: ArgumentHelp("How many groups restore the key (with --groups).", valueName: "N"))
    var groupThreshold: Int?

    @Option(help: ArgumentHelp("The groups, each as KofN, separated by commas (two levels).", valueName: "GROUPS"))
    var groups: String?

    @Option(help: ArgumentHelp("Who keeps each sheet, in order (repeat for each sheet).", valueName: "NAME"))
    var holder: [String] = []

    @OptionGroup var passphrase: PassphraseOption

    @Flag(help: "Use a passphrase that zxcvbn estimates easy to guess (under 2^50 guesses).")
    var weakPassphrase = false

    @OptionGroup var page: PageOptions

    @Flag(help: "Also write each share's words to a text file beside its sheet (0600).")
    var text = false

    @Option(name: .customLong("iteration-exponent"), help: ArgumentHelp("SLIP-0039's PBKDF2 cost: 10,000 × 2^N iterations (0 to 15).", valueName: "N"))
    var iterationExponent = SLIP39.defaultIterationExponent

    @Option(name: .shortAndLong, help: ArgumentHelp("The folder for the share sheets (made if missing).", valueName: "DIR"))
    var output: String

    func validate() throws {
        try requireOneStandardInput([key.keyFile, passphrase.passphraseFile])
        guard (threshold != nil && shares != nil && groupThreshold == nil && groups == nil)
            || (threshold == nil && shares == nil && groupThreshold != nil && groups != nil) else {
            throw ValidationError("give --threshold K --shares N, or --group-threshold G --groups KofN,…")
        }
        if output == "-" { throw ValidationError("-o names a folder: the shares are one file each") }
    }

    /// The groups asked for, range-checked.
    func plan() throws -> (groupThreshold: Int, groups: [SLIP39.Group]) {
        if let threshold, let shares {
            try requireRange(shares, 1...16, "--shares")
            try requireRange(threshold, 1...shares, "--threshold")
            if threshold == 1, shares > 1 {
                throw ValidationError("--threshold 1 with --shares \(shares): a set any 1 share restores has 1 share (SLIP-0039); print copies of it (--shares 1), or ask for 2 or more")
            }
            return (1, [SLIP39.Group(threshold: threshold, count: shares)])
        }
        // Every part, empty ones too: "1of1,,2of3" is a group left out by a slip, not two groups.
        let parsed = try groups!.split(separator: ",", omittingEmptySubsequences: false).map { part in
            do {
                return try SLIP39.Group(parsing: part)
            } catch let error as VaultError {
                throw error.withContext(prefix: "--groups: ")
            }
        }
        if let single = parsed.first(where: { $0.threshold == 1 && $0.count > 1 }) {
            throw ValidationError("--groups: a group any 1 share restores has 1 share (SLIP-0039), not 1of\(single.count); print copies of it (1of1), or ask for 2 or more")
        }
        try requireRange(parsed.count, 1...16, "the number of groups")
        try requireRange(groupThreshold!, 1...parsed.count, "--group-threshold")
        return (groupThreshold!, parsed)
    }

    func run() throws {
        try requireRange(iterationExponent, 0...15, "--iteration-exponent")
        let (groupThreshold, groups) = try plan()
        let total = groups.reduce(0) { $0 + $1.count }
        guard holder.count <= total else {
            throw VaultError.moreHoldersThanSheets(holder.count, total)
        }
        // One name a sheet: share-i-of-N, or groupG-share-i-of-N with two levels.
        let names = groups.enumerated().flatMap { g, group in
            (1...group.count).map { (groups.count > 1 ? "group\(g + 1)-" : "") + "share-\($0)-of-\(group.count)" }
        }
        let folder = output.hasSuffix("/") ? String(output.dropLast()) : output
        // The folder has no extension to go by: a PNG unless --format says otherwise.
        let format = page.format ?? .png
        let sheets = names.map { DeclaredOutput($0, "\(folder)/\($0).\(format.rawValue)", kind: .secret, exclusive: true, createFolders: true, namedByTool: true) }
        let typed = text ? names.map { DeclaredOutput($0 + ".txt", "\(folder)/\($0).txt", kind: .secret, exclusive: true, createFolders: true, namedByTool: true) } : []
        let files = try CommandFiles(reads: [key.declaredInput].compactMap { $0 } + passphrase.declaredInputs, writes: sheets + typed)

        let key = try self.key.load(diagnostics)
        let phrase = try passphrase.readNewForShares(allowWeak: weakPassphrase)
        let set = try key.withUnsafeBytes { bytes in
            try SLIP39.split(secret: SecretBytes(copying: bytes), groupThreshold: groupThreshold, groups: groups, passphrase: phrase,
                             iterationExponent: iterationExponent, random: SystemRandom())
        }.flatMap { $0 }
        let template = try Wording.shareTemplate(page.lang)
        let writer = files.writer()
        for (index, share) in set.enumerated() {
            let holderName = holder.indices.contains(index) ? holder[index] : nil
            let others = holder.enumerated().filter { $0.offset != index }.map(\.element)
            let content = ShareSheet.Content(share: share, publicKey: key.publicKey, holder: holderName, otherHolders: others, label: page.label,
                                             date: page.printedDate, needsPassphrase: phrase != nil,
                                             appName: page.appName ?? RecoverySheet.defaultAppName)
            let sheet = try ShareSheet.render(content, groups: groups, paper: page.paper, dotsPerInch: page.dpi, template: template)
            try writer.stage(sheets[index], format.bytes(of: sheet))
            // The words, then the sheet's public check code: combining typed shares then proves
            // the key as combining pictures does.
            if typed.indices.contains(index) {
                let check = Array((ShareCodes.checkCode(set: share.identifier, household: Household(parentPublicKey: key.publicKey)) + "\n").utf8)
                let words = try secretLine(share.phrase())
                try writer.stage(typed[index], SecretBytes(count: words.count + check.count) { buffer in
                    words.withUnsafeBytes { buffer.copyMemory(from: $0) }
                    (buffer.baseAddress! + words.count).copyMemory(from: check, byteCount: check.count)
                })
            }
        }
        try writer.publish()
        let rule = groups.count == 1 ? "any \(groups[0].threshold) of \(groups[0].count) restore the key"
            : "any \(groupThreshold) of \(groups.count) groups restore the key"
        diagnostics.note("\(set.count) share sheets of set \(set[0].identifier) for \(key.publicKey.npub) (\(rule)) → \(folder)/")
        diagnostics.note("print each sheet, give it to its holder, then delete the files; check the set once a year with 'recovery-sheet verify --shares'")
    }
}

struct Combine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "combine",
        abstract: "Restore the parent key from enough family shares.",
        discussion: """
        Each SHARE is a picture (PNG or JPEG) of a share sheet, or a file of a share's words \
        (any case, numbering, four-letter prefixes, or unnumbered words typed row by row \
        across the printed grid, one line a row; the sheet's title and set line may be copied \
        with them, and must name that share), or - on a terminal: its 33 words are then asked \
        for one at a time (or several on a line), each checked as it is typed, and when the checksum points to one wrong word the \
        word that fits is offered. Shares made by the SLIP-0039 reference implementation work \
        too. The key is written as nsec1… (a new 0600 file, never replacing one, or standard \
        output, never a terminal unless --force). Nothing about the key is shown when the \
        shares are not enough or do not belong together. Pictures are read before any share is \
        typed; a share given twice counts once.

        Shares combine under any passphrase, so a missing or wrong one restores another key: \
        the key is checked against the public check code of every share sheet read from a \
        picture, and of every file of words that has it (split --text writes it under the \
        words: HVT-SHARE SET HOUSEHOLD, as the sheet prints it), and a mismatch is refused \
        (exit 3, nothing written). Shares typed without it prove nothing: give --npub (the \
        public key printed on the sheets) or --vault to check the key before it is written; \
        without either, such a restore is refused (exit 4) unless --unverified.

        Examples:
          recovery-sheet combine rosa-scan.jpg safe-photo.jpg -o restored.nsec
          recovery-sheet combine - rosa-scan.jpg -o restored.nsec
          recovery-sheet combine share1.txt share2.txt --passphrase-file pass.txt \\
            --npub npub1… -o restored.nsec
          recovery-sheet combine typed1.txt typed2.txt --unverified -o unchecked.nsec
        """
    )

    @Argument(help: ArgumentHelp("Pictures of share sheets or files of words; - for standard input (one).", valueName: "SHARE"))
    var shares: [String]

    @OptionGroup var passphrase: PassphraseOption

    @OptionGroup var expected: ExpectedKeyOptions

    @Flag(help: "Write the key even when nothing proves it: no share came with its check code, and neither --npub nor --vault was given.")
    var unverified = false

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !shares.isEmpty else { throw ValidationError("give the shares to combine") }
        if unverified, expected.npub != nil || expected.vault != nil { throw ValidationError("--unverified goes without --npub and --vault") }
        // On a terminal each "-" is one share typed at the prompt; from a pipe only one may read it.
        if !TerminalPrompt.inputIsTerminal { try requireOneStandardInput(shares + [passphrase.passphraseFile, expected.vault]) }
    }

    func run() throws {
        let keyOutput = output.declaredRestoredKey
        let files = try CommandFiles(reads: shares.map { .init("share", $0) } + passphrase.declaredInputs + expected.declaredInputs,
                                     writes: [keyOutput], force: output.force)
        let combined = try ShareReader.combine(shares) { try passphrase.readForShares() }
        diagnostics.note("combined \(ShareReader.summary(combined, paths: shares))")
        // Shares combine under any passphrase into some key: a restore nothing proves is not
        // written by default (issue 44: typed shares under a wrong passphrase or none wrote
        // another key with exit 0).
        if !combined.checked, expected.npub == nil, expected.vault == nil, !unverified { throw VaultError.unprovenRestore() }
        try expected.confirm(combined.key, from: .shares,
                             checked: combined.checked ? "it is the key of the household the share sheets' check code names" : nil)
        try files.writer().write(keyOutput, secretLine(combined.key.nsec()))
    }
}

extension VaultError {
    /// Shares combined into a key that nothing proves: no check code came with them, and no
    /// public key or vault to compare with was given.
    static func unprovenRestore(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unprovenRestore, "nothing proves the restored key: no share came with its check code, and a missing or wrong passphrase restores another key; nothing was written",
                   hint: "give --npub (the public key printed on the share sheets) or --vault, or add the check code line the sheet prints (HVT-SHARE …) under each share's words; --unverified writes it unchecked",
                   file: file, line: line)
    }
}

extension VaultError.Code {
    /// A restore that nothing proves, refused by default.
    static let unprovenRestore = VaultError.Code(name: "unprovenRestore", category: .refused)
}
