#include <sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call: this names the one setting we make.
static inline int station_admin_sqlite_config_memory_statistics(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}

// sqlite3_db_config is variadic too. A connection that runs nothing a file brings: no
// schema-defined code with side effects (trusted_schema off), and none of the SQL that can
// corrupt a file on purpose (writable_schema, journal_mode=OFF, shadow-table writes).
static inline int station_admin_sqlite_defend(sqlite3 *db) {
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
}

// Whether the connection's defences are on: 1 when both are.
static inline int station_admin_sqlite_is_defended(sqlite3 *db) {
    int defensive = 0, trusted = 1;
    if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive) != SQLITE_OK) return 0;
    if (sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &trusted) != SQLITE_OK) return 0;
    return defensive == 1 && trusted == 0;
}
