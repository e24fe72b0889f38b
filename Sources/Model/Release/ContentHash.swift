import Crypto
import GRDB
import GRDBSQLite
import StationDelta
import StationSchema
import StationSupport

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

    /// The content hash of a client database open as `db`.
    ///
    /// - Parameters:
    ///   - db: a connection on which the client tables are in `schema`.
    ///   - schema: `main`, or the name the client database is attached as.
    ///   - clientSchema: whose columns are hashed; nil for the version the client
    ///     database records (`ClientSchema.recordedVersion`).
    public static func compute(_ db: Database, schema: String = "main", clientSchema: Int? = nil) throws -> String {
        let clientSchema = try clientSchema ?? ClientSchema.recordedVersion(db, schema: schema)
        do {
            return try compute(db, schema: schema, clientSchema: clientSchema, integersAsStored: true)
        } catch is NotAnInteger {
            return try compute(db, schema: schema, clientSchema: clientSchema, integersAsStored: false)
        }
    }

    /// A value of an integer column that is neither an integer nor NULL (the importer and the
    /// curated operations never write one): the hash starts again with `quote()` everywhere.
    private struct NotAnInteger: Error {}

    /// With `integersAsStored`, integer columns are read as stored and an integer is written in
    /// decimal here (`appendDecimal`), which is `quote()`'s `%lld`: at a million stations,
    /// `quote()` is slow across ten million integers.
    private static func compute(_ db: Database, schema: String, clientSchema: Int, integersAsStored: Bool) throws -> String {
        var hasher = SHA256()
        // The lines are hashed 64 KiB at a time: the digest is the same as line by line.
        var buffer: [UInt8] = []
        buffer.reserveCapacity(flushSize + 4096)
        for table in MasterTable.all {
            buffer.append(contentsOf: "table:\(table.name)\n".utf8)
            let columns = table.columns(clientSchema: clientSchema)
            let stored = columns.map { integersAsStored && $0.kind == .integer }
            // Each value rendered by SQLite, joined here: one printf() per row formatting the
            // values into a line took a third of the hash's time at a million stations.
            let values = zip(columns, stored).map { column, stored in
                stored ? column.name : SQLLiteral.canonical(column.name, column.kind)
            }
            let statement = try db.makeStatement(
                sql: "SELECT \(values.joined(separator: ", ")) FROM \(schema).\(table.name) ORDER BY \(table.keyOrder)")
            try StatementBinding.forEachRow(statement, db) { row in
                for (column, stored) in stored.enumerated() {
                    let column = Int32(column)
                    if column > 0 { buffer.append(UInt8(ascii: ",")) }
                    if stored {
                        switch sqlite3_column_type(row, column) {
                        case SQLITE_INTEGER:
                            appendDecimal(sqlite3_column_int64(row, column), to: &buffer)
                        case SQLITE_NULL:
                            buffer.append(contentsOf: "NULL".utf8)
                        default: throw NotAnInteger()
                        }
                        continue
                    }
                    // A rendering is never NULL; its pointer is nil only when it is empty.
                    if let text = sqlite3_column_text(row, column) {
                        buffer.append(contentsOf: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(row, column))))
                    }
                }
                buffer.append(UInt8(ascii: "\n"))
                if buffer.count >= flushSize {
                    hasher.update(data: buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
        }
        hasher.update(data: buffer)
        return FileDigest.hex(hasher.finalize())
    }

    private static let flushSize = 1 << 16

    /// `value` in decimal, as SQLite's `%lld` (and so `quote()`) renders an integer. Asking
    /// SQLite for the text instead converts it in the row's value, allocating for every row.
    package static func appendDecimal(_ value: Int64, to buffer: inout [UInt8]) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}
