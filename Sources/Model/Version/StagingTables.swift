import GRDB
import StationSchema

/// The temporary tables of one change: `temp.staged_<t>` holds the full new state of every
/// row that changes, with its `kind`; `temp.import_<t>` the rows a curated batch puts.
///
/// Imports fill `staged` as they compare each file with the master (`StreamingTableDiff`);
/// curated operations put their rows in `import` and stage what they change (`CuratedRowDiff`).
/// Either way `VersionWriter` commits it, so every change is logged the same way.
package enum StagingTables {
    package static func importTable(_ table: MasterTable) -> String { "temp.import_\(table.name)" }
    package static func stagedTable(_ table: MasterTable) -> String { "temp.staged_\(table.name)" }
    /// An import's file rows that the three-way merge looks at (those that differ from upstream's
    /// last file, and those curators changed), or every row of a file that becomes the first base.
    package static func theirsTable(_ table: MasterTable) -> String { "temp.theirs_\(table.name)" }
    /// Upstream's last values of the rows in `theirs` that it had (`ThreeWayMerge` fills it).
    package static func baseTable(_ table: MasterTable) -> String { "temp.base_\(table.name)" }
    /// The keys of the rows upstream's last file had and this one lacks.
    package static func droppedTable(_ table: MasterTable) -> String { "temp.dropped_\(table.name)" }

    /// The staged tables, empty. The import tables only curated changes fill are made when
    /// they are (`createImportTable`): each table created costs an import a schema reload.
    package static func create(_ db: Database, _ declared: DeclaredSchema) throws {
        try dropLoadedViews(db)
        for table in declared.tables {
            try db.execute(sql: """
                DROP TABLE IF EXISTS \(importTable(table));
                DROP TABLE IF EXISTS \(stagedTable(table));
                CREATE TABLE \(stagedTable(table)) (kind TEXT NOT NULL, source_line INTEGER, \(typedColumns(table)), PRIMARY KEY (\(table.keyOrder)));
                DROP TABLE IF EXISTS \(theirsTable(table));
                CREATE TABLE \(theirsTable(table)) (source_line INTEGER NOT NULL, \(typedColumns(table)), PRIMARY KEY (\(table.keyOrder)));
                DROP TABLE IF EXISTS \(baseTable(table));
                CREATE TABLE \(baseTable(table)) (\(typedColumns(table)), PRIMARY KEY (\(table.keyOrder)));
                DROP TABLE IF EXISTS \(droppedTable(table));
                CREATE TABLE \(droppedTable(table)) (\(table.keyColumns.map { "\($0) INTEGER NOT NULL" }.joined(separator: ", ")), PRIMARY KEY (\(table.keyOrder)));
                """)
        }
        try db.execute(sql: """
            DROP TABLE IF EXISTS temp.staged_duplicates;
            CREATE TABLE temp.staged_duplicates (seq INTEGER PRIMARY KEY, old_cd INTEGER NOT NULL, new_cd INTEGER NOT NULL);
            """)
    }

    /// `temp.import_<table>`, where a curated batch puts its rows, if it is not there yet.
    package static func createImportTable(_ table: MasterTable, _ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(importTable(table)) (source_line INTEGER NOT NULL, \(typedColumns(table)), PRIMARY KEY (\(table.keyOrder)))
            """)
    }

    /// Typed like the master tables: an untyped column's affinity keeps SQLite off its key index.
    private static func typedColumns(_ table: MasterTable) -> String {
        table.columns.map { "\($0.name) \($0.sqlType)" }.joined(separator: ", ")
    }

    /// After a file was loaded straight into its empty master table: the staged rows are the
    /// master's rows, all INSERTs, read through a view of the same name and shape.
    package static func stageAsLoaded(_ table: MasterTable, _ db: Database) throws {
        let staged = stagedTable(table)
        let name = "staged_\(table.name)"
        try db.execute(sql: """
            DROP TABLE \(staged);
            CREATE TEMP VIEW \(name) AS
            SELECT \(Update.Kind.insert.sql) AS kind, NULL AS source_line, \(table.columnNames.joined(separator: ", ")) FROM main.\(table.name);
            """)
    }

    /// Whether `table` was loaded straight into the master (`stageAsLoaded`).
    package static func isLoaded(_ table: MasterTable, _ db: Database) throws -> Bool {
        try loadedTables(db).contains(table)
    }

    /// The tables loaded straight into the master, from one look at the temp schema: a commit
    /// asks for every table, and each statement compiled is a cost every import pays.
    package static func loadedTables(_ db: Database) throws -> Set<MasterTable> {
        let views = try String.fetchAll(db, sql: "SELECT name FROM temp.sqlite_master WHERE type = 'view'")
        return Set(MasterTable.all.filter { views.contains("staged_\($0.name)") })
    }

    private static func dropLoadedViews(_ db: Database) throws {
        for table in try loadedTables(db) {
            try db.execute(sql: "DROP VIEW \(stagedTable(table))")
        }
    }

    package static func drop(_ db: Database) throws {
        try dropLoadedViews(db)
        for table in MasterTable.all {
            try db.execute(sql: """
                DROP TABLE IF EXISTS \(importTable(table)); DROP TABLE IF EXISTS \(stagedTable(table));
                DROP TABLE IF EXISTS \(theirsTable(table)); DROP TABLE IF EXISTS \(droppedTable(table)); DROP TABLE IF EXISTS \(baseTable(table));
                """)
        }
        try db.execute(sql: "DROP TABLE IF EXISTS temp.staged_duplicates")
    }
}
