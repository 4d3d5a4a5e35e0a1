// libpq, PostgreSQL's own client library, imported whole. No shims are needed: the few macros
// we use (PG_DIAG_* field codes) are character constants, spelled out in Swift instead.
#include <postgresql/libpq-fe.h>
