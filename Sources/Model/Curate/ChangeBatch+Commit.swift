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
            try VersionWriter(version: version, memo: memo).write(db)
            try CurationChecks.checkReferences(db)
            try SplitRules.checkNewStationsExist(batch.duplicates, db)
            let describer = ChangeDescriber(version: version)
            let counts = try describer.counts(db, tables: tables.isEmpty && !batch.duplicates.isEmpty ? [.stations] : tables)
            let total = counts.values.flatMap(\.values).reduce(0, +)
            let report = ChangeReport(
                version: version, committed: !dryRun && total > 0, counts: counts, warnings: [],
                changes: try describer.describe(db, tables: tables, limit: nil), totalChanges: total)
            try StagingTables.drop(db)
            return (report, report.committed)
        }
    }

    /// Stages each put against the current row: no row is INSERT, an e_status change to or
    /// from 2 is DELETE or RESTORE, another difference is UPDATE, no difference is nothing.
    private func stage(_ changes: ChangeBatch.TableChanges, of table: MasterTable, _ db: Database) throws {
        let columns = table.columnNames
        let keyCondition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        let current = try db.makeStatement(sql: "SELECT \(columns.joined(separator: ", ")) FROM main.\(table.name) WHERE \(keyCondition)")
        let insert = try db.makeStatement(sql: """
            INSERT INTO \(StagingTables.stagedTable(table)) (kind, source_line, \(columns.joined(separator: ", ")))
            VALUES (?, NULL, \(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            """)
        let statusIndex = columns.firstIndex(of: "e_status")
        for row in changes.rows {
            let key = table.keyColumns.map { row[columns.firstIndex(of: $0)!] }
            let old = try Row.fetchOne(current, arguments: StatementArguments(key))
            let kind: Update.Kind
            if let old {
                let oldValues = columns.indices.map { old[$0] as DatabaseValue }
                let differs = zip(zip(row, oldValues), table.columns).contains { pair, column in
                    ChangeDescriber.differ(pair.0, pair.1, column.kind)
                }
                if !differs { continue }
                if let statusIndex, table.closesByStatus {
                    let wasClosed = oldValues[statusIndex] == MasterTable.closedStatus.databaseValue
                    let isClosed = row[statusIndex] == MasterTable.closedStatus.databaseValue
                    kind = isClosed && !wasClosed ? .delete : (!isClosed && wasClosed ? .restore : .update)
                } else {
                    kind = .update
                }
            } else {
                kind = .insert
            }
            StatementBinding.bind([kind.rawValue.databaseValue] + row, to: insert)
            try StatementBinding.step(insert, db)
        }
        for key in changes.removals {
            guard let old = try Row.fetchOne(current, arguments: StatementArguments(key)) else { continue }
            StatementBinding.bind([Update.Kind.delete.rawValue.databaseValue] + columns.indices.map { old[$0] as DatabaseValue }, to: insert)
            try StatementBinding.step(insert, db)
        }
    }
}
