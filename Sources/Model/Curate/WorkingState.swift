import GRDB
import StationSchema
import StationSupport

/// The master rows as a plan sees them while it is applied: the database, overlaid with
/// what the plan's earlier operations did, so that a plan may add a company and then
/// transfer a line to it. Every change also goes into `batch`.
package final class WorkingState {
    package typealias Values = [String: DatabaseValue]
    package let db: Database
    private(set) var batch: ChangeBatch
    /// The tables whose columns the rows have.
    package var declared: DeclaredSchema { batch.declared }
    /// Table → key → the row as changed by the plan (nil: removed).
    private var overlay: [String: [[DatabaseValue]: Values?]] = [:]

    /// The plan's view of `db`, whose tables `declared` declares.
    package init(db: Database, _ declared: DeclaredSchema) {
        self.db = db
        batch = ChangeBatch(declared)
    }

    package func row(_ table: MasterTable, key: [DatabaseValue]) throws -> Values? {
        let table = batch.declared[table]
        if let changed = overlay[table.name]?[key] { return changed }
        let condition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        // Read exactly (StatementBinding's text rule): the row is written back whole.
        guard let row = try StatementBinding.rows(db, sql: "SELECT \(columnList(table)) FROM main.\(table.name) WHERE \(condition)", arguments: key).first else {
            return nil
        }
        return Dictionary(uniqueKeysWithValues: zip(table.columnNames, row))
    }

    /// Rows where `column` = `value`, the plan's changes included, in key order.
    package func rows(_ table: MasterTable, where column: String, is value: DatabaseValue) throws -> [Values] {
        let table = batch.declared[table]
        var byKey: [[DatabaseValue]: Values] = [:]
        for row in try StatementBinding.rows(db, sql: "SELECT \(columnList(table)) FROM main.\(table.name) WHERE \(column) = ?", arguments: [value]) {
            let values = Dictionary(uniqueKeysWithValues: zip(table.columnNames, row))
            byKey[key(table, values)] = values
        }
        for (key, changed) in overlay[table.name] ?? [:] {
            if let changed, changed[column] == value { byKey[key] = changed } else { byKey[key] = nil }
        }
        return byKey.sorted { lhs, rhs in
            zip(lhs.key, rhs.key).first { $0 != $1 }.map { (Int64.fromDatabaseValue($0.0) ?? 0) < (Int64.fromDatabaseValue($0.1) ?? 0) } ?? false
        }.map(\.value)
    }

    package func put(_ table: MasterTable, _ values: Values) {
        batch.put(table, values.mapValues { $0 as DatabaseValueConvertible? })
        overlay[table.name, default: [:]][key(table, values)] = .some(values)
    }

    package func remove(_ table: MasterTable, key: [DatabaseValue]) {
        batch.remove(table, key: key)
        overlay[table.name, default: [:]][key] = .some(nil)
    }

    package func duplicate(old: Int64, new: Int64) { batch.duplicate(old: old, new: new) }

    private func columnList(_ table: MasterTable) -> String { table.columnNames.joined(separator: ", ") }

    package func key(_ table: MasterTable, _ values: Values) -> [DatabaseValue] {
        table.keyColumns.map { values[$0] ?? .null }
    }
}
