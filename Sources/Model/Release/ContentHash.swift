import Crypto
import GRDB

/// A hash of the master tables' content that does not depend on the file's bytes
/// (page layout, free pages, indexes), so a client or a test can check a database
/// after applying a delta.
///
/// Definition (recomputable with the sqlite3 shell and sha256sum): SHA-256 over, for each
/// table in the order prefectures, companies, lines, stations, connections, the line
/// `table:<name>` and then one line per row in key order, the row's columns in schema
/// order joined by `,`, each rendered as `typeof(c) || ':' || v` where v is `hex(c)` for
/// text and blobs and `quote(c)` otherwise; lines end with `\n`.
public enum ContentHash {
    public static func compute(_ db: Database, schema: String = "main") throws -> String {
        var hasher = SHA256()
        for table in MasterTable.all {
            hasher.update(data: Array("table:\(table.name)\n".utf8))
            let row = table.columnNames.map { SQLLiteral.canonical($0) }.joined(separator: " || ',' || ")
            let cursor = try String.fetchCursor(
                db, sql: "SELECT \(row) FROM \(schema).\(table.name) ORDER BY \(table.keyOrder)")
            while let line = try cursor.next() {
                hasher.update(data: Array(line.utf8))
                hasher.update(data: [0x0A])
            }
        }
        return FileDigest.hex(hasher.finalize())
    }
}
