import GRDB
import StationSchema

/// Curated changes to commit as one data version: new states of rows, rows to remove,
/// and station splits.
///
/// A batch holds the *full* new state of each row it touches; the kind of each change
/// (`INSERT`, `UPDATE`, `DELETE` for e_status → 2, `RESTORE` for e_status from 2) is
/// decided against the current row at commit, exactly as for an import. For example:
///
///     var batch = ChangeBatch(database.declared)
///     batch.put(.stations, ["station_cd": 9920607, …, "line_cd": 99206, "e_status": 0])
///     batch.duplicate(old: 1120101, new: 9920607)
///     try database.commit(batch, memo: "Aoimori Railway takes over Hachinohe–Aomori")
public struct ChangeBatch: Sendable {
    /// One table's new row states, in the order they were put; a later put of a key replaces it.
    package struct TableChanges: Sendable {
        package var rows: [[DatabaseValue]] = []
        package var positions: [[DatabaseValue]: Int] = [:]
        package var removals: [[DatabaseValue]] = []
    }

    /// The tables whose columns the rows have: the master's it is committed to.
    public let declared: DeclaredSchema
    private(set) var changes: [String: TableChanges] = [:]
    /// The splits recorded, in order: old station → new station.
    public private(set) var duplicates: [(old: Int64, new: Int64)] = []

    /// An empty batch of rows with `declared`'s columns.
    public init(_ declared: DeclaredSchema = .shipped) { self.declared = declared }

    /// Whether the batch changes nothing and records no split.
    public var isEmpty: Bool { changes.isEmpty && duplicates.isEmpty }

    /// Sets a row's whole new state. Missing columns are NULL (`weight`: 13).
    public mutating func put(_ table: MasterTable, _ values: [String: DatabaseValueConvertible?]) {
        let table = declared[table]
        for name in values.keys { precondition(table.column(named: name) != nil, "\(table.name) has no column \(name)") }
        let row = table.columns.map { column -> DatabaseValue in
            if let value = values[column.name], let value { return value.databaseValue }
            return column.defaultValue?.databaseValue ?? .null
        }
        let key = table.keyColumns.map { row[table.columnNames.firstIndex(of: $0)!] }
        var tableChanges = changes[table.name] ?? TableChanges()
        tableChanges.removals.removeAll { $0 == key }
        if let position = tableChanges.positions[key] {
            tableChanges.rows[position] = row
        } else {
            tableChanges.positions[key] = tableChanges.rows.count
            tableChanges.rows.append(row)
        }
        changes[table.name] = tableChanges
    }

    /// Removes a connection or prefecture. Companies, lines and stations are closed instead
    /// (a `put` with `e_status` 2): user records point at their codes.
    public mutating func remove(_ table: MasterTable, key: [DatabaseValueConvertible]) {
        precondition(!table.closesByStatus, "\(table.name) rows are closed (e_status = 2), never removed")
        let table = declared[table]
        let key = key.map(\.databaseValue)
        var tableChanges = changes[table.name] ?? TableChanges()
        if let position = tableChanges.positions.removeValue(forKey: key) {
            tableChanges.rows.remove(at: position)
            tableChanges.positions = Dictionary(uniqueKeysWithValues: tableChanges.rows.enumerated().map { index, row in
                (table.keyColumns.map { row[table.columnNames.firstIndex(of: $0)!] }, index)
            })
        }
        if !tableChanges.removals.contains(key) { tableChanges.removals.append(key) }
        changes[table.name] = tableChanges
    }

    /// Records that station `old` split and `new` continues it: clients copy the user's
    /// records of `old` to `new`. `new` must exist once the batch is applied.
    public mutating func duplicate(old: Int64, new: Int64) {
        duplicates.append((old, new))
    }

    package func changes(for table: MasterTable) -> TableChanges? { changes[table.name] }
}
