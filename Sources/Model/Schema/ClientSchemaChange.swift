import GRDB

/// One step of the client schema: columns (and indexes) that phones get from client schema
/// `version` on. The master gets the columns at once (its migration `id`); phones get them in
/// the first version committed after it, through the `ALTER TABLE` statements their delta
/// begins with, or with the new app's bundled database. docs/clients.md, "Changing the client schema".
///
/// For example, an English station name for visitors, shipped as client schema 2:
///
///     ClientSchemaChange(
///         version: 2, id: "2026-12-stationNameEN",
///         columns: [(.stations, MasterTable.Column("station_name_en", .text, inCSV: false, limit: .name, since: 2))],
///         indexes: ["CREATE INDEX stations_by_english_name ON stations (station_name_en)"])
///
/// Appended to `ClientSchema.shipped` (so to `DeclaredSchema.shipped`), it adds the column to
/// `stations` and `stations_history` in every master on its next write; the next version
/// committed is the first whose release has the column, and a delta from any older version
/// begins with
///
///     ALTER TABLE stations ADD COLUMN station_name_en TEXT;
///     CREATE INDEX stations_by_english_name ON stations (station_name_en);
///     CREATE TABLE IF NOT EXISTS client_schema (version INTEGER NOT NULL);
///     DELETE FROM client_schema;
///     INSERT INTO client_schema (version) VALUES (2);
public struct ClientSchemaChange: Sendable {
    /// A column the change adds to a table.
    public struct AddedColumn: Sendable {
        /// The master table (and client table) it is added to.
        public let table: String
        /// The column, declared `since:` the change's version.
        public let column: MasterTable.Column
    }

    /// The client schema version it brings (2, 3, …: one more than the change before).
    public let version: Int
    /// The master migration's id: frozen once shipped, as every migration.
    public let id: String
    /// The columns it adds.
    public let columns: [AddedColumn]
    /// `CREATE INDEX name ON table (…)` statements phones get with the columns.
    public let indexes: [String]

    /// - Precondition: each column is declared `since: version`, and is optional or has a
    ///   default (SQLite adds a NOT NULL column only with one).
    public init(version: Int, id: String, columns: [(table: MasterTable, column: MasterTable.Column)], indexes: [String] = []) {
        for (_, column) in columns {
            precondition(column.since == version, "\(column.name): a column added by client schema \(version) is declared since: \(version)")
            precondition(!column.isRequired || column.defaultValue != nil, "\(column.name): an added column is optional or has a default")
        }
        self.version = version
        self.id = id
        self.columns = columns.map { AddedColumn(table: $0.table.name, column: $0.column) }
        self.indexes = indexes
    }

    /// The master migration: the column in the table (with its CHECK) and in its history table,
    /// and the data version from which phones have it: the next one committed.
    package func migrate(_ db: Database) throws {
        for added in columns {
            let column = added.column
            var definition = "\(column.name) \(column.sqlType)"
            if let value = column.defaultValue { definition += " NOT NULL DEFAULT \(value)" }
            if let check = column.domainCheck { definition += " CHECK (\(check))" }
            try db.execute(sql: "ALTER TABLE \(added.table) ADD COLUMN \(definition)")
            try db.execute(sql: "ALTER TABLE \(added.table)_history ADD COLUMN \(column.name) \(column.sqlType)")
            try db.execute(sql: "ALTER TABLE \(added.table)_upstream ADD COLUMN \(column.name) \(column.sqlType)")
        }
        try db.execute(sql: "INSERT INTO client_schemas (schema_version, first_data_version) VALUES (?, ?)",
                       arguments: [version, try UpdateLog.newestVersion(db) + 1])
    }
}

extension ClientSchema {
    /// The client schema changes of this code, oldest first. None yet: the first client schema
    /// is the tables as `MasterTable` declares them. Add one to add a column (docs/clients.md).
    package static let shipped: [ClientSchemaChange] = []

    /// The client schema phones have at data `version`: the newest change recorded before it.
    package static func version(atData version: Int, _ db: Database) throws -> Int {
        guard try db.tableExists("client_schemas") else { return 1 }
        return try Int.fetchOne(db, sql: "SELECT MAX(schema_version) FROM client_schemas WHERE first_data_version <= ?", arguments: [version]) ?? 1
    }
}
