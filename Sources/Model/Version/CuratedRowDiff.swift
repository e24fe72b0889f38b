import GRDB
import StationSchema

/// Stages the rows a curated batch puts (held in `temp.import_<table>`) as what they change
/// in the master, by the same diff rules as an import, in one set-based statement; text is
/// compared by SQLite, NUL bytes included.
///
/// For example, with `stations` holding `1110101 函館 e_status 0` and the batch putting
/// `1110101 函館 e_status 2`, one row `('DELETE', 1110101, 函館, …, e_status 2)` is staged;
/// a put equal to the stored row stages nothing. Rows the batch does not name stay as they are.
package struct CuratedRowDiff {
    package let table: MasterTable

    package func stage(_ db: Database) throws {
        let imported = StagingTables.importTable(table)
        let staged = StagingTables.stagedTable(table)
        let columns = table.columnNames.joined(separator: ", ")
        let firstKey = table.keyColumns[0]

        let differs = table.nonKeyColumns.map { Self.differsSQL("i.\($0.name)", "m.\($0.name)", $0.kind) }
        let kind = Update.Kind.changeSQL(table, stored: "m", new: "i")
        try db.execute(sql: """
            INSERT INTO \(staged) (kind, source_line, \(columns))
            SELECT \(kind), i.source_line, \(table.columnNames.map { "i." + $0 }.joined(separator: ", "))
            FROM \(imported) i LEFT JOIN main.\(table.name) m ON \(table.keyJoin("i", "m"))
            WHERE m.\(firstKey) IS NULL\(differs.isEmpty ? "" : " OR " + differs.joined(separator: " OR "))
            ORDER BY \(table.keyColumns.map { "i." + $0 }.joined(separator: ", "))
            """)
    }

    /// SQL that is true when two values of a column differ under the diff rules, and false
    /// (never NULL, so that `NOT` of it means "equal") otherwise: NULL-aware, and coordinates equal
    /// within `MasterTable.coordinateTolerance`. `FieldChange.differ` is the same rule in Swift.
    package static func differsSQL(_ new: String, _ old: String, _ kind: MasterTable.ColumnKind) -> String {
        switch kind {
        case .coordinate, .real:
            return "((\(new) IS NULL) <> (\(old) IS NULL) OR ifnull(abs(\(new) - \(old)) >= \(MasterTable.coordinateTolerance), 0))"
        default:
            return "\(new) IS NOT \(old)"
        }
    }
}
