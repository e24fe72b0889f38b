import GRDB

/// The schema of the database bundled with the apps: the master tables as clients need
/// them, the user's `completions`, and indexes for the clients' queries. Never `updates`,
/// memos or history.
public enum ClientSchema {
    public static let completionsTable =
        "CREATE TABLE completions (station_cd INTEGER PRIMARY KEY, date TEXT, memo TEXT, updated_at INTEGER)"

    /// Indexes for what the apps ask (DOMAIN.md): map pins inside bounds by weight, then
    /// distance; lists by operator, line, prefecture, reading and visit date.
    static func indexes(schema: String = "main") -> [String] {
        indexDefinitions.map { $0.replacingOccurrences(of: "CREATE INDEX ", with: "CREATE INDEX \(schema).") }
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

    static func createTable(_ table: MasterTable, schema: String = "main") -> String {
        let single = table.keyColumns.count == 1
        let columns = table.columns.map { column -> String in
            var definition = "\(column.name) \(column.sqlType)"
            if single && column.name == table.keyColumns[0] { definition += " PRIMARY KEY" }
            else if column.isRequired { definition += " NOT NULL" }
            if let value = column.defaultValue { definition += " NOT NULL DEFAULT \(value)" }
            return definition
        }
        let key = single ? "" : ", PRIMARY KEY (\(table.keyOrder))"
        return "CREATE TABLE \(schema).\(table.name) (\(columns.joined(separator: ", "))\(key))\(single ? "" : " WITHOUT ROWID")"
    }

    /// Whether the master's tables declare every client column with the client's type, so
    /// that a value copied from one to the other is stored unchanged (same affinity).
    static func declaresTheMastersTypes(_ db: Database, client: String = "client") throws -> Bool {
        for table in MasterTable.all {
            let sql = "SELECT name, upper(type) FROM pragma_table_info(?, ?)"
            let master = Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: sql, arguments: [table.name, "main"]).map { ($0[0] as String, $0[1] as String) })
            for row in try Row.fetchAll(db, sql: sql, arguments: [table.name, client]) where master[row[0] as String] != row[1] as String {
                return false
            }
        }
        return true
    }

    static func createTables(_ db: Database, schema: String = "main") throws {
        for table in MasterTable.all { try db.execute(sql: createTable(table, schema: schema)) }
        try db.execute(sql: completionsTable.replacingOccurrences(of: "CREATE TABLE ", with: "CREATE TABLE \(schema)."))
    }
}
