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
    /// back, white space aside; empty for a trigger added by hand (``added(_:)``).
    let sql: String
    /// The body of the function it calls, where the engine's triggers call one (PostgreSQL's
    /// PL/pgSQL, kept by the catalog as given); empty on SQLite.
    var functionBody = ""
    /// The table it is on where that is a partition or child of `table` (PostgreSQL's name for
    /// it, quoted and qualified as needed), for dropping it there.
    var relation: String? = nil
    /// A rule (PostgreSQL's `CREATE RULE`), not a trigger: only ever one added by hand.
    var isRule = false

    /// A trigger no version of the suite makes, on one of the log's tables: added by hand, it
    /// can drop the log's rows as they are written (`RAISE(IGNORE)`: a trial's revoke then
    /// logged nothing and verified). `init` drops it.
    static func added(_ trigger: CatalogTrigger) -> RegistryGuard {
        RegistryGuard(name: trigger.name, table: trigger.table, sql: "", relation: trigger.relation, isRule: trigger.isRule)
    }

    var isAdded: Bool { sql.isEmpty }

    /// The name as SQL quotes it (a name added by hand may hold anything).
    var quotedName: String { Self.quoted(name) }

    /// A name as SQL quotes it: a table's too, whose case PostgreSQL keeps (a trial: `"Revocations"`
    /// unquoted named the registry's own table, and the rule on it stayed).
    static func quoted(_ name: String) -> String { "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"" }

    /// The tables only the suite writes: every trigger on them is one of its guards.
    static let logTables: Set<String> = ["revocations", "batch_operations", "revocation_batches", "revocation_chain_start"]
    /// Those a revocation writes (the chain's start only `init` does: the operator's role may
    /// only read it).
    static let logTablesWritten = logTables.subtracting(["revocation_chain_start"])
    /// The app's tables the registry's writers change: Family Medical's has no `members` (a
    /// table of that name is another app's).
    static func appTables(of schema: RegistrySchema) -> Set<String> {
        schema == .catbird ? ["user_devices", "members"] : ["user_devices"]
    }

    /// A schema's guards among an engine's: Family Medical's registry has no conversations to
    /// keep a revoked device out of.
    static func of(_ schema: RegistrySchema, among all: [RegistryGuard]) -> [RegistryGuard] {
        schema == .catbird ? all : all.filter { $0.table != "members" }
    }

    /// The statements that make a table's guards, for its migration.
    static func statements(on table: String, among all: [RegistryGuard]) -> String {
        all.filter { $0.table == table }.map { $0.sql + ";" }.joined(separator: "\n")
    }

    /// Whether two statements are the same, white space and case aside (a registry made by an
    /// older version of the suite may be indented otherwise; SQL's names have no case). Text
    /// in single quotes keeps its case: it is data, and a guard's `GLOB '[0-9a-f]…'` made again
    /// as `'[0-9A-F]…'` would refuse every id it should let through (a review).
    static func sameStatement(_ a: String, _ b: String) -> Bool { words(foldingNames(a)) == words(foldingNames(b)) }

    private static func words(_ text: String) -> [Substring] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
    }

    /// The statement in lower case outside its quoted text.
    private static func foldingNames(_ statement: String) -> String {
        var folded = "", quoted = false
        for character in statement {
            if character == "'" { quoted.toggle() }
            folded.append(quoted ? String(character) : character.lowercased())
        }
        return folded
    }

    /// The guards, for a message: each name as SQL quotes it, so that no name can read as more
    /// than one (a hostile trial named a trigger `a' (on revocations), 'revocations_are…`),
    /// and where it is.
    static func names(_ guards: [RegistryGuard], saying added: Bool = true) -> String {
        guards.map { "\($0.shown)\(added && $0.isAdded ? " (added by hand)" : "")" }.joined(separator: ", ")
    }

    /// `"name" on table`, or `"name" on partition, part of table`; a name longer than an input
    /// is quoted (``QuotedInput/maximumCharacters``) is cut there: SQLite's have no bound.
    var shown: String {
        let name = quotedName.count > QuotedInput.maximumCharacters ? String(quotedName.prefix(QuotedInput.maximumCharacters)) + "…" : quotedName
        return "\(isRule ? "rule " : "")\(name) on \(relation.map { "\($0), part of " } ?? "")\(table)"
    }
}

/// A trigger as an engine's catalog shows it: the form ``RegistryGuard`` is compared in.
struct CatalogTrigger {
    /// Its name, and the table whose rows it fires on: the one it is on, or the one above the
    /// partition or child table it is on (PostgreSQL).
    let name, table: String
    /// The partition or child table it is on, as the engine names it for a statement; nil when
    /// it is on `table` itself (always on SQLite).
    let relation: String?
    /// It fires on every row of its table (SQLite's always do; PostgreSQL's may be disabled,
    /// on the table or on one of its partitions): what a guard must do.
    let enabled: Bool
    /// It fires on some rows of its table, on one partition at least: what a trigger of the
    /// app's needs to be watched (a hostile trial disabled one on one partition, and the
    /// revoke watched it nowhere).
    let firesSomewhere: Bool
    /// Its statement, as the catalog gives it back, and the body of the function it calls.
    let definition, functionBody: String
    /// A rule (PostgreSQL's `CREATE RULE … DO INSTEAD NOTHING`, `DO ALSO …`), which rewrites a
    /// statement on its table before it runs, not a trigger; `rewritesWrites` when it rewrites
    /// an INSERT or an UPDATE, the statements the registry's writers run on the app's tables. A
    /// rule on a partition or child table is not applied to a statement on its table.
    var isRule = false, rewritesWrites = false
}

/// What refuses every writer of a registry, as its catalog shows it
/// (``RegistryEngine/catalogForWriting(_:)``).
struct WritersCatalog {
    /// Guards dropped, disabled or rewritten, and triggers or rules added to the log's tables.
    var guardsNotInPlace: [RegistryGuard] = []
    /// The app's rules that rewrite the writers' INSERT or UPDATE.
    var rules: [RegistryGuard] = []
    /// The tables row-level security applies to for the connecting role.
    var rowSecurity: [String] = []

    /// Refuses as every writer does, the first found first; `work` says what the refusal
    /// stops (a change, or only a dry run's promise of one).
    func refuse(registry: String, work: RegistryRefusedWork = .change) throws {
        guard guardsNotInPlace.isEmpty else { throw VaultError.registryGuardsNotInPlace(registry, RegistryGuard.names(guardsNotInPlace), refusing: work) }
        guard rules.isEmpty else { throw VaultError.registryRulesRewriteWrites(registry, RegistryGuard.names(rules, saying: false), refusing: work) }
        guard rowSecurity.isEmpty else { throw VaultError.registryUnderRowSecurity(registry, rowSecurity, refusing: work) }
    }
}

/// What a refusal of the registry as it stands (guards not in place, rules, row-level
/// security) stops, which its message ends by saying: a writer's change ("nothing was
/// changed"), a dry run's (whose warning says only that the real run would be refused), or a
/// reader's verdict on the log (`log --verify`, which changes nothing either way).
enum RegistryRefusedWork: Sendable {
    case change, dryRun, verdict

    var ending: String {
        switch self {
        case .change: "; nothing was changed"
        case .dryRun: ""
        case .verdict: "; no verdict is given on the log"
        }
    }
}

extension RegistryEngine {
    /// The guards not as the registry made them: each missing, disabled or defined otherwise,
    /// and every trigger added by hand to a log table. A guard is known by its name on its own
    /// table, names compared as the engine compares them (``RegistryDialect/namesHaveNoCase``):
    /// a trigger of the same name elsewhere, or on a partition of its table, is not one.
    func guardsNotInPlace(_ session: RegistrySession) throws -> [RegistryGuard] {
        try guardsNotInPlace(in: catalogTriggers(session))
    }

    private func guardsNotInPlace(in catalog: [CatalogTrigger]) -> [RegistryGuard] {
        let found = Dictionary(catalog.filter { $0.relation == nil && !$0.isRule }.map { (place($0.name, $0.table), $0) }, uniquingKeysWith: { first, _ in first })
        let loose = guards.filter { guardian in
            guard let trigger = found[place(guardian.name, guardian.table)], trigger.enabled else { return true }
            return !RegistryGuard.sameStatement(trigger.definition, guardian.sql) || !RegistryGuard.sameStatement(trigger.functionBody, guardian.functionBody)
        }
        let added = catalog.filter { RegistryGuard.logTables.contains(foldedName($0.table)) && !isGuard($0) }
        return loose + added.map(RegistryGuard.added)
    }

    /// What a writer finds before it changes anything, in one transaction: the guards not in
    /// place and the rules on the app's tables that rewrite its writes (one read of the
    /// catalog), and the tables it changes that row-level security applies to for its role.
    func catalogForWriting(_ session: RegistrySession) throws -> WritersCatalog {
        let catalog = try catalogTriggers(session)
        return WritersCatalog(guardsNotInPlace: guardsNotInPlace(in: catalog), rules: rulesRewritingWrites(in: catalog),
                              rowSecurity: try tablesUnderRowSecurity(session))
    }

    /// The registry's tables (the app's and the log's) row-level security applies to for the
    /// connecting role: a policy may hide their rows from it or keep its changes from them.
    func tablesUnderRowSecurity(_ session: RegistrySession) throws -> [String] {
        guard let query = dialect.tablesUnderRowSecurity else { return [] }
        let tables = RegistryGuard.appTables(of: schema).union(RegistryGuard.logTables)
        return try session.strings(query, []).filter(tables.contains).sorted()
    }

    /// The rules on the app's tables themselves that rewrite an INSERT or an UPDATE: one could
    /// keep a revoked device active (`DO INSTEAD NOTHING`) unmeasured, and PostgreSQL refuses
    /// the statements that select by changing (`WITH … UPDATE … RETURNING`) and import (`ON
    /// CONFLICT`) on such a table (a trial: the revoke stopped with the server's raw error),
    /// the latter even when the rule is disabled. They are the app's: no command drops them.
    private func rulesRewritingWrites(in catalog: [CatalogTrigger]) -> [RegistryGuard] {
        catalog.filter { $0.isRule && $0.rewritesWrites && $0.relation == nil && RegistryGuard.appTables(of: schema).contains(foldedName($0.table)) }
            .map(RegistryGuard.added)
    }

    /// The triggers on `tables`, or on their partitions, that fire on some of their rows and
    /// are not the registry's guards (the app's own, or added by hand), each as a message
    /// names it (``RegistryGuard/shown``). Rules are not among them: no writer runs beside one
    /// (``catalogForWriting(_:)``).
    func triggersNotOurs(on tables: Set<String>, _ session: RegistrySession) throws -> [String] {
        try catalogTriggers(session).filter { !$0.isRule && $0.firesSomewhere && tables.contains(foldedName($0.table)) && !isGuard($0) }
            .map { RegistryGuard.added($0).shown }
    }

    private func isGuard(_ trigger: CatalogTrigger) -> Bool {
        !trigger.isRule && trigger.relation == nil && guards.contains { place($0.name, $0.table) == place(trigger.name, trigger.table) }
    }

    /// A trigger's name on its table, as the engine tells names apart.
    private func place(_ name: String, _ table: String) -> String {
        foldedName(name) + "\u{0}" + foldedName(table)
    }

    /// A name as the engine tells names apart: PostgreSQL's `"Revocations"` is another table
    /// than the registry's `revocations` (a trial: a rule on it refused every writer).
    private func foldedName(_ name: String) -> String {
        dialect.namesHaveNoCase ? name.lowercased() : name
    }
}

extension DeviceRegistry {
    /// On opening to write: every guard in place; where one is not, `init` (`.create`) puts it
    /// back and returns its name, and every other writer refuses before it changes anything.
    /// Rules on the app's tables that rewrite its writes refuse every writer too; `init` leaves
    /// them (they are the app's) and returns them to be named. So does row-level security that
    /// applies to the connecting role on a table the writers change: a policy may hide rows from
    /// a selection (a revoked device left in a hidden conversation), keep an UPDATE from rows it
    /// reads (a batch selected `FOR UPDATE` short of the devices asked for, an upsert reported
    /// and not made), refuse a row with the server's raw error, or hide the log from its own
    /// chain (a trial found each).
    /// A reader learns only the tables row-level security applies to (what it shows, or checks,
    /// may lack rows a policy hides), at the cost of one query and only on PostgreSQL.
    static func keepGuards(_ engine: any RegistryEngine, _ access: Access, registry: String) throws -> Found {
        guard access != .readOnly else {
            // SQLite has no row-level security: no transaction opened to ask.
            guard engine.dialect.tablesUnderRowSecurity != nil else { return Found() }
            return Found(catalog: WritersCatalog(rowSecurity: try engine.transaction(writing: false, retrying: true) { (try engine.tablesUnderRowSecurity($0), false) }))
        }
        let catalog = try engine.transaction(writing: false, retrying: true) { (try engine.catalogForWriting($0), false) }
        guard access == .create else {
            try catalog.refuse(registry: registry)
            return Found()
        }
        guard !catalog.guardsNotInPlace.isEmpty else { return Found(catalog: catalog) }
        let kept = try engine.transaction(writing: true, retrying: true) { session in
            let again = try engine.guardsNotInPlace(session)
            try engine.restore(again, session)
            return (again, true)
        }
        return Found(kept: kept, catalog: catalog)
    }

    /// At a writing transaction's start: its tables held where the engine holds them
    /// (``RegistryDialect/holdsTablesFirst``), then the catalog read again under that hold and
    /// refused as at opening. Held, no trigger, rule or policy can be made on them until the
    /// transaction ends, so what was read is what its statements meet.
    /// A guard of a table the transaction does not write (the chain's start, which the
    /// operator's role may only read, or the log's during an import) may still change while it
    /// runs, as it may just after it commits: it guards nothing the transaction writes.
    static func holdWrittenTables(_ engine: any RegistryEngine, _ session: RegistrySession, logging: Bool, registry: String) throws {
        if engine.dialect.holdsTablesFirst {
            let tables = RegistryGuard.appTables(of: engine.schema).union(logging ? RegistryGuard.logTablesWritten : []).sorted()
            // Waiting gives up after a minute, as for every other lock a writer takes.
            try session.execute("SET LOCAL lock_timeout = '60s'; LOCK TABLE \(tables.joined(separator: ", ")) IN ROW EXCLUSIVE MODE", [])
        }
        try engine.catalogForWriting(session).refuse(registry: registry)
    }

    /// What opening found: the guards `init` put back or dropped, and what the catalog showed
    /// (for `init`, the app's rules and row-level security it leaves to be named; for a
    /// reader, row-level security alone).
    struct Found {
        var kept: [RegistryGuard] = []
        var catalog = WritersCatalog()
    }

    /// The guards `init` put back, having found them dropped, disabled or rewritten.
    public var restoredGuards: [String] { found.kept.filter { !$0.isAdded }.map(\.name) }
    /// The triggers added by hand to the log's tables that `init` dropped.
    public var droppedTriggers: [String] { found.kept.filter(\.isAdded).map(\.name) }
    /// Those put back and those dropped, as a message names them (``RegistryGuard/names(_:)``).
    public var restoredGuardsShown: String { RegistryGuard.names(found.kept.filter { !$0.isAdded }) }
    public var droppedTriggersShown: String { RegistryGuard.names(found.kept.filter(\.isAdded)) }
    /// The app's rules that rewrite the writers' statements, which `init` found and left (every
    /// other writer refuses while they are there), as a message names them.
    public var rulesShown: String? { found.catalog.rules.isEmpty ? nil : RegistryGuard.names(found.catalog.rules, saying: false) }
    /// The tables row-level security applies to for the connecting role, found on opening by
    /// `init` and by readers (every other writer refuses while it does).
    public var tablesUnderRowSecurity: [String] { found.catalog.rowSecurity }

    /// What would refuse a writer of this registry (its guards, the app's rules, row-level
    /// security), read without changing anything: for a dry run to say that the real run would
    /// be refused (a trial: it said nothing, and the real run was refused).
    public func refusalOfWriters() throws -> VaultError? {
        let catalog = try read { try engine.catalogForWriting($0) }
        do {
            try catalog.refuse(registry: location.displayName, work: .dryRun)
            return nil
        } catch let refusal as VaultError {
            return refusal
        }
    }

    /// The privileges a revoke's real run needs on the registry's tables that the connecting
    /// role lacks, as "UPDATE on members": a dry run says so (a trial: a read-only role's dry
    /// run said nothing, and the same command for real stopped, exit 78). Privileges on the
    /// table, as a writer's hold on its tables first (`LOCK TABLE … ROW EXCLUSIVE`) needs them:
    /// an UPDATE granted on some columns only does not serve. SQLite has none.
    public func privilegesMissingForRevoking() throws -> [String] {
        guard engine.dialect.rolesHavePrivileges else { return [] }
        let needed = RegistryGuard.appTables(of: schema).sorted().flatMap { [($0, "SELECT"), ($0, "UPDATE")] }
            + RegistryGuard.logTablesWritten.sorted().flatMap { [($0, "SELECT"), ($0, "INSERT")] }
        // The names and privileges are the suite's own words, never input.
        let values = needed.map { "('\($0.0)', '\($0.1)')" }.joined(separator: ", ")
        return try read { session in
            try session.strings("""
                SELECT needed.privilege || ' on ' || needed.name FROM (VALUES \(values)) AS needed (name, privilege)
                WHERE NOT has_table_privilege(format('%I.%I', current_schema(), needed.name), needed.privilege)
                """)
        }
    }

    /// The guards not as the registry made them (dropped, disabled or rewritten by hand): what
    /// `log --verify` reports.
    public func guardsNotInPlace() throws -> [String] {
        try read { try engine.guardsNotInPlace($0).map(\.name) }
    }
}

extension DeviceRegistry {
    /// After a revocation's change, in its transaction: where the app's tables carry triggers
    /// that are not the registry's (the app's own, or added by hand), whether the change still
    /// stands: every device of the batch inactive, and none of its memberships open. A trigger
    /// that set a revoked device active again had the revoke report success (a hostile trial;
    /// `log --verify` found it later). Without such triggers there is nothing to check, and no
    /// second pass over the batch.
    /// A trigger may also revive a device an earlier batch revoked (a trial): the devices the log
    /// revoked that are active are counted before the change (``ChangeWatch``) and after it.
    /// Nor may such a trigger make other devices inactive than the batch's (a trial: one that
    /// deactivated a user's only device left the user without one, unmeasured and unlogged):
    /// `activeBefore`, the active devices counted at the transaction's start, less the `revoked`,
    /// must still be active.
    func requireChangeStands(_ db: RegistrySession, _ watch: ChangeWatch?, activeBefore: Int, revoked: Int) throws {
        guard let watch else { return }
        let t = table
        let inBatch = t.hasConversations ? "(\(t.user), device_id) IN (SELECT user_did, device_id FROM batch)" : "device_id IN (SELECT device_id FROM batch)"
        let active = try db.int("SELECT count(*) FROM user_devices WHERE is_active AND \(inBatch)") + (try revivedDevices(db) - watch.revivedBefore)
        let open = t.hasConversations ? try db.int("SELECT count(*) FROM members WHERE left_at IS NULL AND (user_did, device_id) IN (SELECT user_did, device_id FROM batch)") : 0
        guard active <= 0, open == 0 else { throw VaultError.registryChangeUndone(path, triggers: watch.triggers, devices: active, memberships: open) }
        let others = activeBefore - revoked - (try db.int("SELECT count(*) FROM user_devices WHERE is_active"))
        guard others <= 0 else { throw VaultError.registryChangeSpread(path, triggers: watch.triggers, devices: others) }
    }

    /// What a revocation watches before its change, where the app's tables carry triggers that
    /// are not the registry's; nil where they carry none (nothing to watch, nothing read).
    struct ChangeWatch {
        let triggers: [String]
        let revivedBefore: Int
    }

    func watchChange(_ db: RegistrySession) throws -> ChangeWatch? {
        let others = try engine.triggersNotOurs(on: table.hasConversations ? ["user_devices", "members"] : ["user_devices"], db)
        guard !others.isEmpty else { return nil }
        return ChangeWatch(triggers: others, revivedBefore: try revivedDevices(db))
    }

    /// That no device a revocation named is left active by its change (`leftActive` of them):
    /// one a row-level security policy or a rule kept the UPDATE from, or the app changed
    /// meanwhile, would be logged revoked while active (a trial, on PostgreSQL with a policy that
    /// let the tool's role read every device but update only some).
    func requireNoneLeftActive(_ leftActive: Int) throws {
        guard leftActive > 0 else { return }
        throw VaultError.registryChangeNotTaken(path, devices: leftActive)
    }

    /// The devices the log revoked that are active.
    private func revivedDevices(_ db: RegistrySession) throws -> Int {
        try db.int("SELECT count(*) FROM user_devices d WHERE d.is_active AND EXISTS (SELECT 1 FROM revocations r WHERE \(table.isLogged("d", "r")))")
    }
}

extension VaultError.Code {
    /// A revocation's change undone within its own transaction by a trigger not the registry's.
    public static let registryChangeUndone = VaultError.Code(name: "registryChangeUndone", category: .authentication)
    /// A revocation's change made other devices inactive, by a trigger not the registry's.
    public static let registryChangeSpread = VaultError.Code(name: "registryChangeSpread", category: .authentication)
    /// A revocation's change left devices of its batch active (a policy, a rule, or the app
    /// meanwhile): nothing is committed.
    public static let registryChangeNotTaken = VaultError.Code(name: "registryChangeNotTaken", category: .authentication)
    /// Row-level security applies to the connecting role on a table the writers change.
    public static let registryUnderRowSecurity = VaultError.Code(name: "registryUnderRowSecurity", category: .authentication)
    /// A guard of the registry (a trigger that keeps a rule) was dropped, disabled or rewritten.
    public static let registryGuardsNotInPlace = VaultError.Code(name: "registryGuardsNotInPlace", category: .authentication)
    /// A rule on the app's tables rewrites the writers' INSERT or UPDATE (PostgreSQL).
    public static let registryRulesRewriteWrites = VaultError.Code(name: "registryRulesRewriteWrites", category: .authentication)
}

extension VaultError {
    static func registryChangeUndone(_ name: String, triggers: [String], devices: Int, memberships: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        let undone = [devices > 0 ? "\(devices) of its devices active again" : nil, memberships > 0 ? "\(memberships) of their memberships open again" : nil]
            .compactMap { $0 }.joined(separator: " and ")
        return VaultError(.registryChangeUndone,
                          "the registry '\(name)' undid the revocation as it was made (\(undone)), by \(notOurs(triggers)); nothing was changed",
                          hint: "find who added them and why; the revocation is made once they are gone", file: file, line: line)
    }

    static func registryChangeSpread(_ name: String, triggers: [String], devices: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryChangeSpread,
                   "the registry '\(name)' made \(devices) device\(devices == 1 ? "" : "s") outside the batch inactive as the revocation was made, by \(notOurs(triggers)); nothing was changed",
                   hint: "find who added them and why: a device they deactivate is neither measured nor logged", file: file, line: line)
    }

    /// "triggers that are not its own: "a" on t, …", as the refusals about them name them.
    private static func notOurs(_ triggers: [String]) -> String {
        "triggers that are not its own: " + triggers.joined(separator: ", ")
    }

    static func registryChangeNotTaken(_ name: String, devices: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryChangeNotTaken,
                   "the registry '\(name)' kept \(devices) device\(devices == 1 ? "" : "s") the revocation named active as it was made "
                   + "(the app changing them meanwhile, or a rule or policy made while it ran); nothing was changed",
                   hint: "run it again", file: file, line: line)
    }

    /// A writer refused a registry whose app tables carry rules that rewrite its statements.
    static func registryRulesRewriteWrites(_ name: String, _ rules: String, refusing work: RegistryRefusedWork = .change,
                                           file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryRulesRewriteWrites,
                   "the registry '\(name)' has rules on the app's tables that rewrite what a revocation or an import changes: \(rules)\(work.ending)",
                   hint: "a rule changes a statement before it runs, unmeasured: make it a trigger (a revocation watches the app's triggers) or drop it",
                   file: file, line: line)
    }

    /// A writer refused a registry whose tables row-level security applies to for its role.
    static func registryUnderRowSecurity(_ name: String, _ tables: [String], refusing work: RegistryRefusedWork = .change,
                                         file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryUnderRowSecurity,
                   "row-level security applies to the role connecting to the registry '\(name)' on \(tables.joined(separator: ", ")): "
                   + "a policy may hide rows from it, or keep its changes from them\(work.ending)",
                   hint: "connect as a role that bypasses it (BYPASSRLS, or the tables' owner where security is not forced), as Supabase's service role does",
                   file: file, line: line)
    }

    /// A writer refused a registry whose guards are not as it made them.
    static func registryGuardsNotInPlace(_ name: String, _ guards: String, refusing work: RegistryRefusedWork = .change,
                                         file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryGuardsNotInPlace,
                   "the registry '\(name)' is missing guards that keep its rules (dropped, disabled or changed by hand): \(guards)\(work.ending)",
                   hint: "run: device-revoker registry init \(ShellWord.option("--db", name)) (it puts them back), then 'registry log --verify' to check what was changed meanwhile",
                   file: file, line: line)
    }
}
