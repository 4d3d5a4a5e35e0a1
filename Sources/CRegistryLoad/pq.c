// The libpq functions VaultRegistry's PostgresClient calls, each a trampoline until libpq is
// loaded (load_on_use.h).
#include "registry_load.h"

#define PQ_FUNCTIONS(X) \
    X(PQclear) X(PQcmdTuples) X(PQconnectdbParams) X(PQconninfoFree) X(PQconninfoParse) X(PQerrorMessage) X(PQexec) \
    X(PQexecParams) X(PQfinish) X(PQfname) X(PQfreemem) X(PQftype) X(PQgetResult) X(PQgetisnull) \
    X(PQgetlength) X(PQgetvalue) X(PQnfields) X(PQntuples) X(PQputCopyData) X(PQputCopyEnd) \
    X(PQresultErrorField) X(PQresultStatus) X(PQstatus)

HVT_LOAD_ON_USE(pq, "libpq.so.5", "libpq5", "postgresql", "PostgreSQL device registries", PQ_FUNCTIONS)
