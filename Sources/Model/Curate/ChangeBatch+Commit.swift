import GRDB

extension MasterDatabase {
    /// Commits a curated batch as one new data version, in one transaction.
    ///
    /// - Parameter dryRun: stage and check everything, report it, and roll back.
    /// - Throws: `CurationError` for a change the rules refuse (a dangling reference,
    ///   a bad split); the database is unchanged then.
    @discardableResult
    public func commit(_ batch: ChangeBatch, memo: String? = nil, dryRun: Bool = false) throws -> ChangeReport {
        try write { db in
            let report = try commit(batch, memo: memo, dryRun: dryRun, in: db)
            return (report, report.committed)
        }
    }

    /// Stages, checks and writes a batch inside the caller's transaction; the caller
    /// commits only if `report.committed`.
    func commit(_ batch: ChangeBatch, memo: String?, dryRun: Bool, in db: Database) throws -> ChangeReport {
        try StagingTables.create(db)
        var tables: [MasterTable] = []
        for table in MasterTable.all {
            guard let changes = batch.changes(for: table) else { continue }
            tables.append(table)
            try stage(changes, of: table, db)
        }
        var seq = 0
        for split in batch.duplicates {
            seq += 1
            try db.execute(
                sql: "INSERT INTO temp.staged_duplicates (seq, old_cd, new_cd) VALUES (?, ?, ?)",
                arguments: [seq, split.old, split.new])
        }
        let version = try Self.dataVersion(db) + 1
        try SplitRules.check(batch.duplicates, db)
        try VersionWriter(version: version, memo: memo, author: author).write(db)
        try CurationChecks.checkReferences(db)
        try SplitRules.checkNewStationsExist(batch.duplicates, db)
        let describer = ChangeDescriber(version: version)
        let counts = try describer.counts(db, tables: tables.isEmpty && !batch.duplicates.isEmpty ? [.stations] : tables)
        let total = counts.values.flatMap(\.values).reduce(0, +)
        var report = ChangeReport(
            version: version, committed: !dryRun && total > 0, counts: counts, warnings: [],
            changes: try describer.describe(db, tables: tables, limit: nil)
                + batch.duplicates.map { DescribedChange(table: "stations", key: "\($0.old) → \($0.new)", kind: .duplicate, name: nil, fields: []) },
            totalChanges: total)
        if total > 0 { report.findings = try Self.introducedFindings(db, version: version) }
        try StagingTables.drop(db)
        return report
    }

    /// Stages a table's puts through the import's SQL diff (so kinds and comparisons are
    /// the same, and text is compared by SQLite, NUL bytes included), then its removals.
    private func stage(_ changes: ChangeBatch.TableChanges, of table: MasterTable, _ db: Database) throws {
        let columns = table.columnNames
        let insert = try db.makeStatement(sql: """
            INSERT INTO \(StagingTables.importTable(table)) (source_line, \(columns.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")))
            """)
        for (index, row) in changes.rows.enumerated() {
            StatementBinding.bind([(index + 1).databaseValue] + row, to: insert)
            try StatementBinding.step(insert, db)
        }
        try TableDiff(table: table, givenColumns: table.columns).stage(db, closingMissingRows: false)
        let keyCondition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        for key in changes.removals {
            try db.execute(sql: """
                INSERT INTO \(StagingTables.stagedTable(table)) (kind, source_line, \(columns.joined(separator: ", ")))
                SELECT 'DELETE', NULL, \(columns.joined(separator: ", ")) FROM main.\(table.name) WHERE \(keyCondition)
                """, arguments: StatementArguments(key))
        }
    }
}
