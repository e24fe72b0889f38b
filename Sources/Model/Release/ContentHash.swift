import Crypto
import GRDB

/// A hash of the master tables' content that does not depend on the file's bytes
/// (page layout, free pages, indexes), so a client or a test can check a database
/// after applying a delta.
///
/// Definition (recomputable with the sqlite3 shell and sha256sum): SHA-256 over, for each
/// table in the order prefectures, companies, lines, stations, connections, the line
/// `table:<name>` and then one line per row in key order, the row's columns in schema
/// order joined by `,`, each rendered as `quote(c)`, except text holding a NUL byte, which
/// is `'nul-text:' || hex(CAST(c AS BLOB))`; lines end with `\n`.
public enum ContentHash {
    /// The content hash of a client database file, opened read-only.
    public static func compute(ofFile path: String) throws -> String {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { try compute($0) }
    }

    public static func compute(_ db: Database, schema: String = "main") throws -> String {
        var hasher = SHA256()
        for table in MasterTable.all {
            hasher.update(data: Array("table:\(table.name)\n".utf8))
            let format = Array(repeating: "%s", count: table.columns.count).joined(separator: ",") + "\n"
            let values = table.columns.map { SQLLiteral.canonical($0.name, $0.kind) }.joined(separator: ", ")
            let cursor = try Row.fetchCursor(
                db, sql: "SELECT printf('\(format)', \(values)) FROM \(schema).\(table.name) ORDER BY \(table.keyOrder)")
            while let line = try cursor.next() {
                try line.withUnsafeData(atIndex: 0) { data in
                    if let data { data.withUnsafeBytes { hasher.update(bufferPointer: $0) } }
                }
            }
        }
        return FileDigest.hex(hasher.finalize())
    }
}
