// libsqlite3, loaded when a command first opens a database (a registry, a batch's journal, a
// manifest's staging): a `--version`, an `open` or an `inspect` maps none of it (issue 48).
#include "load_on_use.h"
struct hvt_library *_Nonnull hvt_library_sqlite(void);
