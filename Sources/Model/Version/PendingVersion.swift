import Foundation
import GRDB
import GRDBSQLite
import StationCSV
import StationCheck
import StationSchema
import StationSupport

/// A data version being written, inside the caller's write transaction: the one home of
/// the staging tables (`temp.staged_*`, `temp.import_*`), which no code outside this
/// folder names.
///
/// Producers stage into it: an import file by file, a curated batch row by row, splits as
/// pairs. Then `write` moves the staged rows into the master, their old states into
/// history and one `updates` row per changed key into the log, and `report` counts and
/// describes what the version changes. For example, an import is
///
///     let version = try PendingVersion(db, master.declared)
///     for file in files { _ = try version.stage(file) }
///     try version.write(memo: nil, author: "kato")
///     let report = try version.report(tables: files.map(\.table), describeLimit: 20, committing: true)
///
/// and the caller commits the transaction when `report.committed`.
package struct PendingVersion {
    /// The data version this becomes: the master's newest plus one.
    package let number: Int
    /// The tables whose columns every row is staged and written with.
    package let declared: DeclaredSchema
    private let db: Database

    package init(_ db: Database, _ declared: DeclaredSchema) throws {
        self.db = db
        self.declared = declared
        number = try MasterDatabase.dataVersion(db) + 1
        try StagingTables.create(db, declared)
    }

    // MARK: Staging

    /// Stages what importing `file` changes (the file is the whole table: rows it lacks
    /// close or go); returns the line of each key the file holds, and for the stations their
    /// places before.
    package func stage(_ file: ImportFile, comparison: StreamingTableDiff.Comparison = .master) throws -> StreamingTableDiff.StagedFile {
        try StreamingTableDiff(file: file, comparison: comparison).stage(db)
    }

    /// After `write`: what each file said becomes its table's base for the next import, held in
    /// `<table>_upstream` only where the master now differs from it or lacks the row (each join
    /// a CROSS JOIN from the few rows of the file to the master, never the master read whole); the import
    /// is recorded with its snapshot's date and columns; then the merge's notes.
    ///
    /// - Returns: whether any base changed: an import that changes nothing in the master still
    ///   keeps what upstream said (`keepUpstreamAlone`), or a conflict decided for ours would be
    ///   asked again at the next import of the same file.
    @discardableResult
    package func recordUpstream(_ files: [(file: ImportFile, date: String?, threeWay: Bool)], notes: [MergeNote]) throws -> Bool {
        var changed = false
        for (file, _, threeWay) in files {
            let table = file.table
            let upstream = "main.\(table.upstreamTable)"
            let keys = table.keyOrder
            if threeWay {
                let given = Set(file.header.columns.map(\.name))
                let differsFromBase = table.nonKeyColumns.filter { given.contains($0.name) }.map { "t.\($0.name) IS NOT b.\($0.name)" }
                changed = try changed || Bool.fetchOne(db, sql: """
                    SELECT EXISTS (SELECT 1 FROM \(StagingTables.theirsTable(table)) t LEFT JOIN \(StagingTables.baseTable(table)) b ON \(table.keyJoin("b", "t"))
                                   WHERE b.\(table.keyColumns[0]) IS NULL\(differsFromBase.isEmpty ? "" : " OR " + differsFromBase.joined(separator: " OR ")))
                        OR EXISTS (SELECT 1 FROM \(StagingTables.droppedTable(table)))
                    """)!
                let differs = table.nonKeyColumns.filter { given.contains($0.name) }.map { "t.\($0.name) IS NOT m.\($0.name)" }
                let sameAsMaster = differs.isEmpty ? "1" : "NOT (" + differs.joined(separator: " OR ") + ")"
                let columns = table.columnNames.joined(separator: ", ")
                try db.execute(sql: """
                    DELETE FROM \(upstream) WHERE (\(keys)) IN (
                        SELECT \(table.keyColumns.map { "t." + $0 }.joined(separator: ", ")) FROM \(StagingTables.theirsTable(table)) t
                        CROSS JOIN main.\(table.name) m ON \(table.keyJoin("m", "t")) WHERE \(sameAsMaster));
                    INSERT OR REPLACE INTO \(upstream) (\(columns), upstream_lacks)
                        SELECT \(table.columnNames.map { "t." + $0 }.joined(separator: ", ")), 0 FROM \(StagingTables.theirsTable(table)) t
                        LEFT JOIN main.\(table.name) m ON \(table.keyJoin("m", "t")) WHERE m.\(table.keyColumns[0]) IS NULL OR NOT (\(sameAsMaster));
                    DELETE FROM \(upstream) WHERE (\(keys)) IN (SELECT \(keys) FROM \(StagingTables.droppedTable(table)));
                    INSERT INTO \(upstream) (\(keys), upstream_lacks)
                        SELECT \(table.keyColumns.map { "d." + $0 }.joined(separator: ", ")), 1 FROM \(StagingTables.droppedTable(table)) d
                        CROSS JOIN main.\(table.name) m ON \(table.keyJoin("m", "d"));
                    """)
            } else {
                // The first import: the master is the file now, but for the rows it closed for
                // being absent, which upstream lacks.
                try db.execute(sql: "DELETE FROM \(upstream)")
                if try table.closesByStatus && !StagingTables.isLoaded(table, db) {
                    try db.execute(sql: """
                        INSERT INTO \(upstream) (\(keys), upstream_lacks)
                        SELECT \(keys), 1 FROM \(StagingTables.stagedTable(table)) WHERE kind = \(Update.Kind.delete.sql) AND source_line IS NULL
                        """)
                }
            }
        }
        for (file, date, _) in files {
            try UpstreamImport(version: number, table: file.table, snapshotDate: date, fileName: (file.path as NSString).lastPathComponent,
                               columns: file.header.columns.map(\.name)).record(db)
        }
        try ThreeWayMerge.record(notes, db)
        return changed || files.contains { !$0.threeWay }
    }

    /// Undoes `write` but for what `recordUpstream` kept, when the version changes nothing: the
    /// import's bases, its record and its notes stand at the master's version as it stays.
    package func keepUpstreamAlone() throws {
        try db.execute(sql: "DELETE FROM versions WHERE version = ?", arguments: [number])
        try db.execute(sql: "UPDATE upstream_imports SET version = ?, made_version = 0 WHERE version = ?", arguments: [number - 1, number])
        try db.execute(sql: "UPDATE OR REPLACE merge_notes SET version = ? WHERE version = ?", arguments: [number - 1, number])
    }

    /// Whether every row of the version is in the master tables before `write`: each table's
    /// file was loaded straight into it (`StagingTables.stageAsLoaded`), or stages nothing, and
    /// no split is staged. `write` then adds only the log, so the rules can read the master
    /// before it (`FirstVersionCheck`).
    package func holdsEveryRowInTheMaster() throws -> Bool {
        let loaded = try StagingTables.loadedTables(db)
        for table in MasterTable.all where !loaded.contains(table) {
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(StagingTables.stagedTable(table)))")! { return false }
        }
        return try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM temp.staged_duplicates)")!
    }

    /// How many rows of `table` the staged changes reopen.
    package func reopeningCount(of table: MasterTable) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(StagingTables.stagedTable(table)) WHERE kind = \(Update.Kind.restore.sql)") ?? 0
    }

    /// Stages a curated table: `rows` are whole new states (what equals the stored row stages
    /// nothing), `removals` keys of rows to remove; rows the batch does not name stay.
    package func stage(rows: [[DatabaseValue]], removals: [[DatabaseValue]], of table: MasterTable) throws {
        let table = declared[table]
        let columns = table.columnNames.joined(separator: ", ")
        try StagingTables.createImportTable(table, db)
        let insert = try db.makeStatement(sql: """
            INSERT INTO \(StagingTables.importTable(table)) (source_line, \(columns))
            VALUES (\(Array(repeating: "?", count: table.columns.count + 1).joined(separator: ", ")))
            """)
        for (index, row) in rows.enumerated() {
            StatementBinding.bind([(index + 1).databaseValue] + row, to: insert)
            try StatementBinding.step(insert, db)
        }
        try CuratedRowDiff(table: table).stage(db)
        let keyCondition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        let remove = try db.makeStatement(sql: """
            INSERT INTO \(StagingTables.stagedTable(table)) (kind, source_line, \(columns))
            SELECT \(Update.Kind.delete.sql), NULL, \(columns) FROM main.\(table.name) WHERE \(keyCondition)
            """)
        for key in removals {
            try remove.execute(arguments: StatementArguments(key))
        }
    }

    /// Records station splits (DUPLICATE), in order, once `SplitRules` accepts them.
    ///
    /// - Throws: `VersionError.splitRefused`.
    package func stage(splits: [(old: Int64, new: Int64)]) throws {
        try SplitRules.check(splits, db)
        let insert = try db.makeStatement(sql: "INSERT INTO temp.staged_duplicates (seq, old_cd, new_cd) VALUES (?, ?, ?)")
        for (index, split) in splits.enumerated() {
            try insert.execute(arguments: [index + 1, split.old, split.new])
        }
    }

    /// The codes of the stations this version changes, before it is written; nil when the
    /// stations were loaded straight into their empty table (every one of them is new).
    package func stagedStationCodes() throws -> Set<Int64>? {
        guard try !StagingTables.isLoaded(.stations, db) else { return nil }
        var codes = Set<Int64>()
        let statement = try db.makeStatement(sql: "SELECT station_cd FROM \(StagingTables.stagedTable(.stations))")
        try StatementBinding.forEachRow(statement, db) { codes.insert(sqlite3_column_int64($0, 0)) }
        return codes
    }

    /// How many rows of `table` the staged changes close (or, for connections, remove).
    package func closingCount(of table: MasterTable) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(StagingTables.stagedTable(table)) WHERE kind = \(Update.Kind.delete.sql)") ?? 0
    }

    // MARK: Writing

    /// Writes the staged changes as version `number` and checks what only the written
    /// state can tell (every new station of a split exists).
    ///
    /// - Parameter upstreamTables: the tables whose base this version sets itself (an import's
    ///   files, `recordUpstream`); the base of every other imported table keeps what this version
    ///   overwrites.
    package func write(memo: String?, author: String?, settingUpstreamOf upstreamTables: Set<MasterTable> = []) throws {
        try VersionWriter(version: number, memo: memo, author: author, upstreamTables: upstreamTables, declared: declared).write(db)
        try SplitRules.checkNewStationsExist(try stagedSplits(), db)
    }

    /// A staged row that, once written, names a parent row that does not exist.
    package struct DanglingRow {
        /// The row's key as in `updates.key_id`.
        package let key: String
        /// The line of the file it came from; nil for a curated row or a file loaded into an
        /// empty table (its line is in the file's `KeyLines`).
        package let sourceLine: Int?
        package let value: Int64
    }

    /// The first staged row whose reference names no row of its parent, after `write`.
    ///
    /// - Parameter fromFilesOnly: look only at rows that came from a file (rows an import
    ///   closes keep the reference they had), and take the earliest line first.
    package func firstDanglingRow(_ reference: MasterTable.Reference, fromFilesOnly: Bool) throws -> DanglingRow? {
        let (child, column, parent) = (reference.child, reference.column, reference.parent)
        let parentKey = parent.keyColumns[0]
        // A file loaded straight into the master has no lines staged: every row is from the file.
        let fromFilesOnly = try fromFilesOnly && !StagingTables.isLoaded(child, db)
        // The parent's keys as one list looked up for each row, not the parent table's index
        // searched for each row of a table loaded whole. A NULL names no row, as NOT EXISTS says.
        let row = try Row.fetchOne(db, sql: """
            SELECT \(child.keyText(alias: "s")), s.source_line, s.\(column) FROM \(StagingTables.stagedTable(child)) s
            WHERE \(fromFilesOnly ? "s.source_line IS NOT NULL AND " : "")
                  (s.\(column) IS NULL OR s.\(column) NOT IN (SELECT \(parentKey) FROM main.\(parent.name)))
            ORDER BY \(fromFilesOnly ? "s.source_line" : child.keyColumns.map { "s." + $0 }.joined(separator: ", ")) LIMIT 1
            """)
        return row.map { DanglingRow(key: $0[0], sourceLine: $0[1], value: $0[2]) }
    }

    // MARK: Reporting

    /// Counts and describes the version after `write`, with the findings it introduces,
    /// and drops the staging tables.
    ///
    /// - Parameters:
    ///   - tables: the tables the producer staged (their counts are listed even when zero).
    ///   - describeLimit: how many changes `report.changes` describes in words (nil: all).
    ///   - everyChange: where to list every change, whatever `describeLimit` says.
    ///   - committing: whether the caller will commit; a version with no change never is.
    ///   - touchingBefore: the connections that touched a station of `stagedStationCodes` before
    ///     the version (`CheckScope.build`); nil to find them here.
    ///   - checkedAhead: the first version's rules, started before `write` (`FirstVersionCheck`).
    ///   - checkingFindings: false when the caller checks the version after its commit
    ///     (`VersionChecks.introducedFindings`): the report then has no findings yet.
    package func report(tables: [MasterTable], describeLimit: Int?, listingEveryChangeIn everyChange: DescribedChangeFile? = nil,
                        committing: Bool, touchingBefore: [CheckScope.ConnectionKey]? = nil,
                        checkedAhead: FirstVersionCheck? = nil, checkingFindings: Bool = true) throws -> ChangeReport {
        let splits = try stagedSplits().map {
            DescribedChange(table: MasterTable.stations.name, key: "\($0.old) → \($0.new)", kind: .duplicate, name: nil, fields: [])
        }
        // Described with every column of the schema the version is written under.
        let tables = tables.map { declared[$0] }
        let counted = splits.isEmpty || tables.contains(.stations) ? tables : tables + [declared.stations]
        var phases = PhaseLog()
        let describer = ChangeDescriber(version: number)
        let counts = try describer.counts(db, tables: counted)
        phases.done("changes counted")
        let total = counts.values.flatMap(\.values).reduce(0, +)
        // The splits are listed last but always shown: the limit keeps room for them.
        let rowsShown = describeLimit.map { max($0 - splits.count, 0) } ?? Int.max
        var shown: [DescribedChange] = []
        try describer.describe(db, tables: tables) { change in
            if shown.count < rowsShown { shown.append(change) }
            try everyChange?.append(change)
            return everyChange != nil || shown.count < rowsShown
        }
        for split in splits { try everyChange?.append(split) }
        phases.done("changes described")
        var report = ChangeReport(
            version: number, committed: committing && total > 0, counts: counts, warnings: [],
            changes: shown + splits.prefix(describeLimit ?? splits.count), totalChanges: total)
        if total > 0 && checkingFindings {
            report.setFindings(try VersionChecks.introducedFindings(db, declared, version: number, touchingBefore: touchingBefore, checkedAhead: checkedAhead))
        }
        phases.done("findings introduced")
        try StagingTables.drop(db)
        return report
    }

    private func stagedSplits() throws -> [(old: Int64, new: Int64)] {
        try Row.fetchAll(db, sql: "SELECT old_cd, new_cd FROM temp.staged_duplicates ORDER BY seq").map { ($0[0], $0[1]) }
    }
}
