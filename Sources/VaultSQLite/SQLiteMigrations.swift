/// A database's schema as the steps it grew by, each applied once, in order, and recorded by
/// name in `grdb_migrations` (the table GRDB's migrator kept, whose name the files made before
/// it was replaced still carry: a registry or a journal made by an earlier version goes on
/// from where it is). A name the table holds that is not among the steps (a later version's)
/// is left alone.
package struct SQLiteMigrations: Sendable {
    /// Each step's name and its SQL (several statements, no values).
    package let steps: [(name: String, sql: String)]

    package init(_ steps: [(name: String, sql: String)]) {
        self.steps = steps
    }

    /// The table of applied steps, which counts as one of the database's own.
    package static let table = "grdb_migrations"

    /// Applies the steps `database` has not had, each in an IMMEDIATE transaction with its
    /// record: a step is there whole, recorded, or not at all. A step another process applied
    /// meanwhile (its transaction ahead of ours) is found recorded inside ours and skipped.
    package func migrate(_ database: SQLiteDatabase) throws {
        try database.withConnection { connection in
            try connection.execute("CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        }
        let applied = Set(try database.withConnection { try $0.strings("SELECT identifier FROM grdb_migrations") })
        for step in steps where !applied.contains(step.name) {
            try database.write { connection in
                guard try connection.first("SELECT 1 FROM grdb_migrations WHERE identifier = ?", [step.name], { _ in true }) == nil else { return }
                try connection.execute(step.sql)
                try connection.execute("INSERT INTO grdb_migrations (identifier) VALUES (?)", [step.name])
            }
        }
    }
}
