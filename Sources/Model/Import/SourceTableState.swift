import GRDB
import StationCSV
import StationSchema
import StationVersion

/// One table as a source's import compares it: the master's rows, what the primary last said of
/// them (`<table>_upstream` where it differs from the master or lacks the row), which columns the
/// primary's file gave, and the source's own last values (`source_values`).
struct TableState {
    let table: MasterTable
    let source: String
    /// The master's rows by key, every column.
    private var master: [[DatabaseValue]: [DatabaseValue]] = [:]
    /// The primary's base, where it is not the master's row: nil values for a row it lacks.
    private var primaryHeldApart: [[DatabaseValue]: [DatabaseValue]?] = [:]
    /// The columns the primary's newest file of the table gave.
    private let primaryColumns: Set<String>
    /// The source's last values by key id and column; a key id with no columns for a row of key alone.
    private var sourceBase: [String: [String: DatabaseValue]] = [:]

    /// How the source writes its values (`SourceProfile.Normalization`).
    private let rule: SourceProfile.TableRule
    private let prefectureNames: [DatabaseValue: String]

    init(_ table: MasterTable, source: String, rule: SourceProfile.TableRule, prefectureNames: [DatabaseValue: String], _ db: Database) throws {
        self.table = table
        self.source = source
        self.rule = rule
        self.prefectureNames = prefectureNames
        let keyCount = table.keyColumns.count
        let columns = table.columnNames.joined(separator: ", ")
        for row in try Row.fetchAll(db, sql: "SELECT \(columns) FROM main.\(table.name)") {
            let values = Array(row.databaseValues)
            master[Array(values.prefix(keyCount))] = values
        }
        for row in try Row.fetchAll(db, sql: "SELECT \(columns), upstream_lacks FROM main.\(table.upstreamTable)") {
            let values = Array(row.databaseValues.dropLast())
            let lacks: Bool = row["upstream_lacks"]
            primaryHeldApart[Array(values.prefix(keyCount))] = lacks ? .some(nil) : .some(values)
        }
        primaryColumns = Set(try UpstreamImport.newest(of: table, db)?.columns ?? [])
        for row in try Row.fetchAll(db, sql: "SELECT key_id, column_name, value FROM source_values WHERE source = ? AND table_name = ?",
                                    arguments: [source, table.name]) {
            let key: String = row[0], column: String = row[1]
            var values = sourceBase[key] ?? [:]
            if !column.isEmpty { values[column] = row[2] }
            sourceBase[key] = values
        }
    }

    /// What the source's import stages of the table: whole new rows, and keys of rows removed.
    struct Staged {
        var rows: [[DatabaseValue]] = []
        var removals: [[DatabaseValue]] = []
    }

    /// The `updates.key_id` text of a key: `1130101`, `11302/1130201/1130202`.
    static func keyID(_ key: some Collection<DatabaseValue>) -> String {
        key.map { value in value.storage.value.map { "\($0)" } ?? "" }.joined(separator: "/")
    }

    /// What the primary last said of the row `key`: its values, or nil when it lacks the row.
    private func primaryRow(_ key: [DatabaseValue]) -> [DatabaseValue]? {
        if let held = primaryHeldApart[key] { return held }
        return master[key]
    }

    private static func isEmpty(_ value: DatabaseValue?) -> Bool {
        guard let value else { return true }
        if value.isNull { return true }
        if case .string(let text) = value.storage { return text.isEmpty }
        return false
    }

    /// Whether two values of `column` are one, in a row of the prefecture `prefecture`.
    private func same(_ a: DatabaseValue, _ b: DatabaseValue, _ column: MasterTable.Column, prefecture: String? = nil) -> Bool {
        if case .coordinate = column.kind, case .double(let x) = a.storage, case .double(let y) = b.storage {
            return MasterTable.isSameCoordinate(x, y)
        }
        if rule.normalized[column.name] == .withoutPrefectureName, let prefecture,
           case .string(let x) = a.storage, case .string(let y) = b.storage {
            func bare(_ text: String) -> Substring { text.hasPrefix(prefecture) ? text.dropFirst(prefecture.count) : Substring(text) }
            return bare(x) == bare(y)
        }
        return a == b
    }

    /// The source's rows merged into `batch` (see `SourceFill`); the stations it adds join
    /// `ownStations`, whose connections it may add.
    mutating func merge(_ read: SourceRows.Table, into staged: inout Staged, disagreements: inout [SourceDisagreement],
                        keptCurated: inout [String], ownStations: inout Set<DatabaseValue>) -> SourceFill.Tally {
        var tally = SourceFill.Tally()
        let keyCount = table.keyColumns.count
        let positions = read.columns.map { column in table.columnNames.firstIndex(of: column.name)! }
        var given = Set<String>()
        for row in read.rows {
            let key = Array(row.prefix(keyCount))
            let keyID = Self.keyID(key)
            given.insert(keyID)
            guard let current = master[key] else {
                guard mayAdd(key, ownStations) else { continue }
                var added = table.columns.map { column in column.defaultValue?.databaseValue ?? .null }
                for (index, position) in positions.enumerated() { added[position] = row[index] }
                staged.rows.append(added)
                if table == .stations { ownStations.insert(key[0]) }
                tally.added += 1
                continue
            }
            let primary = primaryRow(key)
            let prefecture = table.columnNames.firstIndex(of: "pref_cd").flatMap { prefectureNames[current[$0]] }
            if table == .stations, primary == nil, sourceBase[keyID] != nil { ownStations.insert(key[0]) }
            var next = current
            for (index, column) in read.columns.enumerated() where index >= keyCount {
                let position = positions[index], value = row[index]
                let primaryValue = primaryColumns.contains(column.name) ? primary?[position] : nil
                if !Self.isEmpty(primaryValue) {
                    if !Self.isEmpty(value), let primaryValue, !same(primaryValue, value, column, prefecture: prefecture) {
                        disagreements.append(SourceDisagreement(table: table.name, key: keyID, column: column.name,
                                                                primaryValue: primaryValue, sourceValue: value))
                    }
                    continue
                }
                let base = sourceBase[keyID]?[column.name] ?? .null
                guard !same(value, base, column) || sourceBase[keyID] == nil else { continue }
                // A curator's value since the source's last import stands.
                let ours = current[position]
                guard same(ours, base, column) || (Self.isEmpty(ours) && Self.isEmpty(base)) else {
                    if sourceBase[keyID] != nil {
                        keptCurated.append("\(table.name) \(keyID) \(column.name): kept the curator's \(ours), \(source) changed \(base) to \(value)")
                    }
                    continue
                }
                if !same(ours, value, column) { next[position] = value }
            }
            if next != current {
                staged.rows.append(next)
                tally.filled += 1
            }
        }
        tally.closed = closeDropped(given: given, into: &staged)
        return tally
    }

    /// Whether the source may add the row `key` the master lacks: any row but a connection,
    /// which must touch a station of the source's own and be absent in both directions.
    private func mayAdd(_ key: [DatabaseValue], _ ownStations: Set<DatabaseValue>) -> Bool {
        guard table == .connections else { return true }
        guard ownStations.contains(key[1]) || ownStations.contains(key[2]) else { return false }
        return master[[key[0], key[2], key[1]]] == nil
    }

    /// Rows only the source carried (the primary lacks them) that its file no longer has:
    /// closed (`e_status` 2), or for connections removed, as an upstream closure does.
    private func closeDropped(given: Set<String>, into staged: inout Staged) -> Int {
        var closed = 0
        let keyCount = table.keyColumns.count
        for (key, row) in master where primaryRow(key) == nil && sourceBase[Self.keyID(key)] != nil && !given.contains(Self.keyID(key)) {
            if table.closesByStatus {
                guard let status = table.columnNames.firstIndex(of: "e_status"), row[status] != MasterTable.closedStatus.databaseValue else { continue }
                var next = row
                next[status] = MasterTable.closedStatus.databaseValue
                staged.rows.append(next)
            } else {
                staged.removals.append(Array(key.prefix(keyCount)))
            }
            closed += 1
        }
        return closed
    }
}
