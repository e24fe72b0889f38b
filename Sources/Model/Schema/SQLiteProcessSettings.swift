import CSQLiteConfig

/// Settings SQLite takes once per process, before its first connection opens.
public enum SQLiteProcessSettings {
    /// Turns SQLite's memory statistics off. Kept on (the library's default), every allocation
    /// takes one process-wide mutex, which a release's two connections, one a core, contend for.
    /// Nothing here reads them.
    ///
    /// Call it first thing in `main`, while the process has one thread: `sqlite3_config` is not
    /// thread safe. Once SQLite is initialised it changes nothing.
    ///
    /// - Returns: whether the setting was taken.
    @discardableResult
    public static func applyBeforeFirstConnection() -> Bool {
        station_admin_sqlite_config_memory_statistics(0) == SQLITE_OK
    }
}
