import FoundationEssentials
import VaultCore

/// A trigger that keeps one of the registry's rules in the database itself, whoever writes to
/// it: the log's tables append-only, a revoked device out of conversations. Each engine writes
/// its own (their trigger languages differ) and says how its catalog shows one.
///
/// A guard dropped, disabled or rewritten by hand leaves the rule to each writer's good
/// behaviour: `init` then said "registry ready" and changed nothing (a hostile trial). Now no
/// command writes to a registry whose guards are not as it made them (exit 3, naming them), and
/// `init` puts them back and says which; `log --verify` names them too.
struct RegistryGuard: Sendable, Equatable {
    /// The trigger's name, and the table it is on.
    let name: String
    let table: String
    /// The statement that makes it (`CREATE TRIGGER …`), in the form the engine's catalog gives
    /// back, white space aside; empty for a trigger added by hand (``added(_:on:)``).
    let sql: String

    /// A trigger no version of the suite makes, on one of the log's tables: added by hand, it
    /// can drop the log's rows as they are written (`RAISE(IGNORE)`: a trial's revoke then
    /// logged nothing and verified). `init` drops it.
    static func added(_ name: String, on table: String) -> RegistryGuard { RegistryGuard(name: name, table: table, sql: "") }

    var isAdded: Bool { sql.isEmpty }

    /// The name as SQL quotes it (a name added by hand may hold anything).
    var quotedName: String { "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"" }

    /// The tables only the suite writes: every trigger on them is one of its guards.
    static let logTables: Set<String> = ["revocations", "batch_operations", "revocation_batches", "revocation_chain_start"]

    /// Whether two statements are the same, white space and case aside (a registry made by an
    /// older version of the suite may be indented otherwise; SQL's names have no case).
    static func sameStatement(_ a: String, _ b: String) -> Bool { words(a.lowercased()) == words(b.lowercased()) }

    private static func words(_ text: String) -> [Substring] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
    }

    /// The guards' names, for a message.
    static func names(_ guards: [RegistryGuard]) -> String {
        guards.map { "'\($0.name)' (on \($0.table)\($0.isAdded ? ", added by hand" : ""))" }.joined(separator: ", ")
    }
}

extension DeviceRegistry {
    /// On opening to write: every guard in place; where one is not, `init` (`.create`) puts it
    /// back and returns its name, and every other writer refuses before it changes anything.
    static func keepGuards(_ engine: any RegistryEngine, _ access: Access, registry: String) throws -> [RegistryGuard] {
        guard access != .readOnly else { return [] }
        let notInPlace = try engine.transaction(writing: false, retrying: true) { (try engine.guardsNotInPlace($0), false) }
        guard !notInPlace.isEmpty else { return [] }
        guard access == .create else { throw VaultError.registryGuardsNotInPlace(registry, RegistryGuard.names(notInPlace)) }
        return try engine.transaction(writing: true, retrying: true) { session in
            let again = try engine.guardsNotInPlace(session)
            try engine.restore(again, session)
            return (again, true)
        }
    }

    /// The guards `init` put back, having found them dropped, disabled or rewritten.
    public var restoredGuards: [String] { guardsKept.filter { !$0.isAdded }.map(\.name) }
    /// The triggers added by hand to the log's tables that `init` dropped.
    public var droppedTriggers: [String] { guardsKept.filter(\.isAdded).map(\.name) }

    /// The guards not as the registry made them (dropped, disabled or rewritten by hand): what
    /// `log --verify` reports.
    public func guardsNotInPlace() throws -> [String] {
        try read { try engine.guardsNotInPlace($0).map(\.name) }
    }
}

extension VaultError.Code {
    /// A guard of the registry (a trigger that keeps a rule) was dropped, disabled or rewritten.
    public static let registryGuardsNotInPlace = VaultError.Code(name: "registryGuardsNotInPlace", category: .authentication)
}

extension VaultError {
    /// A writer refused a registry whose guards are not as it made them.
    static func registryGuardsNotInPlace(_ name: String, _ guards: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryGuardsNotInPlace,
                   "the registry '\(name)' is missing guards that keep its rules (dropped, disabled or changed by hand): \(guards); nothing was changed",
                   hint: "run: device-revoker registry init \(ShellWord.option("--db", name)) (it puts them back), then 'registry log --verify' to check what was changed meanwhile",
                   file: file, line: line)
    }
}
