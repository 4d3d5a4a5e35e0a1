import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultRegistry

struct Registry: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registry",
        abstract: "A server device registry in SQLite or PostgreSQL: import, revoke in bulk, members, rejoin plans, the log.",
        discussion: """
        The schema is the Catbird seed's user_devices and members, with revocation state and an \
        append-only revocations log (docs/device-registry.md), or Family Medical's user_devices \
        ('init --schema family-medical'). --db is a SQLite file or the \
        app's PostgreSQL database, as a libpq URI or key=value string; the PG* environment \
        variables, ~/.pgpass and service files work as in psql. A password is never given in --db.

        Examples:
          device-revoker registry init --db registry.sqlite
          device-revoker registry import --db registry.sqlite \\
            --devices devices.jsonl --members members.jsonl
          device-revoker registry devices --db registry.sqlite --user did:plc:josh
          device-revoker registry revoke --db registry.sqlite \\
            --not-seen-since 2025-01-01 --dry-run
          PGPASSFILE=~/.pgpass device-revoker registry revoke \\
            --db postgresql://operator@db.internal/chat --user did:plc:josh --dry-run
          device-revoker registry log --db 'host=/run/postgresql dbname=chat'
          device-revoker registry init --db devices.sqlite --schema family-medical
        """,
        subcommands: [Init.self, Import.self, Devices.self, Revoke.self, Members.self, RejoinPlan.self, Log.self]
    )

    struct Database: ParsableArguments {
        @Option(help: ArgumentHelp(
            "The registry: a SQLite file, or a PostgreSQL connection (postgresql://… or key=value …) without its password.",
            valueName: "DB"))
        var db: String

        /// Where --db points; a password inside it is a usage error, and so are `-` (a
        /// database is no stream: it became a file named `-`) and nothing.
        var location: RegistryLocation {
            get throws {
                guard db != "-" else { throw ValidationError("--db names the registry (a SQLite file or a PostgreSQL connection), which cannot be standard input or output") }
                guard !db.isEmpty else { throw ValidationError("--db is empty; give the registry's SQLite file or its PostgreSQL connection") }
                do {
                    return try RegistryLocation(parsing: db)
                } catch let error as VaultError where error.code == .passwordInConnection {
                    throw ValidationError("""
                        --db contains a password, which would sit in the shell history and in ps output; \
                        give it with PGPASSWORD, ~/.pgpass (PGPASSFILE) or a service file instead
                        """)
                } catch let error as VaultError where error.code == .badConnection {
                    throw ValidationError("--db: \(error.reason) (see https://www.postgresql.org/docs/current/libpq-connect.html)")
                }
            }
        }

        func validate() throws {
            // Reading a PostgreSQL connection loads libpq, which --help does not need; the run
            // reads it again when it opens the registry.
            guard !HelpRequest.mayBeAsked else { return }
            do {
                _ = try location
            } catch let error as VaultError where error.code.category == .unavailable {
                // libpq is loaded on use (issue 48); without it, or too old, the command stops
                // when it opens the registry, with exit 69 and the package to install, which
                // argument-parser would report from here as a plain failure (a trial: a libpq
                // without a function said "vaultError.libraryTooOld", exit 1).
            }
        }

        /// `refusingHiddenRows`: a reader that refuses row-level security itself (a writer's dry
        /// run, `log --verify`), which then says so once, not also a reader's warning (a trial:
        /// it printed both).
        func open(_ access: DeviceRegistry.Access, schema: RegistrySchema? = nil, refusingHiddenRows: Bool = false) throws -> DeviceRegistry {
            do {
                let registry = try DeviceRegistry(location: location, access: access, schema: schema)
                // A writer refuses; a reader says what it may not show.
                if access == .readOnly, !refusingHiddenRows, !registry.tablesUnderRowSecurity.isEmpty {
                    diagnostics.warning("row-level security applies to this role on \(registry.tablesUnderRowSecurity.joined(separator: ", ")): rows a policy hides from it are not shown")
                }
                return registry
            } catch let error as VaultError where error.code == .noRegistry {
                throw error.withContext(hint: "make one with: device-revoker registry init \(ShellWord.option("--db", db))")
            } catch let error as VaultError where error.code == .notARegistry && (try? location) != .sqlite(path: db) {
                throw error.withContext(hint: "make it one with: device-revoker registry init \(ShellWord.option("--db", db))")
            } catch let error as VaultError where error.code == .cannotConnect {
                throw error.withContext(hint: "check the server, and that the password is in PGPASSWORD, ~/.pgpass (PGPASSFILE) or a service file")
            }
        }

        private var sqlitePath: String? {
            if case .sqlite(let path) = try? location { path } else { nil }
        }

        /// SQLite's side files (``RegistryLocation/sideFiles``): no output may be one of them.
        var sideFiles: [FileSet.Input] {
            ((try? location)?.sideFiles ?? []).map { FileSet.Input($0.label, $0.path) }
        }

        /// The database as an input, for commands that only read it.
        var asInput: [FileSet.Input] { (sqlitePath.map { [FileSet.Input("--db", $0)] } ?? []) + sideFiles }

        /// The database as the output it is for commands that change it in place (a file only),
        /// with SQLite's side files, which such a command writes and deletes: no input may be one.
        var asOutput: [DeclaredOutput] {
            let database = sqlitePath.map { path in
                var output = DeclaredOutput("--db", path, kind: .text)
                output.mayBeStandardOutput = false
                output.isDatabase = true
                return [output]
            }
            return (database ?? []) + sideFiles.map {
                var sideFile = DeclaredOutput($0.label, $0.path, kind: .text)
                sideFile.isDatabase = true
                return sideFile
            }
        }
    }
}

/// A registry command's DATE option (`--not-seen-since`): its format as parseSince reads it,
/// and never after `now` (``DeviceRegistry/cutoffProblem(_:now:)``). Both are usage errors
/// (exit 64): the value is wrong on the command line, as a malformed date is.
func registryCutoff(_ text: String, option: String = "--not-seen-since", now: Timestamp) throws -> Timestamp {
    let cutoff = try parseSince(text)
    if let problem = DeviceRegistry.cutoffProblem(cutoff, now: now) { throw ValidationError("\(option) \(text) \(problem)") }
    return cutoff
}
