import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultRegistry

extension Registry {
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Create a registry (or bring an existing one's schema up to date).",
            discussion: """
            --schema chooses the device table a new registry holds: catbird (seed 003: devices \
            with MLS identities and signature keys, members of conversations; the default) or \
            family-medical (seed 002: user_devices of UUIDs with a name, a type, first and last \
            seen). The registry remembers it: every later command just works. On a PostgreSQL \
            database that already has the app's table, init adds only what revocation needs. An \
            existing registry of the other schema is refused (exit 4). The registry's guards \
            (triggers that keep its log append-only and a revoked device out of conversations) \
            found dropped, disabled or changed by hand are put back, and named; no other \
            command writes to a registry without them (exit 3).

            Examples:
              device-revoker registry init --db registry.sqlite
              device-revoker registry init --db devices.sqlite --schema family-medical
              device-revoker registry init --schema family-medical \\
                --db 'host=/run/postgresql dbname=medical'
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("The device table of a new registry: catbird (the default) or family-medical.", valueName: "SCHEMA"))
        var schema: RegistrySchema?

        func run() throws {
            _ = try CommandFiles(reads: [], writes: database.asOutput)
            let registry = try database.open(.create, schema: schema)
            if !registry.restoredGuards.isEmpty {
                diagnostics.warning("put back the registry's guards \(registry.restoredGuardsShown), which had been dropped, disabled or changed by hand: run 'registry log --verify' to check what was changed meanwhile")
            }
            if !registry.droppedTriggers.isEmpty {
                diagnostics.warning("dropped what was added by hand to the registry's log: \(registry.droppedTriggersShown): run 'registry log --verify' to check what was changed meanwhile")
            }
            if !registry.tablesUnderRowSecurity.isEmpty {
                diagnostics.warning("row-level security applies to this role on \(registry.tablesUnderRowSecurity.joined(separator: ", ")): every revoke and import refuses until it connects as a role that bypasses it")
            }
            if let rules = registry.rulesShown {
                diagnostics.warning("the app's tables have rules that rewrite what a revocation or an import changes: \(rules); every revoke and import refuses until they are made triggers or dropped")
            }
            diagnostics.note("registry ready: \(database.db), \(registry.schema.title)")
        }
    }
}

extension RegistrySchema: ExpressibleByArgument {}
