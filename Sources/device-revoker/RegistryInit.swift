import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultRegistry

extension Registry {
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a registry (or bring an existing one's schema up to date).",
            discussion: """
            Examples:
              device-revoker registry init --db registry.sqlite
            """
        )
        @OptionGroup var database: Database

        func run() throws {
            _ = try CommandFiles(reads: [], writes: database.asOutput)
            _ = try database.open(.create)
            diagnostics.note("registry ready: \(database.db)")
        }
    }
}
