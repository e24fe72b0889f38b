import GRDB
import StationSchema
import StationVersion

extension Curator {
    /// Commits a curated batch as one new data version, in one transaction.
    ///
    /// - Parameters:
    ///   - batch: the rows to add, change or remove, and the splits.
    ///   - memo: the version's memo, shown by `versions` and `log`.
    ///   - dryRun: stage and check everything, report it, and roll back.
    /// - Throws: `CurationError` or `VersionError` for a change the rules refuse (a dangling reference,
    ///   a bad split); the database is unchanged then.
    @discardableResult
    public func commit(_ batch: ChangeBatch, memo: String? = nil, dryRun: Bool = false) throws -> ChangeReport {
        try master.write { db in
            let report = try commit(batch, memo: memo, dryRun: dryRun, in: db)
            return (report, report.committed)
        }
    }

    /// Stages, checks and writes a batch inside the caller's transaction; the caller
    /// commits only if `report.committed`.
    package func commit(_ batch: ChangeBatch, memo: String?, dryRun: Bool, in db: Database) throws -> ChangeReport {
        precondition(batch.declared.changes.map(\.id) == master.declared.changes.map(\.id), "a batch made for another schema than the master's handle")
        let version = try PendingVersion(db, master.declared)
        var tables: [MasterTable] = []
        for table in master.declared.tables {
            guard let changes = batch.changes(for: table) else { continue }
            tables.append(table)
            try version.stage(rows: changes.rows, removals: changes.removals, of: table)
        }
        try version.stage(splits: batch.duplicates)
        try version.write(memo: memo, author: master.author)
        for reference in MasterTable.references {
            if let dangling = try version.firstDanglingRow(reference, fromFilesOnly: false) {
                throw CurationError.danglingReference(
                    table: reference.child.name, key: dangling.key, column: reference.column, value: dangling.value, parent: reference.parent.name)
            }
        }
        return try version.report(tables: tables, describeLimit: nil, committing: !dryRun)
    }
}
