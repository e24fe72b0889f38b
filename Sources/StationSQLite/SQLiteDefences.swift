import CSQLiteConfig
import GRDB

/// The settings of every SQLite connection the tools and the client open: a database file can
/// come from anywhere (a backup, a restored master, a bundled or downloaded release), and its
/// schema is text anyone can rewrite (`PRAGMA writable_schema`). With `trusted_schema` off, a
/// trigger, view or default expression of the file cannot call a function with side effects;
/// with the defensive flag, no statement can corrupt the file on purpose.
///
/// These stop what a file's schema runs inside SQLite; which objects a file may hold at all is
/// its reader's to check (the master's declared schema, the client's release tables).
///
/// ```swift
/// let queue = try DatabaseQueue(path: path, configuration: SQLiteDefences.configuration())
/// ```
public enum SQLiteDefences {
    /// A configuration whose connections are defended, and otherwise GRDB's defaults.
    public static func configuration() -> Configuration {
        var configuration = Configuration()
        defend(&configuration)
        return configuration
    }

    /// Adds the defences to `configuration`'s every connection.
    public static func defend(_ configuration: inout Configuration) {
        configuration.prepareDatabase { db in try apply(db) }
    }

    /// Turns the defences on for an open connection.
    public static func apply(_ db: Database) throws {
        let code = station_admin_sqlite_defend(db.sqliteConnection)
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "the connection's defences could not be set")
        }
    }

    /// Whether `db`'s defences are on (for tests and `status`).
    public static func isDefended(_ db: Database) -> Bool {
        station_admin_sqlite_is_defended(db.sqliteConnection) == 1
    }
}
