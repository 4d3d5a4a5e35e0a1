import ArgumentParser
import CLISupport
import VaultCore

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a new random parent secret key.",
        discussion: """
        Writes the key as nsec1… and a newline. A file is created with mode 0600 and an existing \
        file is never overwritten. The public key (npub) goes to standard error.

        Examples:
          vault-tool keygen -o parent.nsec
          vault-tool keygen --force          # show the key on this terminal
        """
    )

    @OptionGroup var output: OutputOptions

    func run() throws {
        let keyOutput = output.declared(.secret, exclusive: true)
        let files = try CommandFiles(reads: [], writes: [keyOutput], force: output.force)
        let key = try SecretKey.generate()
        let nsec = try key.nsec()
        let line = try SecretBytes(count: nsec.count + 1) { buffer in
            nsec.withUnsafeBytes { buffer.copyMemory(from: $0) }
            buffer[nsec.count] = 0x0a
        }
        try files.writer().write(keyOutput, line)
        diagnostics.note("public key: \(key.publicKey.npub)")
    }
}
