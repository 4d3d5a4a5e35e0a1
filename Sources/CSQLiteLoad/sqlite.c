// The SQLite functions VaultSQLite's SQLiteDatabase calls (sqlite3_db_config, variadic, through
// CSQLite's shim: a trampoline is a jump, so the variadic call's registers pass through as they
// are), each a trampoline until libsqlite3 is loaded (load_on_use.h).
#include "sqlite_load.h"

#define SQLITE_FUNCTIONS(X) \
    X(sqlite3_bind_blob) X(sqlite3_bind_double) X(sqlite3_bind_int64) X(sqlite3_bind_null) \
    X(sqlite3_bind_parameter_count) X(sqlite3_bind_text) X(sqlite3_bind_zeroblob) X(sqlite3_busy_timeout) \
    X(sqlite3_changes64) X(sqlite3_close_v2) X(sqlite3_column_blob) X(sqlite3_column_bytes) \
    X(sqlite3_column_count) X(sqlite3_column_double) X(sqlite3_column_int64) X(sqlite3_column_name) \
    X(sqlite3_column_text) X(sqlite3_column_type) X(sqlite3_db_config) X(sqlite3_errmsg) X(sqlite3_errstr) \
    X(sqlite3_exec) X(sqlite3_extended_result_codes) X(sqlite3_finalize) X(sqlite3_free) \
    X(sqlite3_get_autocommit) X(sqlite3_limit) X(sqlite3_open_v2) X(sqlite3_prepare_v2) X(sqlite3_reset) \
    X(sqlite3_serialize) X(sqlite3_step)

HVT_LOAD_ON_USE(sqlite, "libsqlite3.so.0", "libsqlite3-0", "sqlite", "SQLite for device registries, batch journals and manifests", SQLITE_FUNCTIONS)
