// SQLite's C API, imported whole, and two things Swift cannot reach: sqlite3_db_config is
// variadic, and SQLITE_TRANSIENT is a macro of a cast.
#include <sqlite3.h>

/// Refuses double-quoted string literals in this connection's SQL (a misspelled column name
/// would otherwise be taken as text), as SQLite's own documentation recommends.
static inline int csqlite_refuse_double_quoted_strings(sqlite3 *db) {
    int dml = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    return dml != SQLITE_OK ? dml : sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}

/// SQLite copies what it is given before the bind call returns.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
