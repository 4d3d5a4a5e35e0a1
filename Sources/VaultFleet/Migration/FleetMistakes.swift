import FoundationEssentials
import Glibc
import VaultCore

/// The mistakes that used to let a fleet run pass having done nothing (issue 38): a key folder
/// mounted wrong, a prefix mistyped. Each is refused before the run lists, writes or journals
/// anything, so correcting the command costs nothing.
public enum VaultKeyFolder {
    /// The name of a household's key file in the folder: `<household id>.vaultkey`, the id in
    /// lowercase hex, as `derive --vault-key-out` writes it and as runs look it up.
    public static func fileName(of household: HouseholdID) -> String { household.hex + ".vaultkey" }

    /// Refuses a folder that is missing, not a folder, cannot be listed, is empty, or holds no
    /// `<household id>.vaultkey` file: every vault would be `no-key`, and the run would pass
    /// having opened nothing (a Kubernetes Secret mounted at the wrong path, or empty). A
    /// folder that holds keys, none of them this fleet's, is told apart later, by the run's
    /// outcome (``VaultError/noKeyForAnyVault(_:vaults:)``).
    public static func require(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let failure = errno
            throw VaultError.keyFolderUnusable(path, failure == ENOENT ? "does not exist" : "cannot be read (\(ErrnoText.of(failure)))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw VaultError.keyFolderUnusable(path, "is not a folder") }
        guard let directory = opendir(path) else {
            let failure = errno
            throw VaultError.keyFolderUnusable(path, "cannot be read (\(ErrnoText.of(failure)))")
        }
        defer { closedir(directory) }
        var others = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            // A Secret's volume holds `..data` and a dated folder beside its files' links.
            guard !name.hasPrefix(".") else { continue }
            if isKeyFileName(name) { return }
            others += 1
        }
        throw VaultError.keyFolderUnusable(path, others == 0 ? "is empty" : "holds no <household id>.vaultkey file (\(others) other entries)")
    }

    /// `<64 lowercase hex>.vaultkey`.
    static func isKeyFileName(_ name: String) -> Bool {
        name.hasSuffix(".vaultkey") && Hex.isLowercase(String(name.dropLast(".vaultkey".count)), byteCount: 32)
    }
}

extension VaultError.Code {
    /// The key folder a fleet run reads is missing, unreadable, empty or holds no vault key: the
    /// command names the wrong folder.
    public static let keyFolderUnusable = VaultError.Code(name: "keyFolderUnusable", category: .usage)
    /// The prefix, inventory or manifest of a run lists no vault: a mistyped name, most likely
    /// (a usage error, so a job engine stops retrying the same command).
    public static let nothingListed = VaultError.Code(name: "nothingListed", category: .usage)
    /// Vaults were found, and none had a key here: the keys given are not this fleet's.
    public static let noKeyForAnyVault = VaultError.Code(name: "noKeyForAnyVault", category: .noKeys)
}

extension VaultError {
    static func keyFolderUnusable(_ path: String, _ problem: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyFolderUnusable, "the vault-key folder '\(path)' \(problem): expected <household id>.vaultkey files (64 lowercase hex digits each); nothing was read",
                   file: file, line: line)
    }

    /// `finding` says what was listed: "no *.vault object under s3://b/vaults/".
    static func nothingListed(_ finding: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.nothingListed, "\(finding): nothing to do, and nothing was written", file: file, line: line)
    }

    /// No vault of a run had its key here; `where` names the keys ("the vault-key folder 'keys'").
    public static func noKeyForAnyVault(_ keys: String, vaults: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noKeyForAnyVault, "none of the \(vaults) vaults has its key in \(keys): no vault was opened", file: file, line: line)
    }
}
