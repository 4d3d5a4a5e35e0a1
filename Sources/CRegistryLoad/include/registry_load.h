// libpq, loaded when a command first reaches a PostgreSQL registry.
#include "load_on_use.h"
struct hvt_library *_Nonnull hvt_library_pq(void);
