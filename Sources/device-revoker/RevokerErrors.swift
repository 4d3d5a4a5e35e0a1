import CLISupport
import VaultCore

/// What device-revoker refuses itself, beside the library's refusals (issue 44: one error model).
extension VaultError.Code {
    /// A list file, or an entry of one, that names no device, user or key the registry can hold.
    public static let unreadableListEntry = VaultError.Code(name: "unreadableListEntry", category: .invalidInput)
    /// A list file that holds recovery words or a share: twelve list words in a row.
    public static let listHoldsRecoveryWords = VaultError.Code(name: "listHoldsRecoveryWords", category: .invalidInput)
    /// A list file with no entry at all: cut short, or the wrong file.
    public static let emptyList = VaultError.Code(name: "emptyList", category: .invalidInput)
    /// A revocation that trips a guard rail; nothing was changed.
    public static let revocationRefused = VaultError.Code(name: "revocationRefused", category: .refused)
}

extension VaultError {
    /// `text` says the place and the entry, already quoted through ``QuotedInput``.
    static func notADeviceReference(_ text: String, hint: String? = nil, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unreadableListEntry, text, hint: hint, file: file, line: line)
    }

    static func listHoldsRecoveryWords(_ what: String, _ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.listHoldsRecoveryWords, "\(what) \(InputFiles.quotedName(path)) holds recovery words or a share (not shown: 12 or more list words), not entries to revoke".displaySafe,
                   hint: "give the list meant; a file of recovery words is a secret: keep it where only its owner can read it", file: file, line: line)
    }

    static func emptyList(_ what: String, _ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.emptyList, "\(what) \(InputFiles.quotedName(path)) lists nothing: it has only blank lines and comments".displaySafe,
                   hint: "check that the file is the one meant and was written completely; nothing was changed", file: file, line: line)
    }

    static func emptyDevicesFile(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.emptyList, "devices file \(FileNames.quoted(name)) lists no device", file: file, line: line)
    }

    /// `reasons`: every guard rail tripped, as this tool words them.
    static func revocationRefused(_ reasons: String, hint: String? = nil, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.revocationRefused, reasons, hint: hint, file: file, line: line)
    }
}
