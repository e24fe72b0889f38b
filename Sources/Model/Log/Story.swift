import GRDB
import StationSchema

/// One step of a row's story: an `updates` row and what it changed.
public struct StoryEntry: Sendable, Equatable, Encodable {
    /// The `updates` row.
    public var update: Update
    /// What it changed, in words (`DescribedChange`).
    public var change: DescribedChange
    /// The source whose import made its version, with that snapshot; nil for a curated version.
    public var source: VersionSource?

    /// An `updates` row, what it changed and where that came from.
    public init(update: Update, change: DescribedChange, source: VersionSource? = nil) {
        self.update = update
        self.change = change
        self.source = source
    }

    private enum CodingKeys: String, CodingKey { case update, name, fields, source }

    /// `{"update": {…the updates row…}, "name": …, "fields": [{"column", "old", "new"}], "source": {"name", "snapshot_date"} or null}`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(update, forKey: .update)
        try container.encode(change.name, forKey: .name)
        try container.encode(change.typedFields, forKey: .fields)
        try container.encode(source, forKey: .source)
    }

    /// `v2 UPDATE stations 1122903 龍ケ崎市: station_name 佐貫 → 龍ケ崎市`
    public var summary: String { "v\(update.userVersion) " + change.summary }
}

extension LogReader {
    /// A key's whole story across versions: every `updates` row naming it (its splits
    /// included), each with the columns it changed, old → new, read from the history.
    public func story(key: String, table: String? = nil, newestFirst: Bool = false) throws -> [StoryEntry] {
        var story: [StoryEntry] = []
        try forEachDescribedUpdate(LogFilter(table: table, key: key, newestFirst: newestFirst)) { story.append($0) }
        return story
    }

    /// What imports kept or decided about a key beside its changes (`merge_notes`), oldest first:
    /// the curated values an import kept, with the version each came from; conflicts decided;
    /// a provisional row adopted.
    public func mergeNotes(key: String, table: String? = nil) throws -> [MergeNote] {
        try master.read { db in try MergeNote.notes(table: table, key: key, db) }
    }
}

extension DescribedChange {
    /// What one `updates` row changed: the columns, old → new, read from the history, and the
    /// row's name after the change; an INSERT lists the new row's non-NULL columns.
    package static func reading(_ update: Update, _ declared: DeclaredSchema, _ db: Database) throws -> DescribedChange {
        if update.split != nil {
            return DescribedChange(table: update.subject.table, key: update.subject.key, kind: .duplicate, name: nil, fields: [])
        }
        guard let table = declared.table(named: update.tableName) else {
            return DescribedChange(table: update.tableName, key: update.keyID, kind: update.type, name: nil, fields: [])
        }
        let before = update.type == .insert ? nil : try historyRow(table, key: update.keyID, validTo: update.userVersion, db)
        let after = try state(table, key: update.keyID, after: update.userVersion, db)
        func values(_ row: Row?) -> [DatabaseValue]? { row.map { row in table.columns.map { row[$0.name] ?? .null } } }
        return DescribedChange(table, key: update.keyID, kind: update.type, old: values(before), new: values(after))
    }

    private static func historyRow(_ table: MasterTable, key: String, validTo: Int, _ db: Database) throws -> Row? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM \(table.historyTable) WHERE key_id = ? AND valid_to = ?"),
                         arguments: [key, validTo])
    }

    /// The key's state once version `version` was committed: the history row that a later
    /// change superseded, or the current row, found by its key columns (through the table's
    /// primary key: matching the key's text would read every row for every log line).
    private static func state(_ table: MasterTable, key: String, after version: Int, _ db: Database) throws -> Row? {
        if let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT * FROM \(table.historyTable) WHERE key_id = ? AND valid_to > ? ORDER BY valid_to LIMIT 1
            """), arguments: [key, version]) {
            return row
        }
        let parts = key.split(separator: "/").map { Int64($0) }
        guard parts.count == table.keyColumns.count, !parts.contains(nil) else { return nil }
        return try Row.fetchOne(db.cachedStatement(sql: """
            SELECT * FROM \(table.name) WHERE \(table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND "))
            """), arguments: StatementArguments(parts))
    }
}
