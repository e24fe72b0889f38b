import Crypto
import Foundation
import GRDB
import GRDBSQLite
import StationDelta
import StationSchema
import StationSQLite
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
    /// The content hash of a client database file, opened read-only, whose tables `declared` declares.
    public static func compute(ofFile path: String, _ declared: DeclaredSchema) throws -> String {
        var configuration = SQLiteDefences.configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { try compute($0, declared) }
    }

    /// The content hash of a client database open as `db`.
    ///
    /// - Parameters:
    ///   - db: a connection on which the client tables are in `schema`.
    ///   - declared: the schema whose columns the client tables have (`DeclaredSchema.shipped`).
    ///   - schema: `main`, or the name the client database is attached as.
    ///   - clientSchema: whose columns are hashed; nil for the version the client
    ///     database records (`ClientSchema.recordedVersion`).
    public static func compute(_ db: Database, _ declared: DeclaredSchema, schema: String = "main", clientSchema: Int? = nil) throws -> String {
        let clientSchema = try clientSchema ?? ClientSchema.recordedVersion(db, schema: schema)
        do {
            return try compute(db, declared, schema: schema, clientSchema: clientSchema, renderedHere: true)
        } catch is UnexpectedStorage {
            return try compute(db, declared, schema: schema, clientSchema: clientSchema, renderedHere: false)
        }
    }

    /// The columns hashed, per table, in the order hashed: what a manifest lists as a version's
    /// `content_columns`, so that a phone hashes the release's columns and not an app's.
    public static func columns(_ declared: DeclaredSchema, clientSchema: Int) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: declared.tables.map { table in (table.name, table.columns(clientSchema: clientSchema).map(\.name)) })
    }

    /// A value stored as its column's kind never holds (an integer column's text or real, a
    /// text column's blob: the importer and the curated operations never write one): the hash
    /// starts again with SQLite rendering every value.
    private struct UnexpectedStorage: Error {}

    /// With `renderedHere`, integer and text columns are read as stored and rendered here as
    /// `quote()` renders them (`appendDecimal`, `appendQuoted`); only coordinates and other reals
    /// go through SQLite's `quote()`, whose `%!.15g` and round-trip test are SQLite's own. At a
    /// million stations, `quote()` and the NUL test in SQL over ten million values kept one core
    /// busy for most of the release's index building.
    private static func compute(_ db: Database, _ declared: DeclaredSchema, schema: String, clientSchema: Int, renderedHere: Bool) throws -> String {
        var hasher = SHA256()
        // The lines are hashed 64 KiB at a time: the digest is the same as line by line.
        var buffer: [UInt8] = []
        buffer.reserveCapacity(flushSize + 4096)
        for table in declared.tables {
            buffer.append(contentsOf: "table:\(table.name)\n".utf8)
            let columns = table.columns(clientSchema: clientSchema)
            let stored: [StoredKind?] = columns.map { column in
                guard renderedHere else { return nil }
                if column.kind == .integer { return .integer }
                return column.kind.holdsText ? .text : nil
            }
            // Each value rendered by SQLite, joined here: a printf() per row would parse its
            // format string again for every row.
            let values = zip(columns, stored).map { column, stored in
                stored == nil ? SQLLiteral.canonical(column.name, column.kind) : column.name
            }
            let statement = try db.makeStatement(
                sql: "SELECT \(values.joined(separator: ", ")) FROM \(schema).\(table.name) ORDER BY \(table.keyOrder)")
            try StatementBinding.forEachRow(statement, db) { row in
                for (column, stored) in stored.enumerated() {
                    let column = Int32(column)
                    if column > 0 { buffer.append(UInt8(ascii: ",")) }
                    if let stored {
                        switch (sqlite3_column_type(row, column), stored) {
                        case (SQLITE_NULL, _):
                            buffer.append(contentsOf: "NULL".utf8)
                        case (SQLITE_INTEGER, .integer):
                            appendDecimal(sqlite3_column_int64(row, column), to: &buffer)
                        case (SQLITE_TEXT, .text):
                            // The text first: its byte count is the text's (SQLite's rule for the two calls).
                            let text = sqlite3_column_text(row, column)
                            appendQuoted(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(row, column))), to: &buffer)
                        default: throw UnexpectedStorage()
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

    /// How a column's values are read and rendered here.
    private enum StoredKind { case integer, text }

    /// UTF-8 text as the definition renders it: `quote()`'s `'…'` with each `'` doubled, or,
    /// holding a NUL (where `quote()` would stop), `nul-text:` and its bytes in upper-case hex,
    /// as `hex()` writes them.
    package static func appendQuoted(_ text: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        guard let start = text.baseAddress, !text.isEmpty else {
            buffer.append(contentsOf: "''".utf8)
            return
        }
        if memchr(start, 0, text.count) != nil {
            buffer.append(contentsOf: "nul-text:".utf8)
            let digits = Array("0123456789ABCDEF".utf8)
            for byte in text {
                buffer.append(digits[Int(byte >> 4)])
                buffer.append(digits[Int(byte & 0x0F)])
            }
            return
        }
        buffer.append(UInt8(ascii: "'"))
        var rest = text
        // Runs between quotes are copied whole: most names hold none.
        while let quote = memchr(rest.baseAddress!, Int32(UInt8(ascii: "'")), rest.count) {
            let length = rest.baseAddress!.distance(to: quote.assumingMemoryBound(to: UInt8.self)) + 1
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: rest.prefix(length)))
            buffer.append(UInt8(ascii: "'"))
            rest = UnsafeBufferPointer(rebasing: rest.dropFirst(length))
            if rest.isEmpty { break }
        }
        buffer.append(contentsOf: rest)
        buffer.append(UInt8(ascii: "'"))
    }

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
