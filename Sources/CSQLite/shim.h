// The system's SQLite (Debian: libsqlite3-dev), read by the lookup library without GRDB.
#include <sqlite3.h>
