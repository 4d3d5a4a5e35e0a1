import Glibc
import VaultCore
import VaultFiles

/// The keys a command line names by file, held (``HeldSecrets``) before a refusal is said: a
/// refusal made before the command read its key (an option's value checked, an output's folder
/// missing, swift-argument-parser's own "the value '…' is invalid for --dpi") quoted a piece of
/// the key typed there, where the same text after the key was read was withheld (a hostile
/// trial, over every tool). Read only when a refusal is about to be said, only a regular file
/// no larger than a key file, never standard input, a FIFO or a key command; what does not
/// read as a key is passed over (the command's own reading says why, or already said it).
enum GivenKeyFiles {
    /// Every option that names a file holding a key a person gave, and one holding the 24
    /// words of a recovery code (held as the 32 bytes they spell).
    static let options: Set<String> = ["--key-file", "--new-key-file", "--vault-key-file", "--signer-key-file", "--master-key-file", codeOption]
    static let codeOption = "--code-file"

    static func holdForMessages(_ arguments: [String]) {
        let parents = paths(in: arguments).compactMap { hold($0.path, words: $0.option == codeOption) }
        guard !parents.isEmpty else { return }
        // And the secrets of the vaults named beside a parent key (each child's key, the wrap
        // key), as the command would have held them on opening its vault: a refusal of an
        // output's folder quoted a piece of a child's key before the vault was opened.
        for argument in arguments where !argument.hasPrefix("-") && isVaultFile(argument) {
            guard let bytes = try? InputFiles.read(argument, what: "vault") else { continue }
            for parent in parents { _ = try? Vault.open(bytes, with: .parentKey(parent)) }
        }
    }

    /// A regular file on this machine that begins as a vault does.
    private static func isVaultFile(_ path: String) -> Bool {
        guard !VaultLocation.isSpelledAsURL(path) else { return false }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= InputLimits.document else { return false }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: VaultEnvelope.magic.count)
        return head.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } == head.count && head == VaultEnvelope.magic
    }

    /// The files the options name, as `--key-file F` or `--key-file=F`, up to a `--`.
    static func paths(in arguments: [String]) -> [(option: String, path: String)] {
        var paths: [(option: String, path: String)] = []
        var index = arguments.startIndex
        while index < arguments.endIndex, arguments[index] != "--" {
            let argument = arguments[index]
            if options.contains(argument), index + 1 < arguments.endIndex {
                paths.append((argument, arguments[index + 1]))
                index += 2
                continue
            }
            if let equals = argument.firstIndex(of: "="), options.contains(String(argument[..<equals])) {
                paths.append((String(argument[..<equals]), String(argument[argument.index(after: equals)...])))
            }
            index += 1
        }
        return paths
    }

    /// Holds the key in `path` (`words`: a recovery code's); a key that reads as a parent key
    /// is returned.
    private static func hold(_ path: String, words: Bool) -> SecretKey? {
        guard path != "-", !VaultLocation.isSpelledAsURL(path) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= InputLimits.keyFile else { return nil }
        guard let contents = try? InputFiles.readSecret(path, what: "key file", diagnostics: Diagnostics(toolName: "", quiet: true)) else { return nil }
        if words {
            (try? BIP39.entropy(fromWords: contents))?.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
            return nil
        }
        // Read as a parent key (with the keys it gives a household), else as 64 hex (a vault
        // key, a master key): each is held as it is when its command reads it.
        if let key = try? SecretKey(parsing: contents, what: "") { return key }
        _ = try? SecretBytes.parsingHex(contents, byteCount: 32, what: "")
        return nil
    }
}
