import ArgumentParser
import CLISupport

let diagnostics = Diagnostics(toolName: "vault-tool")

@main
struct VaultTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault-tool",
        abstract: "Keys, sealing, opening, inspection and checks for a household's identity vault.",
        discussion: """
        Every input is a file or - for standard input; every output is -o FILE or standard output. \
        Secrets are read only from files, never from the command line.

        Exit codes: 0 ok, 1 I/O failure, 2 invalid input, 3 authentication or check failed, \
        4 refused for safety, 64 usage.

        A first session:
          vault-tool keygen -o parent.nsec
          vault-tool derive --key-file parent.nsec --device-id kitchen-ipad
          vault-tool seal --key-file parent.nsec -o household.vault household.json
          vault-tool inspect --key-file parent.nsec household.vault
          vault-tool check --key-file parent.nsec household.vault
        """,
        version: "0.1.0",
        subcommands: [Keygen.self, Derive.self, Seal.self, Open.self, Inspect.self, Check.self, Migrate.self, Census.self, Diff.self, Merge.self, SampleFleetCommand.self]
    )

    static func main() { ToolMain.run(Self.self) }
}

