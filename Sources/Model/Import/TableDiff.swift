import GRDB

/// Fills `temp.staged_<table>` with what importing `temp.import_<table>` changes,
/// by the diff rules of the core issue, in three set-based statements.
///
/// For example, with `stations` holding `1110101 函館 e_status 0` and the file holding
/// `1110101 函館 e_status 2`, one row `('DELETE', 1110101, 函館, …, e_status 2)` is staged;
/// a station only in the database is staged as `DELETE` with `e_status = 2` and the rest
/// unchanged; a connection only in the database is staged as `DELETE` (it will be removed).
struct TableDiff {
    let table: MasterTable
    /// The columns the file gave; the others keep their stored value.
    let givenColumns: [MasterTable.Column]

    /// - Parameter closingMissingRows: an import's file is the whole table, so rows it lacks
    ///   close (or go); a curated batch names only the rows it changes.
    func stage(_ db: Database, closingMissingRows: Bool = true) throws {
        let imported = StagingTables.importTable(table)
        let staged = StagingTables.stagedTable(table)
        let columns = table.columnNames.joined(separator: ", ")
        let firstKey = table.keyColumns[0]
        let given = Set(givenColumns.map(\.name))
        let closed = MasterTable.closedStatus

        let newValues = table.columns.map { column -> String in
            if given.contains(column.name) { return "i.\(column.name)" }
            let defaultValue = column.defaultValue.map(String.init) ?? "NULL"
            return "CASE WHEN m.\(firstKey) IS NULL THEN \(defaultValue) ELSE m.\(column.name) END"
        }.joined(separator: ", ")
        let differs = table.nonKeyColumns.filter { given.contains($0.name) }
            .map { Self.differs("i.\($0.name)", "m.\($0.name)", $0.kind) }
        let kind: String
        if table.closesByStatus {
            kind = """
                CASE WHEN m.\(firstKey) IS NULL THEN 'INSERT'
                     WHEN m.e_status = \(closed) AND i.e_status <> \(closed) THEN 'RESTORE'
                     WHEN m.e_status <> \(closed) AND i.e_status = \(closed) THEN 'DELETE'
                     ELSE 'UPDATE' END
                """
        } else {
            kind = "CASE WHEN m.\(firstKey) IS NULL THEN 'INSERT' ELSE 'UPDATE' END"
        }
        try db.execute(sql: """
            INSERT INTO \(staged) (kind, source_line, \(columns))
            SELECT \(kind), i.source_line, \(newValues)
            FROM \(imported) i LEFT JOIN main.\(table.name) m ON \(table.keyJoin("i", "m"))
            WHERE m.\(firstKey) IS NULL\(differs.isEmpty ? "" : " OR " + differs.joined(separator: " OR "))
            ORDER BY \(table.keyColumns.map { "i." + $0 }.joined(separator: ", "))
            """)

        guard closingMissingRows else { return }
        let missing = "NOT EXISTS (SELECT 1 FROM \(imported) i WHERE \(table.keyJoin("i", "m")))"
        if table.closesByStatus {
            let closedValues = table.columns.map { $0.name == "e_status" ? "\(closed)" : "m.\($0.name)" }.joined(separator: ", ")
            try db.execute(sql: """
                INSERT INTO \(staged) (kind, source_line, \(columns))
                SELECT 'DELETE', NULL, \(closedValues) FROM main.\(table.name) m
                WHERE m.e_status <> \(closed) AND \(missing)
                """)
        } else {
            try db.execute(sql: """
                INSERT INTO \(staged) (kind, source_line, \(columns))
                SELECT 'DELETE', NULL, \(table.columnNames.map { "m." + $0 }.joined(separator: ", ")) FROM main.\(table.name) m
                WHERE \(missing)
                """)
        }
    }

    /// SQL that is true when two values of a column differ under the diff rules:
    /// NULL-aware, and coordinates equal within `MasterTable.coordinateTolerance`.
    static func differs(_ new: String, _ old: String, _ kind: MasterTable.Kind) -> String {
        switch kind {
        case .coordinate, .real:
            return "((\(new) IS NULL) <> (\(old) IS NULL) OR abs(\(new) - \(old)) >= \(MasterTable.coordinateTolerance))"
        default:
            return "\(new) IS NOT \(old)"
        }
    }
}
