import GRDB

/// The temporary tables of one change: `temp.import_<t>` holds a file's rows as read,
/// `temp.staged_<t>` the full new state of every row that changes, with its `kind`.
///
/// Imports fill `staged` from a diff in SQL; curated operations fill it row by row.
/// Either way `VersionWriter` commits it, so every change is logged the same way.
enum StagingTables {
    static func importTable(_ table: MasterTable) -> String { "temp.import_\(table.name)" }
    static func stagedTable(_ table: MasterTable) -> String { "temp.staged_\(table.name)" }

    static func create(_ db: Database) throws {
        for table in MasterTable.all {
            // Typed like the master tables: an untyped column's affinity keeps SQLite off its key index.
            let columns = table.columns.map { "\($0.name) \($0.sqlType)" }.joined(separator: ", ")
            try db.execute(sql: """
                DROP TABLE IF EXISTS \(importTable(table));
                DROP TABLE IF EXISTS \(stagedTable(table));
                CREATE TABLE \(importTable(table)) (source_line INTEGER NOT NULL, \(columns), PRIMARY KEY (\(table.keyOrder)));
                CREATE TABLE \(stagedTable(table)) (kind TEXT NOT NULL, source_line INTEGER, \(columns), PRIMARY KEY (\(table.keyOrder)));
                """)
        }
        try db.execute(sql: """
            DROP TABLE IF EXISTS temp.staged_duplicates;
            CREATE TABLE temp.staged_duplicates (seq INTEGER PRIMARY KEY, old_cd INTEGER NOT NULL, new_cd INTEGER NOT NULL);
            """)
    }

    static func drop(_ db: Database) throws {
        for table in MasterTable.all {
            try db.execute(sql: "DROP TABLE IF EXISTS \(importTable(table)); DROP TABLE IF EXISTS \(stagedTable(table));")
        }
        try db.execute(sql: "DROP TABLE IF EXISTS temp.staged_duplicates")
    }
}
