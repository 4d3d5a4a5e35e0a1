import Glibc
import Synchronization
import VaultCore
import VaultFiles

/// The keys a command line names by file, held (``HeldSecrets``) before an error or a warning
/// is said: a refusal made before the command read its key (an option's value checked, an
/// output's folder missing, swift-argument-parser's own "the value '…' is invalid for --dpi")
/// quoted a piece of the key typed there, where the same text after the key was read was
/// withheld (a hostile trial, over every tool), and the warning that a key file can be read by
/// others named the file, itself named by a piece of the key. Read once a run, when its first
/// error or warning is about to be said, only a regular file no larger than a key file, never
/// standard input, a FIFO or a key command; what does not read as a key is passed over (the
/// command's own reading says why, or already said it).
enum GivenKeyFiles {
    /// How each option's file is read, as its command reads it.
    enum Holds { case parentKey, vaultKey, hexKey, recoveryCode }

    static let options: [String: Holds] = [
        "--key-file": .parentKey, "--new-key-file": .parentKey, "--signer-key-file": .parentKey,
        "--vault-key-file": .vaultKey, "--master-key-file": .hexKey, "--code-file": .recoveryCode,
    ]

    /// The most vaults a run opens to hold their secrets, and the most files it reads looking
    /// for them (a file that merely begins as a vault does is read, and counts only here).
    static let vaultsOpened = 4, filesRead = 16

    private static let held = Mutex(false)

    /// ``holdForMessages(_:)`` of this run's command line, the first time it is asked.
    static func holdOnce() {
        guard held.withLock({ done in defer { done = true }; return !done }) else { return }
        holdForMessages(Array(CommandLine.arguments.dropFirst()))
    }

    static func holdForMessages(_ arguments: [String]) {
        var access: [VaultAccess] = []
        for (holds, path) in paths(in: arguments) {
            if let given = hold(path, as: holds) { access.append(given) }
        }
        guard !access.isEmpty else { return }
        // And the secrets of the vaults named beside a key that opens them (each child's key,
        // the wrap key), as the command would have held them on opening its vault: a refusal
        // of an output's folder quoted a piece of a child's key before the vault was opened.
        var opened = 0
        for vault in values(in: arguments).lazy.filter({ AtomicFile.regularFile($0, beginsWith: VaultEnvelope.magic) }).prefix(filesRead) {
            guard opened < vaultsOpened else { return }
            // A household the command already opened is held: read again, it would only be work.
            guard let bytes = try? InputFiles.read(vault, what: "vault"),
                  let household = (try? VaultEnvelope(parsing: bytes))?.header.householdID, !HeldSecrets.holdsSecretFields(of: household) else { continue }
            if access.contains(where: { (try? Vault.open(bytes, with: $0)) != nil }) { opened += 1 }
        }
    }

    /// Every value the command line gives that may name a file: each argument that is no
    /// option, each `--option=value`'s value, and everything after `--` (`-v2.vault` there is a
    /// file; a trial's `--vault=h.vault` was never opened).
    static func values(in arguments: [String]) -> [String] {
        var values: [String] = [], afterSeparator = false
        for argument in arguments {
            if afterSeparator { values.append(argument); continue }
            if argument == "--" { afterSeparator = true; continue }
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                values.append(String(argument[argument.index(after: equals)...]))
            } else if !argument.hasPrefix("-") {
                values.append(argument)
            }
        }
        return values
    }

    /// The files the options name, as `--key-file F` or `--key-file=F`, up to a `--`.
    static func paths(in arguments: [String]) -> [(holds: Holds, path: String)] {
        var paths: [(holds: Holds, path: String)] = []
        var index = arguments.startIndex
        while index < arguments.endIndex, arguments[index] != "--" {
            let argument = arguments[index]
            if let holds = options[argument], index + 1 < arguments.endIndex {
                paths.append((holds, arguments[index + 1]))
                index += 2
                continue
            }
            if let equals = argument.firstIndex(of: "="), let holds = options[String(argument[..<equals])] {
                paths.append((holds, String(argument[argument.index(after: equals)...])))
            }
            index += 1
        }
        return paths
    }

    /// Holds the key in `path`, read as `holds` says; what opens a vault is returned.
    private static func hold(_ path: String, as holds: Holds) -> VaultAccess? {
        guard path != "-", !VaultLocation.isSpelledAsURL(path) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= InputLimits.keyFile else { return nil }
        // Quiet: the command's own reading warns of the file's mode, once.
        guard let contents = try? InputFiles.readSecret(path, what: "key file", diagnostics: Diagnostics(toolName: "", quiet: true)) else { return nil }
        switch holds {
        case .parentKey: return (try? SecretKey(parsing: contents, what: "")).map(VaultAccess.parentKey)
        case .vaultKey: return (try? VaultKey(parsing: contents, what: "")).map(VaultAccess.vaultKey)
        case .hexKey: _ = try? SecretBytes.parsingHex(contents, byteCount: 32, what: "")
        case .recoveryCode: (try? BIP39.entropy(fromWords: contents))?.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
        }
        return nil
    }
}
