import Foundation
import GRDB
import GRDBSQLite
import NIOCore

/// A master table of the release's client database as PostgreSQL holds it: the client schema's
/// columns (INTEGER → bigint, REAL → double precision, TEXT → text), its key as the primary key.
struct ClientTable: Sendable {
    struct Column: Sendable, Equatable {
        let name: String
        let postgresType: String
        let notNull: Bool
    }

    /// The master tables a release carries, parents first.
    static let names = ["prefectures", "companies", "lines", "stations", "connections"]

    let name: String
    let columns: [Column]
    let key: [String]

    /// Rows a `COPY` batch carries: the client database is read a batch at a time while the
    /// server takes the one before.
    static let batchRows = 100_000

    /// The table as the client database declares it.
    static func read(_ name: String, _ db: Database) throws -> ClientTable {
        let rows = try Row.fetchAll(db, sql: "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid", arguments: [name])
        guard !rows.isEmpty else {
            throw PostgresSyncError.damagedState(table: "the release's client database", reason: "it has no table \(name)")
        }
        var key: [(Int, String)] = []
        let columns = try rows.map { row -> Column in
            let columnName: String = row["name"], declared = (row["type"] as String).uppercased()
            try PlainName.check(columnName, role: "column")
            let type: String
            switch declared {
            case "INTEGER": type = "bigint"
            case "REAL": type = "double precision"
            case "TEXT": type = "text"
            default: throw PostgresSyncError.damagedState(table: "the release's client database", reason: "\(name).\(columnName) is of type \(declared)")
            }
            if (row["pk"] as Int) > 0 { key.append((row["pk"], columnName)) }
            return Column(name: columnName, postgresType: type, notNull: row["notnull"] as Bool || (row["pk"] as Int) > 0)
        }
        return ClientTable(name: name, columns: columns, key: key.sorted { $0.0 < $1.0 }.map(\.1))
    }

    var columnList: String { columns.map(\.name).joined(separator: ", ") }

    /// Which rows a batch reads (see `batch`).
    enum Selection {
        case all, changedSincePrevious, removedSincePrevious, touchedByDelta, removedByDelta
    }

    func createStatement(schema: String) -> String {
        "CREATE TABLE \(schema).\(name) (" + columns.map { "\($0.name) \($0.postgresType)\($0.notNull ? " NOT NULL" : "")" }.joined(separator: ", ")
            + ", PRIMARY KEY (\(key.joined(separator: ", "))))"
    }

    /// One batch of rows after `after` (the last batch's last key, nil for the first), in key
    /// order, as `COPY`'s text format: tab between values, a line a row, `\N` for NULL,
    /// backslash, tab, newline and carriage return escaped (PostgreSQL's documentation, COPY,
    /// "Text Format"). Columns are read straight from SQLite: a GRDB `Row` per row took most of
    /// the encoding's time. Every key of the client schema is an integer.
    ///
    /// - Parameter rows: which rows: all of them, those that differ from the attached
    ///   `previous` database's (new or changed), or the keys only `previous` has (removed); or
    ///   those of the keys the delta wrote (`TouchedKeys`), or those of its keys that are gone.
    func batch(after: [Int64]?, rows selection: Selection = .all, _ db: Database) throws -> (text: ByteBuffer, last: [Int64]?, rows: Int) {
        let order = key.map { "r." + $0 }.joined(separator: ", ")
        var conditions = after == nil ? [] : ["(\(order)) > (\(key.map { _ in "?" }.joined(separator: ", ")))"]
        let source: String
        var selected = columns
        switch selection {
        case .all:
            source = "main.\(name) r"
        case .changedSincePrevious:
            source = "main.\(name) r"
            conditions.append("NOT EXISTS (SELECT 1 FROM previous.\(name) p WHERE \(columns.map { "p.\($0.name) IS r.\($0.name)" }.joined(separator: " AND ")))")
        case .removedSincePrevious:
            source = "previous.\(name) r"
            selected = columns.filter { key.contains($0.name) }
            conditions.append("NOT EXISTS (SELECT 1 FROM main.\(name) m WHERE \(key.map { "m.\($0) = r.\($0)" }.joined(separator: " AND ")))")
        case .touchedByDelta:
            // The touched keys outside: a lookup each, never a scan of the table.
            source = "temp.\(TouchedKeys.table(name)) k CROSS JOIN main.\(name) r ON \(key.map { "r.\($0) = k.\($0)" }.joined(separator: " AND "))"
        case .removedByDelta:
            source = "temp.\(TouchedKeys.table(name)) r"
            selected = columns.filter { key.contains($0.name) }
            conditions.append("NOT EXISTS (SELECT 1 FROM main.\(name) m WHERE \(key.map { "m.\($0) = r.\($0)" }.joined(separator: " AND ")))")
        }
        let statement = try db.cachedStatement(sql: """
            SELECT \(selected.map { "r." + $0.name }.joined(separator: ", ")) FROM \(source)
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")) ORDER BY \(order) LIMIT \(Self.batchRows)
            """)
        try statement.setArguments(StatementArguments(after ?? []))
        let keyIndexes = key.map { name in Int32(selected.firstIndex { $0.name == name }!) }
        let handle = statement.sqliteStatement
        var buffer = ByteBuffer()
        buffer.reserveCapacity(Self.batchRows * 160)
        var last: [Int64] = [], count = 0
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
            }
            for index in 0..<Int32(selected.count) {
                if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
                switch sqlite3_column_type(handle, index) {
                case SQLITE_NULL: buffer.writeStaticString("\\N")
                case SQLITE_INTEGER: buffer.writeString(String(sqlite3_column_int64(handle, index)))
                // Swift's shortest representation that reads back as the same double, as PostgreSQL reads it.
                case SQLITE_FLOAT: buffer.writeString(sqlite3_column_double(handle, index).description)
                default:
                    let bytes = sqlite3_column_text(handle, index), length = Int(sqlite3_column_bytes(handle, index))
                    Self.writeEscaped(UnsafeBufferPointer(start: bytes, count: length), into: &buffer)
                }
            }
            buffer.writeInteger(UInt8(ascii: "\n"))
            count += 1
            if count == Self.batchRows { last = keyIndexes.map { sqlite3_column_int64(handle, $0) } }
        }
        sqlite3_reset(handle)
        return (buffer, count == Self.batchRows ? last : nil, count)
    }

    private static func writeEscaped<Bytes: Sequence>(_ bytes: Bytes, into buffer: inout ByteBuffer) where Bytes.Element == UInt8 {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeString("\\t")
            case UInt8(ascii: "\n"): buffer.writeString("\\n")
            case UInt8(ascii: "\r"): buffer.writeString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }
}
