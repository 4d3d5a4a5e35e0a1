import Glibc
import VaultCore
import VaultFiles

// The codes and factories of the failures VaultRegistry raises: the registry's database, its
// connection and its imports. Each is made here, beside the other layers' own (VaultCore's in
// VaultError.swift, VaultFleet's in FleetErrors.swift).

extension VaultError.Code {
    /// An imported row is already in the registry.
    public static let alreadyImported = VaultError.Code(name: "alreadyImported", category: .invalidInput)
    /// The registry has no such device, conversation or batch.
    public static let notInRegistry = VaultError.Code(name: "notInRegistry", category: .invalidInput)
    /// A revocation batch id is already in the log: a second batch under it would mix two.
    public static let batchIdTaken = VaultError.Code(name: "batchIdTaken", category: .refused)
    /// There is no file at the registry's path. Making one is the next step.
    public static let noRegistry = VaultError.Code(name: "noRegistry", category: .operational)
    /// A SQLite registry left mid-transaction that this user may not roll back.
    public static let registryNeedsRollback = VaultError.Code(name: "registryNeedsRollback", category: .operational)
    /// The file is another application's database.
    public static let notARegistry = VaultError.Code(name: "notARegistry", category: .invalidInput)
    /// A PostgreSQL database whose own `user_devices` or `members` differ from what the registry needs.
    public static let incompatibleRegistry = VaultError.Code(name: "incompatibleRegistry", category: .invalidInput)
    /// A registry connection string that carries a password.
    public static let passwordInConnection = VaultError.Code(name: "passwordInConnection", category: .invalidInput)
    /// A registry connection string libpq cannot parse.
    public static let badConnection = VaultError.Code(name: "badConnection", category: .invalidInput)
    /// The registry's PostgreSQL server could not be reached or refused the login.
    public static let cannotConnect = VaultError.Code(name: "cannotConnect", category: .operational)
    /// The PostgreSQL password file can be read or written by others: libpq would not use it.
    public static let passwordFileOpenToOthers = VaultError.Code(name: "passwordFileOpenToOthers", category: .configuration)
    /// PostgreSQL (the server, or libpq) failed where the registry has no more precise outcome
    /// to name: a statement refused, a connection lost. libpq's own code, as SQLite's is
    /// `sqliteFailure`.
    public static let postgresFailure = VaultError.Code(name: "postgresFailure", category: .operational)
    /// Another session held what the command needed past the minute it waits (PostgreSQL's
    /// lock timeout): run again.
    public static let registryBusy = VaultError.Code(name: "registryBusy", category: .temporary)
    /// Another session's change at the same moment stopped the command (a deadlock, a
    /// serialization failure) through every retry it makes: run again.
    public static let registryConflict = VaultError.Code(name: "registryConflict", category: .temporary)
    /// The role connecting lacks a privilege the command needs.
    public static let registryPrivilegeMissing = VaultError.Code(name: "registryPrivilegeMissing", category: .configuration)
    /// The connection may only read (a standby, `default_transaction_read_only`): even a dry run
    /// writes its temporary tables.
    public static let registryReadOnlyConnection = VaultError.Code(name: "registryReadOnlyConnection", category: .configuration)
    /// The connection's search_path names no schema that exists, so nothing can be made in
    /// one (`init`, or a dry run's temporary tables are found, but the registry's are not).
    public static let registryNoSchemaSelected = VaultError.Code(name: "registryNoSchemaSelected", category: .configuration)
    /// The server cancelled a statement (the role's `statement_timeout`, or an operator).
    public static let registryStatementCancelled = VaultError.Code(name: "registryStatementCancelled", category: .temporary)
    /// `init --schema` named another schema than the registry's: a registry keeps the one it
    /// was made with.
    public static let registryHasAnotherSchema = VaultError.Code(name: "registryHasAnotherSchema", category: .refused)
    /// What a registry's schema does not have: Family Medical's conversations, MLS
    /// operations or signature keys.
    public static let notInSchema = VaultError.Code(name: "notInSchema", category: .refused)
    /// A user or device id that the registry's schema cannot hold.
    public static let notARegistryID = VaultError.Code(name: "notARegistryID", category: .invalidInput)
    /// A revoke by name found no device of that name (or no such user): refused, as an entry
    /// the registry does not have is.
    public static let noDeviceNamed = VaultError.Code(name: "noDeviceNamed", category: .refused)
    /// A registry that records the migrations of both schemas: edited by hand.
    public static let registryOfTwoSchemas = VaultError.Code(name: "registryOfTwoSchemas", category: .authentication)
    /// A device, user or name that matches more than one device, where one is meant.
    public static let ambiguousRegistryDevice = VaultError.Code(name: "ambiguousRegistryDevice", category: .refused)
}

extension VaultError {
    /// A device, conversation or batch the registry does not have, as "device X".
    public static func notInRegistry(_ what: String, registry: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notInRegistry, "the registry '\(registry)' has no \(what)", file: file, line: line)
    }

    /// A SQLite registry beside a hot journal, met by a command that only reads: it rolls
    /// nothing back.
    public static func registryNeedsRollback(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryNeedsRollback,
                   "the registry '\(path)' has an unfinished transaction in '\(path)-journal' (a run was killed, or the journal is another copy's), "
                   + "and a command that only reads rolls nothing back; nothing was read or changed",
                   hint: "if the registry was restored from a backup, that journal is not its own: move it away; "
                   + "otherwise, as a user who may write the registry, run: sqlite3 \(ShellWord.path(path)) 'SELECT count(*) FROM sqlite_master' "
                   + "(SQLite rolls the transaction back), or any command that writes, then this command again",
                   file: file, line: line)
    }

    /// Nothing at the registry's path.
    public static func noRegistry(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noRegistry, "no registry at '\(path)'", file: file, line: line)
    }

    /// A database that lacks the registry's `missing` tables; `empty` when it has no table at
    /// all, so it can become one.
    public static func notARegistry(_ path: String, missing: [String], empty: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notARegistry, "'\(path)' is not a device registry (it lacks \(missing.joined(separator: ", ")))",
                   hint: empty ? "the database is empty: initialise it as a registry first"
                       : "a registry is a database `device-revoker registry init` made (Catbird's, or Family Medical's with --schema family-medical), which its migrations table names; "
                       + "the app's own table is imported into one: device-revoker registry import --db NEW --devices ROWS.jsonl",
                   file: file, line: line)
    }

    /// A batch id already used by an earlier revocation.
    public static func batchIdTaken(_ id: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.batchIdTaken, "batch id '\(id)' is already in the revocation log; nothing was changed", file: file, line: line)
    }

    /// A PostgreSQL database whose tables differ from the registry's, each difference a sentence.
    public static func incompatibleRegistry(_ name: String, differences: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.incompatibleRegistry, "the database '\(name)' cannot become a registry: \(differences.joined(separator: "; ")); nothing was changed",
                   file: file, line: line)
    }

    /// A password inside a connection string: it would sit in the shell history and in `ps`.
    /// The message never repeats the string.
    public static func passwordInConnection(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.passwordInConnection, "the connection string contains a password", file: file, line: line)
    }

    /// A connection string libpq cannot parse. libpq's reason is left out: it may quote the
    /// string, password and all.
    public static func badConnection(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badConnection, "the connection string cannot be read as a libpq URI or key=value list", file: file, line: line)
    }

    /// A password file libpq would pass over with its own unescaped warning: open to others.
    static func passwordFileOpenToOthers(_ path: String, mode: mode_t, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.passwordFileOpenToOthers, "the PostgreSQL password file \(FileNames.quoted(path)) is open to others (mode \(String(mode, radix: 8))), so libpq would not use it; nothing was connected to",
                   hint: "run: chmod 600 \(ShellWord.path(path))", file: file, line: line)
    }

    /// No connection to the registry's server, with libpq's reason.

    public static func cannotConnect(_ name: String, _ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cannotConnect, "cannot connect to the registry '\(name)': \(reason)", file: file, line: line)
    }

    static func registryBusy(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryBusy, "the registry '\(name)' was held by another session for the minute a command waits; nothing was changed",
                   hint: "run it again when that session is done (pg_locks shows who holds what)", file: file, line: line)
    }

    static func registryConflict(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryConflict, "the registry '\(name)' was changed by another session at the same moment (a deadlock or a conflict the server broke); nothing was changed",
                   hint: "run it again", file: file, line: line)
    }

    /// The server's own words name the table or schema ("permission denied for table …").
    static func registryPrivilegeMissing(_ name: String, _ message: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryPrivilegeMissing, "the role connecting to the registry '\(name)' lacks a privilege the command needs (\(message)); nothing was changed",
                   hint: "grant it what docs/device-registry.md lists under \"Role setup\", or connect as a role that has it", file: file, line: line)
    }

    static func registryReadOnlyConnection(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryReadOnlyConnection, "the registry '\(name)' may only be read on this connection (a standby, or default_transaction_read_only for the role); nothing was changed",
                   hint: "connect to the primary, as a role that may write (a dry run writes its temporary tables too)", file: file, line: line)
    }

    static func registryNoSchemaSelected(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryNoSchemaSelected, "the registry '\(name)' has no schema to make its tables in: the connection's search_path names none that exists; nothing was changed",
                   hint: "see it with SHOW search_path; set it to the registry's schema (ALTER ROLE … SET search_path = public, or options=-csearch_path%3Dpublic in the connection URI)",
                   file: file, line: line)
    }

    static func registryStatementCancelled(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryStatementCancelled, "the registry '\(name)' cancelled a statement of the command (the role's statement_timeout, or an operator); nothing was changed",
                   hint: "run it again; if it is cancelled again, raise the role's statement_timeout (SHOW statement_timeout)", file: file, line: line)
    }

    /// PostgreSQL's failure, in its own words and with its SQLSTATE.
    static func postgresFailure(_ name: String, _ failure: PostgresClient.Failure, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.postgresFailure, "the registry '\(name)': \(failure.message) (SQLSTATE \(failure.sqlState))", file: file, line: line)
    }

    /// A registry whose migrations name both schemas: no tool made it so.
    static func registryOfTwoSchemas(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryOfTwoSchemas, "the registry '\(name)' records the migrations of both Catbird's and Family Medical's device tables: it was changed by hand; nothing was changed",
                   file: file, line: line)
    }

    /// `init --schema asked` on a registry of another schema.
    static func registryHasAnotherSchema(_ name: String, has: RegistrySchema, asked: RegistrySchema, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryHasAnotherSchema, "the registry '\(name)' holds \(has.title), not \(asked.title); nothing was changed",
                   hint: "leave out --schema to bring it up to date as it is", file: file, line: line)
    }

    /// Something only another schema's registry has (`what`: "conversations", "signature keys").
    public static func notInSchema(_ what: String, _ schema: RegistrySchema, registry: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notInSchema, "the registry '\(registry)' holds \(schema.title), which has no \(what)", file: file, line: line)
    }

    /// An id the registry's schema cannot hold (Family Medical's are UUIDs); `what` is "user"
    /// or "device", `text` the id as given (quoted through ``QuotedInput``).
    static func notARegistryID(_ what: String, _ text: String, _ schema: RegistrySchema, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.notARegistryID, "the \(what) id \(QuotedInput(text)) is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), as the ids of \(schema.title) are",
                   file: file, line: line)
    }

    /// No device of `user` is called `name`; `names` are the ones its devices have.
    static func noDeviceNamed(_ name: String, user: String, names: [String], registry: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noDeviceNamed, names.isEmpty ? "the registry '\(registry)' has no device of user \(QuotedInput(user)); nothing was changed"
                   : "user \(QuotedInput(user)) has no device named \(QuotedInput(name)) (its devices are named \(names.map { "\(QuotedInput($0))" }.joined(separator: ", "))); nothing was changed",
                   file: file, line: line)
    }

    /// A name several devices have, where one is meant: each with what tells it apart.
    static func ambiguousRegistryDevice(_ name: String, _ devices: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.ambiguousRegistryDevice, "\(devices.count) devices are named \(QuotedInput(name)): \(devices.joined(separator: "; ")); nothing was changed",
                   hint: "give the one meant with --device USER#DEVICE", file: file, line: line)
    }

    /// An imported row the registry already has.
    public static func alreadyImported(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.alreadyImported, "the registry already has this device or membership; nothing was imported", file: file, line: line)
    }
}
