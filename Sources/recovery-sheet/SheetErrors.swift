import VaultCore

/// What recovery-sheet refuses itself, beside the library's refusals (issue 44: one error model).
extension VaultError.Code {
    /// A picture with no share code in it.
    public static let noShareCode = VaultError.Code(name: "noShareCode", category: .invalidInput)
    /// A share given as a file that is neither a picture we read nor words.
    public static let neitherPictureNorWords = VaultError.Code(name: "neitherPictureNorWords", category: .invalidInput)
    /// Shares that restore a secret of another length than a family key's.
    public static let sharesRestoreNoFamilyKey = VaultError.Code(name: "sharesRestoreNoFamilyKey", category: .invalidInput)
    /// More share holders named than sheets made.
    public static let moreHoldersThanSheets = VaultError.Code(name: "moreHoldersThanSheets", category: .invalidInput)
    /// A recovery code of another length than 24 words.
    public static let recoveryCodeLength = VaultError.Code(name: "recoveryCodeLength", category: .invalidInput)
    /// A sheet's format that its name, --format or standard output contradict or leave open.
    public static let sheetFormat = VaultError.Code(name: "sheetFormat", category: .usage)
    /// An empty passphrase file.
    public static let emptyPassphraseFile = VaultError.Code(name: "emptyPassphraseFile", category: .invalidInput)
    /// A --language the sheets have no wording for.
    public static let noWording = VaultError.Code(name: "noWording", category: .usage)
    /// The PDF reader's internal command run other than by the tool.
    public static let internalCommand = VaultError.Code(name: "internalCommand", category: .usage)
    /// A restored key that is not the one expected (--npub, --key-file, --vault).
    public static let restoredKeyMismatch = VaultError.Code(name: "restoredKeyMismatch", category: .authentication)
    /// A share checked alone that carries no check code (a typed one).
    public static let shareWithoutCheckCode = VaultError.Code(name: "shareWithoutCheckCode", category: .invalidInput)
}

extension VaultError {
    static func noShareCode(in name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noShareCode, "no share code found in the picture '\(name)'",
                   hint: "photograph the whole sheet, flat and evenly lit, or give - in its place and type the share's words at the prompt", file: file, line: line)
    }

    static func neitherPictureNorWords(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.neitherPictureNorWords, "\(FileNames.quoted(name)) is neither a PNG nor a JPEG picture, nor a file of share words",
                   hint: "save the photo as JPEG (on a phone: share it as JPEG, or take a screenshot), or give - in its place and type the share's words at the prompt",
                   file: file, line: line)
    }

    static func sharesRestoreNoFamilyKey(byteCount: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.sharesRestoreNoFamilyKey, "the shares restore a \(byteCount)-byte secret, not a family key (32 bytes)", file: file, line: line)
    }

    static func moreHoldersThanSheets(_ holders: Int, _ sheets: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.moreHoldersThanSheets, "\(holders) holders named for \(sheets) sheets", file: file, line: line)
    }

    static func recoveryCodeLength(words: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.recoveryCodeLength, "a recovery code is 24 words; this one has \(words)", file: file, line: line)
    }

    /// `text` names the options and names that leave the format contradicted or open.
    static func sheetFormat(_ text: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.sheetFormat, text, file: file, line: line)
    }

    static func emptyPassphraseFile(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.emptyPassphraseFile, "passphrase file \(FileNames.quoted(name)) is empty", file: file, line: line)
    }

    static func noWording(for language: String, languages: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noWording, "no wording for language '\(language)'", hint: "use one of: \(languages.joined(separator: ", "))", file: file, line: line)
    }

    static func internalCommandRunByHand(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.internalCommand, "_read-pdf is internal to recovery-sheet; it writes only into a pipe of the tool", file: file, line: line)
    }

    /// `text` names what was restored and what it was compared with.
    static func restoredKeyMismatch(_ text: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.restoredKeyMismatch, text, file: file, line: line)
    }

    static func shareWithoutCheckCode(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.shareWithoutCheckCode, "\(FileNames.quoted(name)) has no check code (a typed share has none)",
                   hint: "check a share sheet's picture, or verify enough shares together with --shares", file: file, line: line)
    }
}
