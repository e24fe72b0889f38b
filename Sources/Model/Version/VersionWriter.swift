import Foundation
import GRDB
import StationSchema
import StationSupport

/// Commits what is staged in `temp.staged_*` as data version `version`:
/// superseded row states go to `<table>_history`, new states to the master tables,
/// and one `updates` row per changed key (then the DUPLICATEs) to the log, counted per table and
/// kind in `version_counts`.
///
/// It is the only code that writes master rows, so imports and curated changes
/// keep history and log alike. It runs inside the caller's transaction.
package struct VersionWriter {
    package let version: Int
    package let memo: String?
    package let author: String?
    package let date: String
    /// The tables whose upstream base the version sets itself (an import's files).
    package let upstreamTables: Set<MasterTable>
    /// The tables whose columns the rows are written with.
    package let declared: DeclaredSchema

    package init(version: Int, memo: String?, author: String?, date: Date = Date(), upstreamTables: Set<MasterTable> = [],
                 declared: DeclaredSchema) {
        self.version = version
        self.declared = declared
        self.memo = memo
        self.author = author
        self.date = UTCTimestamp.text(date)
        self.upstreamTables = upstreamTables
    }

    package func write(_ db: Database) throws {
        // Memo and author by their byte length (StatementBinding's text rule).
        try StatementBinding.execute(
            "INSERT INTO versions (version, committed_at, author, memo) VALUES (?, ?, ?, ?)", [version, date, author, memo], db)
        let loaded = try StagingTables.loadedTables(db)
        let imported = Set(try String.fetchAll(db, sql: "SELECT DISTINCT table_name FROM upstream_imports"))
        for table in declared.tables {
            if imported.contains(table.name) && !upstreamTables.contains(table) { try keepUpstreamBase(table, db) }
            try write(table, loaded: loaded.contains(table), db)
        }
        try StatementBinding.execute("""
            INSERT INTO updates (type, table_name, key_id, user_version, update_date, memo)
            SELECT \(Update.Kind.duplicate.sql), CAST(old_cd AS TEXT), CAST(new_cd AS TEXT), ?, ?, ? FROM temp.staged_duplicates ORDER BY seq
            """, [version, date, memo], db)
        try db.execute(sql: """
            INSERT INTO version_counts (version, table_name, type, count)
            SELECT ?, '\(MasterTable.stations.name)', \(Update.Kind.duplicate.sql), COUNT(*) FROM temp.staged_duplicates HAVING COUNT(*) > 0
            """, arguments: [version])
    }

    /// - Parameter loaded: the file was loaded straight into the master (`StagingTables.stageAsLoaded`).
    private func write(_ table: MasterTable, loaded: Bool, _ db: Database) throws {
        let staged = StagingTables.stagedTable(table)
        let keys = table.keyOrder
        if !loaded { try writeMaster(table, db) }
        try StatementBinding.execute("""
            INSERT INTO updates (type, table_name, key_id, user_version, update_date, memo)
            SELECT kind, '\(table.name)', \(table.keyText()), ?, ?, ? FROM \(staged) ORDER BY \(keys)
            """, [version, date, memo], db)
        if loaded {
            // Every row of a loaded table is an INSERT, one per log row just written: counting
            // them by kind would read the table again.
            let inserted = db.changesCount
            guard inserted > 0 else { return }
            try db.execute(sql: "INSERT INTO version_counts (version, table_name, type, count) VALUES (?, '\(table.name)', ?, ?)",
                           arguments: [version, Update.Kind.insert.rawValue, inserted])
        } else {
            try db.execute(sql: """
                INSERT INTO version_counts (version, table_name, type, count)
                SELECT ?, '\(table.name)', kind, COUNT(*) FROM \(staged) GROUP BY kind
                """, arguments: [version])
        }
    }

    /// Before curators (or a revert, or another table's import) change rows of an imported table:
    /// the base of each row that was the master's own is held apart as it is, and a row new to
    /// the master is one upstream lacks (`<table>_upstream`), so the next import knows what
    /// upstream said and what curators changed. A row held apart already stays as it is.
    private func keepUpstreamBase(_ table: MasterTable, _ db: Database) throws {
        let staged = StagingTables.stagedTable(table)
        let columns = table.columnNames.joined(separator: ", ")
        try db.execute(sql: """
            INSERT OR IGNORE INTO main.\(table.upstreamTable) (\(columns), upstream_lacks)
            SELECT \(table.columnNames.map { "m." + $0 }.joined(separator: ", ")), 0
            FROM \(staged) s CROSS JOIN main.\(table.name) m ON \(table.keyJoin("m", "s")) WHERE s.kind <> \(Update.Kind.insert.sql);
            INSERT OR IGNORE INTO main.\(table.upstreamTable) (\(table.keyOrder), upstream_lacks)
            SELECT \(table.keyOrder), 1 FROM \(staged) WHERE kind = \(Update.Kind.insert.sql);
            """)
    }

    /// Old states of the staged rows to history, new states to the master (a file loaded
    /// straight into an empty table has neither to write).
    private func writeMaster(_ table: MasterTable, _ db: Database) throws {
        let staged = StagingTables.stagedTable(table)
        let columns = table.columnNames.joined(separator: ", ")
        let keys = table.keyOrder
        try db.execute(sql: """
            INSERT INTO main.\(table.historyTable) (key_id, valid_to, \(columns))
            SELECT \(table.keyText(alias: "m")), ?, \(table.columnNames.map { "m." + $0 }.joined(separator: ", "))
            FROM main.\(table.name) m JOIN \(staged) s ON \(table.keyJoin("m", "s"))
            WHERE s.kind <> \(Update.Kind.insert.sql)
            """, arguments: [version])
        if !table.closesByStatus {
            try db.execute(sql: """
                DELETE FROM main.\(table.name) WHERE (\(keys)) IN (SELECT \(keys) FROM \(staged) WHERE kind = \(Update.Kind.delete.sql))
                """)
        }
        try db.execute(sql: """
            INSERT OR REPLACE INTO main.\(table.name) (\(columns))
            SELECT \(columns) FROM \(staged)\(table.closesByStatus ? "" : " WHERE kind <> \(Update.Kind.delete.sql)") ORDER BY \(keys)
            """)
    }
}
