import GRDB
import StationSchema

/// SQL for the rows of a master table as they were at a past data version.
///
/// The current table holds each key's newest state; `<table>_history` holds every
/// superseded state with `valid_to`, the version whose change replaced it. So the state
/// of a key at version v is:
/// - the current row, if no `updates` row changed the key after v;
/// - else the history row whose `valid_to` is the key's first change after v;
/// - and nothing if that first change was its `INSERT` (no history row is written for one).
///
/// For example, station 1122903 inserted at version 1 and renamed 佐貫 → 龍ケ崎市 at 2:
/// at version 1 the first change after 1 is version 2's UPDATE, whose history row holds 佐貫;
/// at version 0 the first change is version 1's INSERT, which has no history row: absent.
package struct VersionedState {
    package let table: MasterTable
    package let version: Int
    /// The schema holding the master tables: `main`, or the name a release build attaches it as.
    package var schema = "main"
    /// When the version is the newest, the current rows are the state: no lookups.
    package var isNewest = false

    package init(table: MasterTable, version: Int, schema: String = "main", isNewest: Bool = false) {
        self.table = table
        self.version = version
        self.schema = schema
        self.isNewest = isNewest
    }

    /// `SELECT key_id, <columns>` of the table at `version`; `keys` (SQL with a `key_id`
    /// column) restricts it to some keys.
    package func select(restrictedTo keys: String? = nil) -> String {
        let columns = table.columnNames
        let current = "\(schema).\(table.name)"
        let history = "\(schema).\(table.historyTable)"
        let changedLater = UpdateLog.changeAfter(version, of: table, key: table.keyText(alias: "m"), schema: schema)
        var currentConditions: [String] = []
        if !isNewest { currentConditions.append("NOT EXISTS (\(changedLater))") }
        if let keys { currentConditions.append(keyMatch(alias: "m", keys: keys)) }
        let currentRows = """
            SELECT \(table.keyText(alias: "m")) AS key_id, \(columns.map { "m." + $0 }.joined(separator: ", "))
            FROM \(current) m\(currentConditions.isEmpty ? "" : " WHERE " + currentConditions.joined(separator: " AND "))
            """
        if isNewest { return currentRows }
        let historyRows = """
            SELECT h.key_id, \(columns.map { "h." + $0 }.joined(separator: ", ")) FROM \(history) h
            WHERE h.valid_to > \(version)\(keys.map { " AND h.key_id IN (SELECT key_id FROM \($0))" } ?? "")
            AND h.valid_to = (\(UpdateLog.firstChangeAfter(version, of: table, key: "h.key_id", schema: schema)))
            """
        return currentRows + "\nUNION ALL\n" + historyRows
    }

    /// `SELECT key_id, <columns>`: the states just before `version` of `keys` (SQL with a
    /// `key_id` column), keys that `version` updated, closed or restored: the history rows it
    /// superseded, found by their primary key in the order of `keys` (CROSS JOIN). `select` of
    /// `version - 1` gives the same rows, but joined with another state SQLite probed one with
    /// every row of the other: minutes for a past version's moved stations at a million.
    /// (A delta joins the history the same way, by each change's `valid_to`: `DeltaWriter`.)
    package static func statesBefore(_ version: Int, of keys: String, in table: MasterTable, schema: String = "main") -> String {
        """
        SELECT c.key_id, \(table.columnNames.map { "h." + $0 }.joined(separator: ", "))
        FROM (\(keys)) c CROSS JOIN \(schema).\(table.historyTable) h ON h.key_id = c.key_id AND h.valid_to = \(version)
        """
    }

    /// Restricts alias's rows to `keys`, matched through the table's key index: `key_id`
    /// is split back into its integer parts (`11302/1130201/1130202` → 11302, 1130201, 1130202).
    private func keyMatch(alias: String, keys: String) -> String {
        let columns = table.keyColumns.map { "\(alias).\($0)" }.joined(separator: ", ")
        let parts = Self.keyParts("key_id", count: table.keyColumns.count).map { "CAST(\($0) AS INTEGER)" }.joined(separator: ", ")
        return table.keyColumns.count == 1
            ? "\(columns) IN (SELECT \(parts) FROM \(keys))"
            : "(\(columns)) IN (SELECT \(parts) FROM \(keys))"
    }

    /// SQL for the `/`-separated parts of a key text.
    package static func keyParts(_ text: String, count: Int) -> [String] {
        var parts: [String] = []
        var rest = text
        for _ in 1..<count {
            parts.append("substr(\(rest), 1, instr(\(rest), '/') - 1)")
            rest = "substr(\(rest), instr(\(rest), '/') + 1)"
        }
        return parts + [rest]
    }
}
