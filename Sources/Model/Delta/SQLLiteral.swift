import GRDB
import StationSchema
import StationSQLite
import StationSupport

/// SQL expressions that render a column's value as an exact SQL literal, by SQLite itself.
///
/// `quote()` renders integers, reals (round-trip exact), blobs and text with quotes,
/// newlines and emoji; but two kinds of text do not survive a literal:
/// - up to SQLite 3.40, `quote()` cuts text at a NUL byte;
/// - the `sqlite3` shell (3.40), reading SQL from a file, drops a CR that stands right
///   before a LF inside a quoted literal, so `'a\r\nb'` reaches the database as `'a\nb'`.
/// Such text is rendered from its bytes: `'a' || char(13, 10) || 'b'` becomes
/// `CAST(X'610D0A62' AS TEXT)`, which every SQLite since 3.0 reads back byte for byte,
/// whatever reads the script. Numeric columns hold only numbers and NULL (the importer and
/// the curated operations type every value), so they need no test.
package enum SQLLiteral {
    /// `text` as an SQL string literal, rendered by SQLite's `quote()` (a path for `ATTACH`).
    package static func quoted(_ text: String) throws -> String {
        try DatabaseQueue(configuration: SQLiteDefences.configuration()).read { db in
            String.fromDatabaseValue(try StatementBinding.rows(db, sql: "SELECT quote(?)", arguments: [text.databaseValue])[0][0]) ?? "NULL"
        }
    }

    package static func render(_ column: String, _ kind: MasterTable.ColumnKind) -> String {
        guard kind.holdsText else { return "quote(\(column))" }
        // instr() compares text by its bytes, so it finds a NUL or a CR without a CAST to BLOB.
        return "(CASE WHEN typeof(\(column)) = 'text' AND (instr(\(column), char(0)) > 0 OR instr(\(column), char(13)) > 0) "
            + "THEN 'CAST(' || quote(CAST(\(column) AS BLOB)) || ' AS TEXT)' ELSE quote(\(column)) END)"
    }

    /// A rendering for hashing that tells every value apart: `quote()` (which already
    /// tells 1, 1.0, '1' and X'31' apart), and for text with a NUL `nul-text:` and its bytes in hex.
    package static func canonical(_ column: String, _ kind: MasterTable.ColumnKind) -> String {
        guard kind.holdsText else { return "quote(\(column))" }
        return "(CASE WHEN typeof(\(column)) = 'text' AND instr(\(column), char(0)) > 0 "
            + "THEN 'nul-text:' || hex(CAST(\(column) AS BLOB)) ELSE quote(\(column)) END)"
    }
}

extension SQLLiteral {
    /// SQL that renders a row as `INSERT OR REPLACE INTO t (…) VALUES (…);`, through one
    /// printf() (one allocation per row, where `||` would copy the growing text at every column).
    package static func upsert(_ table: MasterTable, columns: [MasterTable.Column], alias: String?) -> String {
        let prefix = alias.map { $0 + "." } ?? ""
        let format = "INSERT OR REPLACE INTO \(table.name) (\(columns.map(\.name).joined(separator: ", "))) VALUES ("
            + Array(repeating: "%s", count: columns.count).joined(separator: ", ") + ");"
        return "printf('\(format)', " + columns.map { render(prefix + $0.name, $0.kind) }.joined(separator: ", ") + ")"
    }
}

extension SQLLiteral {
    /// SQL that renders `UPDATE t SET c = v, … WHERE key;` with only the columns in which
    /// `new` differs from `old` (the caller knows at least one does).
    ///
    /// The columns' parts go through one printf(): a chain of `||` copied the growing text at
    /// every column, most of them empty (a release's station updates change one or two of 15).
    package static func update(_ table: MasterTable, columns: [MasterTable.Column], new: String, old: String) -> String {
        let nonKeyColumns = columns.filter { !table.keyColumns.contains($0.name) }
        // A table that is all key (connections) has nothing to update: equal keys, equal rows.
        if nonKeyColumns.isEmpty { return "NULL" }
        let sets = nonKeyColumns.map { column in
            "(CASE WHEN \(new).\(column.name) IS NOT \(old).\(column.name) THEN ', \(column.name) = ' || \(render("\(new).\(column.name)", column.kind)) ELSE '' END)"
        }
        let changed = "printf('\(String(repeating: "%s", count: sets.count))', \(sets.joined(separator: ", ")))"
        let key = table.keyColumns.map { "'\($0) = ' || quote(\(new).\($0))" }.joined(separator: " || ' AND ' || ")
        return "'UPDATE \(table.name) SET ' || substr(\(changed), 3) || ' WHERE ' || \(key) || ';'"
    }
}

extension MasterTable.ColumnKind {
    package var holdsText: Bool {
        switch self {
        case .text, .date: return true
        case .integer, .real, .coordinate: return false
        }
    }
}
