import GRDB
import StationSchema

/// Reads what a `PendingVersion` staged, after `VersionWriter` has run (inside the same
/// transaction), and counts and describes it: the old state of each changed row is the
/// history row the version wrote.
package struct ChangeDescriber {
    package let version: Int

    package func counts(_ db: Database, tables: [MasterTable]) throws -> [String: [String: Int]] {
        // As `VersionWriter` kept them when it wrote the version, rather than the staged rows counted again.
        let kept = try UpdateLog.countsByVersion(db, only: version)[version] ?? [:]
        var counts: [String: [String: Int]] = [:]
        for table in tables {
            var perKind = Dictionary(uniqueKeysWithValues: [Update.Kind.insert, .update, .delete, .restore].map { ($0.rawValue, 0) })
            for (kind, count) in kept[table.name] ?? [:] where kind != Update.Kind.duplicate.rawValue { perKind[kind] = count }
            counts[table.name] = perKind
        }
        if let duplicates = kept[MasterTable.stations.name]?[Update.Kind.duplicate.rawValue], duplicates > 0 {
            counts[MasterTable.stations.name, default: [:]][Update.Kind.duplicate.rawValue] = duplicates
        }
        return counts
    }

    /// Changes of existing rows first (they are what a curator checks), then new rows;
    /// each group in table order, then key order. `each` returns whether to go on.
    package func describe(_ db: Database, tables: [MasterTable], each: (DescribedChange) throws -> Bool) throws {
        for condition in ["s.kind <> \(Update.Kind.insert.sql)", "s.kind = \(Update.Kind.insert.sql)"] {
            for table in tables {
                guard try describe(db, table: table, where: condition, each: each) else { return }
            }
        }
    }

    /// Whether `each` asked for more.
    private func describe(_ db: Database, table: MasterTable, where condition: String, each: (DescribedChange) throws -> Bool) throws -> Bool {
        let columns = table.columnNames
        let sql = """
            SELECT s.kind, \(table.keyText(alias: "s")), \(columns.map { "s." + $0 }.joined(separator: ", ")), \
            \(columns.map { "h." + $0 }.joined(separator: ", "))
            FROM \(StagingTables.stagedTable(table)) s
            LEFT JOIN main.\(table.historyTable) h ON h.key_id = \(table.keyText(alias: "s")) AND h.valid_to = ?
            WHERE \(condition)
            ORDER BY \(table.keyColumns.map { "s." + $0 }.joined(separator: ", "))
            """
        let rows = try Row.fetchCursor(db, sql: sql, arguments: [version])
        while let row = try rows.next() {
            let kind = Update.Kind(rawValue: row[0])!
            let new = (0..<columns.count).map { row[2 + $0] as DatabaseValue }
            let old = kind == .insert ? nil : (0..<columns.count).map { row[2 + columns.count + $0] as DatabaseValue }
            let change = DescribedChange(table, key: row[1], kind: kind, old: old, new: new)
            guard try each(change) else { return false }
        }
        return true
    }
}
