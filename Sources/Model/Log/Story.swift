import GRDB

/// One step of a row's story: an `updates` row and what it changed.
public struct StoryEntry: Sendable, Equatable, Encodable {
    public var update: Update
    public var change: DescribedChange

    private enum CodingKeys: String, CodingKey { case update, name, fields }

    /// `{"update": {…the updates row…}, "name": …, "fields": [{"column", "old", "new"}]}`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(update, forKey: .update)
        try container.encode(change.name, forKey: .name)
        try container.encode(change.fields, forKey: .fields)
    }

    /// `v2 UPDATE stations 1122903 龍ケ崎市: station_name 佐貫 → 龍ケ崎市`
    public var summary: String { "v\(update.userVersion) " + change.summary }
}

extension MasterDatabase {
    /// A key's whole story across versions: every `updates` row naming it (its splits
    /// included), each with the columns it changed, old → new, read from the history.
    public func story(key: String, table: String? = nil) throws -> [StoryEntry] {
        let updates = try log(LogFilter(table: table, key: key))
        return try read { db in
            try updates.map { update in
                if update.type == .duplicate {
                    return StoryEntry(update: update, change: DescribedChange(
                        table: "stations", key: "\(update.tableName) → \(update.keyID)", kind: .duplicate, name: nil, fields: []))
                }
                guard let table = MasterTable.named(update.tableName) else {
                    return StoryEntry(update: update, change: DescribedChange(table: update.tableName, key: update.keyID, kind: update.type, name: nil, fields: []))
                }
                let before = update.type == .insert ? nil : try Self.historyRow(table, key: update.keyID, validTo: update.userVersion, db)
                let after = try Self.state(table, key: update.keyID, after: update.userVersion, db)
                var fields: [FieldChange] = []
                for column in table.columns {
                    let old: DatabaseValue = before?[column.name] ?? .null
                    let new: DatabaseValue = after?[column.name] ?? .null
                    if update.type == .insert {
                        if !table.keyColumns.contains(column.name), let value = FieldChange.text(new) {
                            fields.append(FieldChange(column: column.name, old: nil, new: value))
                        }
                    } else if FieldChange.differ(new, old, column.kind) {
                        fields.append(FieldChange(column: column.name, old: FieldChange.text(old), new: FieldChange.text(new)))
                    }
                }
                let nameColumn = table.columns.first { $0.name.hasSuffix("_name") }?.name
                let name = nameColumn.flatMap { (after ?? before)?[$0] }.flatMap(FieldChange.text)
                return StoryEntry(update: update, change: DescribedChange(table: table.name, key: update.keyID, kind: update.type, name: name, fields: fields))
            }
        }
    }

    private static func historyRow(_ table: MasterTable, key: String, validTo: Int, _ db: Database) throws -> Row? {
        try Row.fetchOne(db, sql: "SELECT * FROM \(table.historyTable) WHERE key_id = ? AND valid_to = ?", arguments: [key, validTo])
    }

    /// The key's state once version `version` was committed: the history row that a later
    /// change superseded, or the current row.
    private static func state(_ table: MasterTable, key: String, after version: Int, _ db: Database) throws -> Row? {
        if let row = try Row.fetchOne(db, sql: """
            SELECT * FROM \(table.historyTable) WHERE key_id = ? AND valid_to > ? ORDER BY valid_to LIMIT 1
            """, arguments: [key, version]) {
            return row
        }
        return try Row.fetchOne(db, sql: "SELECT * FROM \(table.name) WHERE \(table.keyText()) = ?", arguments: [key])
    }
}
