import GRDB

/// The keys a delta wrote, recorded as it runs on the client database of the server's version:
/// a temporary table per master table (`temp.station_touched_stations`), filled by temporary
/// triggers on every insert, update and delete. The rows to send are then those keys' rows, and
/// the connections removed those keys no longer present: a lookup for each key the delta wrote,
/// where comparing two client databases read every row of both.
///
/// Temporary: on the connection that ran the delta, never in the file that is kept.
enum TouchedKeys {
    static func table(_ name: String) -> String { "station_touched_\(name)" }

    /// Creates the tables and triggers for `tables` (name and key columns) on `db`.
    static func record(_ tables: [(name: String, key: [String])], _ db: Database) throws {
        for (name, key) in tables {
            let touched = table(name), columns = key.joined(separator: ", ")
            func values(_ row: String) -> String { key.map { "\(row).\($0)" }.joined(separator: ", ") }
            try db.execute(sql: """
                CREATE TEMP TABLE \(touched) (\(columns), PRIMARY KEY (\(columns))) WITHOUT ROWID;
                CREATE TEMP TRIGGER \(touched)_inserted AFTER INSERT ON main.\(name) BEGIN
                    INSERT OR IGNORE INTO \(touched) VALUES (\(values("NEW")));
                END;
                CREATE TEMP TRIGGER \(touched)_updated AFTER UPDATE ON main.\(name) BEGIN
                    INSERT OR IGNORE INTO \(touched) VALUES (\(values("OLD")));
                    INSERT OR IGNORE INTO \(touched) VALUES (\(values("NEW")));
                END;
                CREATE TEMP TRIGGER \(touched)_deleted AFTER DELETE ON main.\(name) BEGIN
                    INSERT OR IGNORE INTO \(touched) VALUES (\(values("OLD")));
                END;
                """)
        }
    }
}
