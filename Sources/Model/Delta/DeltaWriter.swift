import GRDB
import StationHistory
import StationManifest
import StationSchema
import StationSupport

/// What a delta holds, for the preview a curator asks for and the manifest.
public struct DeltaSummary: Codable, Sendable, Equatable {
    /// The data version the phone is at.
    public var from: Int
    /// The data version it reaches.
    public var to: Int
    /// Table → `upsert` (a row new to the client, whole), `update` (changed columns only),
    /// `delete` (a removed connection or prefecture) → statements.
    public var statements: [String: [String: Int]]
    /// Splits the delta carries out on the phone.
    public var duplicates: Int

    /// Every statement, splits included.
    public var totalStatements: Int { statements.values.flatMap(\.values).reduce(0, +) + duplicates }

    /// The kinds of statement a delta holds per table.
    public static let statementKinds = ["upsert", "update", "delete"]

    /// Every kind of every table, 0 when none: what JSON and the manifest give, so that a
    /// reader never tests for a missing key.
    public var everyStatementCount: [String: [String: Int]] {
        Dictionary(uniqueKeysWithValues: MasterTable.all.map { table in
            (table.name, Dictionary(uniqueKeysWithValues: Self.statementKinds.map { ($0, statements[table.name]?[$0] ?? 0) }))
        })
    }
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
///
/// A release writes several deltas, so the statements are rendered once for all of them
/// (`prepare`): a key's statement depends on `from` only through the key's first change after
/// `from`, so one statement per change of a key that is the first after one of the `froms` serves
/// every delta, each taking for a key the statement of its first change after its `from`.
/// Rendering then follows the changes since the oldest version served, not that times the
/// number of deltas; a single delta renders only each key's first change after its `from`.
package struct DeltaWriter {
    /// The versions whose deltas were prepared, ascending.
    package let froms: [Int]
    package let to: Int
    package let newest: Int
    /// The client schema phones have at `to`: the columns the statements carry.
    package let toSchema: Int
    /// The tables and client schema changes whose columns the statements name.
    package let declared: DeclaredSchema

    /// Renders, in temp tables of the caller's read transaction, the statements of the deltas
    /// to `to` from each version of `froms` (not empty). Call `finish` when done.
    package static func prepare(_ db: Database, _ declared: DeclaredSchema, froms: [Int], to: Int, newest: Int) throws -> DeltaWriter {
        precondition(!froms.isEmpty, "no delta to prepare")
        let writer = DeltaWriter(froms: Array(Set(froms)).sorted(), to: to, newest: newest,
                                 toSchema: try ClientSchema.version(atData: to, db), declared: declared)
        try writer.dropTables(db)
        if writer.froms[0] > 0 {
            for table in declared.tables { try writer.renderStatements(of: table, db) }
        }
        return writer
    }

    /// Whether a change (at `change`, the key's previous one after the oldest `from` at
    /// `previous_change`, NULL if none) is some prepared delta's first for its key: a `from`
    /// in [previous change, change). Consecutive `froms` make one range, so the test stays short
    /// when every version gets a delta.
    private var takenBySomeDelta: String {
        var ranges: [ClosedRange<Int>] = []
        for from in froms {
            if let last = ranges.last, last.upperBound + 1 == from {
                ranges[ranges.count - 1] = last.lowerBound...from
            } else {
                ranges.append(from...from)
            }
        }
        // A NULL previous change means none after the oldest `from`, which every range starts at or after.
        return "(" + ranges.map { "(change > \($0.lowerBound) AND COALESCE(previous_change, 0) <= \($0.upperBound))" }
            .joined(separator: " OR ") + ")"
    }

    package func finish(_ db: Database) throws {
        try dropTables(db)
    }

    package func write(from: Int, transaction: Bool, _ db: Database, into sink: ByteSink) throws -> DeltaSummary {
        precondition(from == 0 || (froms[0] > 0 && froms.contains(from)), "delta from \(from) not prepared (\(froms))")
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
        // A phone of an older client schema gets the new columns first, so that the statements
        // after can name them (an empty database of version 0 too: it has the first schema's tables).
        let fromSchema = try ClientSchema.version(atData: from, db)
        if fromSchema < toSchema {
            try sink.write("-- client schema \(fromSchema) → \(toSchema)\n" + ClientSchema.upgrade(declared, from: fromSchema, to: toSchema) + "\n")
        }
        for table in declared.tables {
            let counts = from == 0 ? try writeWholeTable(table, db, sink) : try writeStatements(of: table, from: from, db, sink)
            if !counts.isEmpty { summary.statements[table.name] = counts }
        }
        // Version 0's delta brings every row whole already.
        if from > 0 && fromSchema < toSchema { try writeNewColumns(from: fromSchema, db, sink) }
        let splits = try UpdateLog.splits(db, after: from, through: to)
        if !splits.isEmpty {
            try sink.write("-- station splits: copy each record of the old station to the new one, keeping any the user already has\n")
            for split in splits {
                try sink.write(UserRecords.splitCopy(.literal(old: split.old, new: split.new)) + ";\n")
            }
            summary.duplicates = splits.count
        }
        try sink.write("PRAGMA user_version = \(to);\n")
        if transaction { try sink.write("COMMIT;\n") }
        return summary
    }

    private func statementsTable(_ table: MasterTable) -> String { "delta_statements_\(table.name)" }

    private func dropTables(_ db: Database) throws {
        for table in declared.tables { try db.execute(sql: "DROP TABLE IF EXISTS temp.\(statementsTable(table))") }
        try db.execute(sql: "DROP TABLE IF EXISTS temp.delta_changes; DROP TABLE IF EXISTS temp.delta_new")
    }

    /// One row per change of a key of `table` after the oldest `from` that some prepared delta
    /// takes as the key's first (`takenBySomeDelta`): the statement that brings the key
    /// from its state before that change to its state at `to` (none when both are equal or
    /// absent), with the key's previous change, in the order a delta lists them.
    ///
    /// Both states are joined by key: the state before a change is the history row it
    /// superseded (by the history's primary key), and the state at the newest version the
    /// master row. Only an older `to` is materialised, from `VersionedState`, in an indexed temp
    /// table: copying both states of every change into indexed temp tables was a third of
    /// rendering the stations.
    private func renderStatements(of table: MasterTable, _ db: Database) throws {
        try db.execute(sql: """
            CREATE TEMP TABLE delta_changes AS SELECT * FROM (\(UpdateLog.changes(of: table, after: froms[0], through: to)))
                WHERE \(takenBySomeDelta);
            """)
        let new: (join: String, exists: String)
        if to >= newest {
            let parts = table.keyColumns.count == 1
                ? ["CAST(c.key_id AS INTEGER)"]
                : VersionedState.keyParts("c.key_id", count: table.keyColumns.count).map { "CAST(\($0) AS INTEGER)" }
            let match = zip(table.keyColumns, parts).map { "n.\($0) = \($1)" }.joined(separator: " AND ")
            new = ("main.\(table.name) n ON \(match)", "n.\(table.keyColumns[0]) IS NOT NULL")
        } else {
            try db.execute(sql: """
                CREATE TEMP TABLE delta_new AS \(VersionedState(table: table, version: to).select(restrictedTo: "temp.delta_changes"));
                CREATE UNIQUE INDEX temp.delta_new_by_key ON delta_new (key_id);
                """)
            new = ("temp.delta_new n ON n.key_id = c.key_id", "n.key_id IS NOT NULL")
        }
        let oldExists = "o.key_id IS NOT NULL"
        let columns = table.columns(clientSchema: toSchema)
        let sameRow = columns.map { "n.\($0.name) IS o.\($0.name)" }.joined(separator: " AND ")
        let upsert = SQLLiteral.upsert(table, columns: columns, alias: "n")
        let update = SQLLiteral.update(table, columns: columns, new: "n", old: "o")
        let delete = "'DELETE FROM \(table.name) WHERE ' || "
            + table.keyColumns.map { "'\($0) = ' || quote(o.\($0))" }.joined(separator: " || ' AND ' || ") + " || ';'"
        let order = table.keyColumns.map { "COALESCE(n.\($0), o.\($0))" }.joined(separator: ", ")
        // A row the client has gets only its changed columns; a row it lacks comes whole.
        // Rows go in as a delta lists them (removals first, then by key), so `ord` is that order.
        try db.execute(sql: """
            CREATE TEMP TABLE \(statementsTable(table)) (
                ord INTEGER PRIMARY KEY, previous_change INTEGER, change INTEGER NOT NULL, kind TEXT NOT NULL, statement TEXT NOT NULL);
            INSERT INTO temp.\(statementsTable(table)) (previous_change, change, kind, statement)
            SELECT c.previous_change, c.change,
                   CASE WHEN NOT \(new.exists) THEN 'delete' WHEN NOT \(oldExists) THEN 'upsert' ELSE 'update' END,
                   CASE WHEN NOT \(new.exists) THEN \(delete) WHEN NOT \(oldExists) THEN \(upsert) ELSE \(update) END
            FROM temp.delta_changes c
            LEFT JOIN \(new.join)
            LEFT JOIN main.\(table.historyTable) o ON o.key_id = c.key_id AND o.valid_to = c.change
            WHERE (\(new.exists) OR \(oldExists))
              AND NOT (\(new.exists) AND \(oldExists) AND \(sameRow))
            ORDER BY \(new.exists), \(order), c.change;
            DROP TABLE temp.delta_changes; DROP TABLE IF EXISTS temp.delta_new;
            """)
    }

    /// The delta from `from` takes, for each key, the statement of its first change after
    /// `from`: the change after `from` whose previous change is not.
    private func writeStatements(of table: MasterTable, from: Int, _ db: Database, _ sink: ByteSink) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let cursor = try Row.fetchCursor(db, sql: """
            SELECT kind, statement FROM temp.\(statementsTable(table))
            WHERE change > ? AND (previous_change IS NULL OR previous_change <= ?) ORDER BY ord
            """, arguments: [from, from])
        while let row = try cursor.next() {
            if counts.isEmpty { try sink.write("-- \(table.name)\n") }
            counts[row[0] as String, default: 0] += 1
            try writeStatement(row, column: 1, sink)
        }
        if !counts.isEmpty { try sink.write("\n") }
        return counts
    }

    /// A client at version 0 has no rows: its delta is every row of version `to`, in key order,
    /// streamed without the temp tables a key-by-key comparison needs.
    private func writeWholeTable(_ table: MasterTable, _ db: Database, _ sink: ByteSink) throws -> [String: Int] {
        let state = VersionedState(table: table, version: to, isNewest: to >= newest).select()
        let upsert = SQLLiteral.upsert(table, columns: table.columns(clientSchema: toSchema), alias: nil)
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

    /// The values of the columns a phone of client schema `fromSchema` has just added, for every
    /// row that has one at `to` (not only the rows changed since its version: it had none of them).
    private func writeNewColumns(from fromSchema: Int, _ db: Database, _ sink: ByteSink) throws {
        for table in declared.tables {
            let added = table.columns(clientSchema: toSchema).filter { $0.since > fromSchema }
            guard !added.isEmpty else { continue }
            let state = VersionedState(table: table, version: to, isNewest: to >= newest).select()
            let sets = added.map { "'\($0.name) = ' || \(SQLLiteral.render($0.name, $0.kind))" }.joined(separator: " || ', ' || ")
            let key = table.keyColumns.map { "'\($0) = ' || quote(\($0))" }.joined(separator: " || ' AND ' || ")
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT 'UPDATE \(table.name) SET ' || \(sets) || ' WHERE ' || \(key) || ';' FROM (\(state))
                WHERE \(added.map { "\($0.name) IS NOT NULL" }.joined(separator: " OR ")) ORDER BY \(table.keyOrder)
                """)
            var first = true
            while let row = try cursor.next() {
                if first { try sink.write("-- \(table.name): the new columns' values\n") }
                first = false
                try writeStatement(row, column: 0, sink)
            }
        }
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
