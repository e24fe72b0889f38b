import GRDB

/// What a delta holds, for the preview a curator asks for and the manifest.
public struct DeltaSummary: Codable, Sendable, Equatable {
    public var from: Int
    public var to: Int
    /// Table → `upsert` (a row new to the client, whole), `update` (changed columns only),
    /// `delete` (a removed connection or prefecture) → statements.
    public var statements: [String: [String: Int]]
    public var duplicates: Int

    public var totalStatements: Int { statements.values.flatMap(\.values).reduce(0, +) + duplicates }

    /// The kinds of statement a delta holds per table.
    public static let statementKinds = ["upsert", "update", "delete"]
}

/// Writes the SQL that brings a client at data version `from` to version `to`.
///
/// The script, run by the app inside its own transaction:
///
///     -- StationAdmin delta from data version 3 to 7 (…)
///     DROP TABLE IF EXISTS temp.station_admin_guard;
///     CREATE TEMP TABLE station_admin_guard (user_version INTEGER
///         CONSTRAINT "this delta needs data version 3" CHECK (user_version = 3));
///     INSERT INTO temp.station_admin_guard SELECT user_version FROM pragma_user_version;
///     DROP TABLE temp.station_admin_guard;
///     -- stations
///     UPDATE stations SET line_cd = 99206 WHERE station_cd = 1120102;
///     INSERT OR REPLACE INTO stations (station_cd, …) VALUES (9920607, 1120101, '八戸', …);
///     -- connections: 1 row removed
///     DELETE FROM connections WHERE line_cd = 11201 AND station_cd1 = 1120101 AND station_cd2 = 1120102;
///     -- station splits: copy each record of the old station to the new one, keeping any the user already has
///     INSERT OR IGNORE INTO completions (station_cd, date, memo, updated_at)
///         SELECT 9920607, date, memo, updated_at FROM completions WHERE station_cd = 1120101;
///     PRAGMA user_version = 7;
///
/// Each key changed after `from` appears once, in its state at `to`: a row the client has
/// as an UPDATE of the columns that differ, a row it lacks whole; a key whose state
/// at `to` equals its state at `from` does not appear. The guard's failed CHECK makes the
/// client roll back a delta meant for another version. Statements are SQLite 3.16-safe:
/// no UPSERT, no RETURNING, no window functions. Nothing touches `completions` but the
/// INSERT OR IGNORE of splits, which never overwrites a record.
struct DeltaWriter {
    let from: Int
    let to: Int
    let newest: Int
    let transaction: Bool

    func write(_ db: Database, into sink: ByteSink) throws -> DeltaSummary {
        var summary = DeltaSummary(from: from, to: to, statements: [:], duplicates: 0)
        try sink.write("""
            -- StationAdmin delta from data version \(from) to \(to).
            -- Run it inside one transaction: it fails, and so rolls back, unless user_version is \(from).

            """)
        if transaction { try sink.write("BEGIN TRANSACTION;\n") }
        try sink.write("""
            DROP TABLE IF EXISTS temp.station_admin_guard;
            CREATE TEMP TABLE station_admin_guard (user_version INTEGER CONSTRAINT "this delta needs data version \(from)" CHECK (user_version = \(from)));
            INSERT INTO temp.station_admin_guard SELECT user_version FROM pragma_user_version;
            DROP TABLE temp.station_admin_guard;

            """)
        for table in MasterTable.all {
            let counts = try writeTable(table, db, sink)
            if !counts.isEmpty { summary.statements[table.name] = counts }
        }
        let splits = try UpdateLog.splits(db, after: from, through: to)
        if !splits.isEmpty {
            try sink.write("-- station splits: copy each record of the old station to the new one, keeping any the user already has\n")
            for split in splits {
                try sink.write("INSERT OR IGNORE INTO completions (station_cd, date, memo, updated_at) SELECT \(split.new), date, memo, updated_at FROM completions WHERE station_cd = \(split.old);\n")
            }
            summary.duplicates = splits.count
        }
        try sink.write("PRAGMA user_version = \(to);\n")
        if transaction { try sink.write("COMMIT;\n") }
        return summary
    }

    /// Runs in the caller's read transaction, in temp tables only: the touched keys and both states are
    /// materialised in indexed temp tables, so the final join is by key, not quadratic.
    private func writeTable(_ table: MasterTable, _ db: Database, _ sink: ByteSink) throws -> [String: Int] {
        if from == 0 { return try writeWholeTable(table, db, sink) }
        let newState = VersionedState(table: table, version: to, isNewest: to >= newest).select(restrictedTo: "temp.delta_touched")
        let oldState = VersionedState(table: table, version: from).select(restrictedTo: "temp.delta_touched")
        try db.execute(sql: """
            DROP TABLE IF EXISTS temp.delta_touched;
            DROP TABLE IF EXISTS temp.delta_new;
            DROP TABLE IF EXISTS temp.delta_old;
            CREATE TEMP TABLE delta_touched (key_id TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT INTO temp.delta_touched \(UpdateLog.changedKeys(of: table, after: from, through: to, distinct: true));
            CREATE TEMP TABLE delta_new AS \(newState);
            CREATE UNIQUE INDEX temp.delta_new_by_key ON delta_new (key_id);
            CREATE TEMP TABLE delta_old AS \(oldState);
            CREATE UNIQUE INDEX temp.delta_old_by_key ON delta_old (key_id);
            """)
        let columns = table.columnNames
        let sameRow = columns.map { "n.\($0) IS o.\($0)" }.joined(separator: " AND ")
        let upsert = SQLLiteral.upsert(table, alias: "n")
        let update = SQLLiteral.update(table, new: "n", old: "o")
        let delete = "'DELETE FROM \(table.name) WHERE ' || "
            + table.keyColumns.map { "'\($0) = ' || quote(o.\($0))" }.joined(separator: " || ' AND ' || ") + " || ';'"
        let order = table.keyColumns.map { "COALESCE(n.\($0), o.\($0))" }.joined(separator: ", ")
        // A row the client has gets only its changed columns; a row it lacks comes whole.
        let sql = """
            SELECT CASE WHEN n.key_id IS NULL THEN 'delete' WHEN o.key_id IS NULL THEN 'upsert' ELSE 'update' END,
                   CASE WHEN n.key_id IS NULL THEN \(delete) WHEN o.key_id IS NULL THEN \(upsert) ELSE \(update) END
            FROM temp.delta_touched t
            LEFT JOIN temp.delta_new n ON n.key_id = t.key_id
            LEFT JOIN temp.delta_old o ON o.key_id = t.key_id
            WHERE (n.key_id IS NOT NULL OR o.key_id IS NOT NULL)
              AND NOT (n.key_id IS NOT NULL AND o.key_id IS NOT NULL AND \(sameRow))
            ORDER BY n.key_id IS NOT NULL, \(order)
            """
        var counts: [String: Int] = [:]
        let cursor = try Row.fetchCursor(db, sql: sql)
        while let row = try cursor.next() {
            if counts.isEmpty { try sink.write("-- \(table.name)\n") }
            counts[row[0] as String, default: 0] += 1
            try writeStatement(row, column: 1, sink)
        }
        if !counts.isEmpty { try sink.write("\n") }
        try db.execute(sql: "DROP TABLE temp.delta_touched; DROP TABLE temp.delta_new; DROP TABLE temp.delta_old")
        return counts
    }

    /// A client at version 0 has no rows: its delta is every row of version `to`, in key order,
    /// streamed without the temp tables a key-by-key comparison needs.
    private func writeWholeTable(_ table: MasterTable, _ db: Database, _ sink: ByteSink) throws -> [String: Int] {
        let state = VersionedState(table: table, version: to, isNewest: to >= newest).select()
        let upsert = SQLLiteral.upsert(table, alias: nil)
        let cursor = try Row.fetchCursor(db, sql: "SELECT \(upsert) FROM (\(state)) ORDER BY \(table.keyOrder)")
        var upserts = 0
        while let row = try cursor.next() {
            if upserts == 0 { try sink.write("-- \(table.name)\n") }
            upserts += 1
            try writeStatement(row, column: 0, sink)
        }
        if upserts > 0 { try sink.write("\n") }
        return upserts > 0 ? ["upsert": upserts] : [:]
    }

    /// Writes a generated statement from its raw bytes: the text may hold any character.
    private func writeStatement(_ row: Row, column: Int, _ sink: ByteSink) throws {
        try row.withUnsafeData(atIndex: column) { data in
            guard let data else { return }
            try data.withUnsafeBytes { try sink.write($0) }
        }
        try sink.write("\n")
    }
}
