#include <sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call: this names the one setting we make.
static inline int station_admin_sqlite_config_memory_statistics(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
