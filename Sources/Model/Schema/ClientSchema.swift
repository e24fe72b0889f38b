import GRDB
import StationManifest

/// The schema of the database bundled with the apps: the master tables as clients need
/// them, the user's `completions`, and indexes for the clients' queries. Never `updates`,
/// memos or history.
public enum ClientSchema {
    /// The user's visits: never sent by a delta, carried over after a full download or an app update.
    public static let completionsTable =
        "CREATE TABLE completions (station_cd INTEGER PRIMARY KEY, date TEXT, memo TEXT, updated_at INTEGER)"

    /// Where a client database says its client schema version (`ClientSchemaChange`): a release
    /// writes it, and a delta that brings the schema up rewrites it.
    package static let schemaVersionTable = "client_schema"

    /// The statements that record client schema `version` in a client database: in `schema`, or
    /// unqualified for the phone's own file (a delta).
    package static func recordSchemaVersion(_ version: Int, schema: String? = nil) -> String {
        let table = (schema.map { $0 + "." } ?? "") + schemaVersionTable
        return """
            CREATE TABLE IF NOT EXISTS \(table) (version INTEGER NOT NULL);
            DELETE FROM \(table);
            INSERT INTO \(table) (version) VALUES (\(version));
            """
    }

    /// The client schema version a client database records; 1 for one made before it recorded any.
    package static func recordedVersion(_ db: Database, schema: String = "main") throws -> Int {
        guard try db.tableExists(schemaVersionTable, in: schema) else { return 1 }
        return try Int.fetchOne(db, sql: "SELECT version FROM \(schema).\(schemaVersionTable)") ?? 1
    }

    /// Indexes for what the apps ask (DOMAIN.md): map pins inside bounds by weight, then
    /// distance; lists by operator, line, prefecture, reading and visit date; then those the
    /// client schema changes of `declared` up to `clientSchema` added.
    package static func indexes(_ declared: DeclaredSchema, schema: String = "main", clientSchema: Int) -> [String] {
        (indexDefinitions + declared.changes.filter { $0.version <= clientSchema }.flatMap(\.indexes))
            .map { $0.replacingOccurrences(of: "CREATE INDEX ", with: "CREATE INDEX \(schema).") }
    }

    private static let indexDefinitions = [
        "CREATE INDEX stations_by_weight ON stations (weight, lat, lon)",
        "CREATE INDEX stations_by_area ON stations (lat, lon)",
        "CREATE INDEX stations_by_line ON stations (line_cd, e_sort)",
        "CREATE INDEX stations_by_prefecture ON stations (pref_cd, e_sort)",
        "CREATE INDEX stations_by_reading ON stations (station_name_k)",
        "CREATE INDEX stations_by_group ON stations (station_g_cd)",
        "CREATE INDEX lines_by_company ON lines (company_cd, e_sort)",
        "CREATE INDEX companies_by_sort ON companies (e_sort)",
        "CREATE INDEX completions_by_date ON completions (date)",
    ]

    /// `table`'s client table at client schema `clientSchema`: pass the table of the schema
    /// that declares its columns (`DeclaredSchema`).
    package static func createTable(_ table: MasterTable, schema: String = "main", clientSchema: Int) -> String {
        let single = table.keyColumns.count == 1
        let columns = table.columns(clientSchema: clientSchema).map { column -> String in
            single && column.name == table.keyColumns[0] ? "\(column.name) \(column.sqlType) PRIMARY KEY" : columnDefinition(column)
        }
        let key = single ? "" : ", PRIMARY KEY (\(table.keyOrder))"
        return "CREATE TABLE \(schema).\(table.name) (\(columns.joined(separator: ", "))\(key))\(single ? "" : " WITHOUT ROWID")"
    }

    /// Whether the master's tables declare every column of client schema `clientSchema` with the
    /// type its client file declares (`createTable`), so that a value copied from one to the
    /// other is stored unchanged (same affinity). Read from the master alone: a connection
    /// without the client file attached (a release's twin) asks it too.
    package static func declaresTheMastersTypes(_ db: Database, _ declared: DeclaredSchema, clientSchema: Int) throws -> Bool {
        for table in declared.tables {
            let declared = Dictionary(uniqueKeysWithValues: try Row.fetchAll(
                db, sql: "SELECT name, upper(type) FROM pragma_table_info(?, 'main')", arguments: [table.name]
            ).map { ($0[0] as String, $0[1] as String) })
            for column in table.columns(clientSchema: clientSchema) where declared[column.name] != column.sqlType.uppercased() {
                return false
            }
        }
        return true
    }

    /// A non-key column as a client table declares it, and as a delta's `ALTER TABLE` adds it.
    package static func columnDefinition(_ column: MasterTable.Column) -> String {
        var definition = "\(column.name) \(column.sqlType)"
        if column.isRequired { definition += " NOT NULL" }
        if let value = column.defaultValue { definition += " NOT NULL DEFAULT \(value)" }
        return definition
    }

    /// What brings a client database from client schema `from` up to `to`: the added columns,
    /// then their indexes, then the recorded version. SQLite 3.16 runs them in a transaction.
    package static func upgrade(_ declared: DeclaredSchema, from: Int, to: Int) -> String {
        let steps = declared.changes.filter { $0.version > from && $0.version <= to }
        return steps.flatMap { change in change.columns.map { "ALTER TABLE \($0.table) ADD COLUMN \(columnDefinition($0.column));\n" } }.joined()
            + steps.flatMap(\.indexes).map { $0 + ";\n" }.joined()
            + recordSchemaVersion(to) + "\n"
    }

    package static func createTables(_ db: Database, _ declared: DeclaredSchema, schema: String = "main", clientSchema: Int) throws {
        for table in declared.tables { try db.execute(sql: createTable(table, schema: schema, clientSchema: clientSchema)) }
        try db.execute(sql: completionsTable.replacingOccurrences(of: "CREATE TABLE ", with: "CREATE TABLE \(schema)."))
        try db.execute(sql: recordSchemaVersion(clientSchema, schema: schema))
    }

    /// A client database's schema as a phone's queries meet it: each table's columns (name,
    /// type, NOT NULL, default, key), its indexes' names and columns, and the recorded schema
    /// version. Two files that took different paths to one version must have equal ones.
    package static func shape(_ db: Database, schema: String = "main") throws -> [String] {
        var lines = ["client_schema \(try recordedVersion(db, schema: schema))"]
        for table in MasterTable.all.map(\.name) + [UserRecords.table] {
            for row in try Row.fetchAll(db, sql: "SELECT name, upper(type), \"notnull\", dflt_value, pk FROM pragma_table_info(?, ?)", arguments: [table, schema]) {
                lines.append("\(table).\(row[0] as String) \(row[1] as String) notnull=\(row[2] as Int) default=\(row[3] as String? ?? "-") pk=\(row[4] as Int)")
            }
        }
        for row in try Row.fetchAll(db, sql: """
            SELECT il.name, group_concat(ii.name, ',') FROM \(schema).sqlite_master m, pragma_index_list(m.name, ?) il, pragma_index_info(il.name, ?) ii
            WHERE m.type = 'table' AND il.origin = 'c' GROUP BY il.name ORDER BY il.name
            """, arguments: [schema, schema]) {
            lines.append("index \(row[0] as String) (\(row[1] as String))")
        }
        return lines
    }
}
