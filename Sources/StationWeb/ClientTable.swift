import Foundation
import GRDB
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
    static let batchRows = 50_000

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

    func createStatement(schema: String) -> String {
        "CREATE TABLE \(schema).\(name) (" + columns.map { "\($0.name) \($0.postgresType)\($0.notNull ? " NOT NULL" : "")" }.joined(separator: ", ")
            + ", PRIMARY KEY (\(key.joined(separator: ", "))))"
    }

    /// One batch of rows after `after` (a key, nil for the first), in key order, as `COPY`'s text
    /// format: tab between values, a line a row, `\N` for NULL, backslash, tab, newline and
    /// carriage return escaped (PostgreSQL's documentation, COPY, "Text Format").
    func batch(after: [DatabaseValue]?, _ db: Database) throws -> (text: ByteBuffer, last: [DatabaseValue]?, rows: Int) {
        let order = key.joined(separator: ", ")
        let condition = after == nil ? "" : "WHERE (\(order)) > (\(key.map { _ in "?" }.joined(separator: ", ")))"
        let cursor = try Row.fetchCursor(db, sql: "SELECT \(columnList) FROM main.\(name) \(condition) ORDER BY \(order) LIMIT \(Self.batchRows)",
                                         arguments: StatementArguments(after ?? []))
        var buffer = ByteBuffer()
        var last: [DatabaseValue]?, count = 0
        while let row = try cursor.next() {
            for index in 0..<columns.count {
                if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
                Self.write(row[index] as DatabaseValue, into: &buffer)
            }
            buffer.writeInteger(UInt8(ascii: "\n"))
            last = key.map { row[$0] as DatabaseValue }
            count += 1
        }
        return (buffer, count == Self.batchRows ? last : nil, count)
    }

    static func write(_ value: DatabaseValue, into buffer: inout ByteBuffer) {
        switch value.storage {
        case .null: buffer.writeString("\\N")
        case .int64(let number): buffer.writeString(String(number))
        // Swift's shortest representation that reads back as the same double, as PostgreSQL reads it.
        case .double(let number): buffer.writeString(number.description)
        case .string(let text): writeEscaped(Substring(text).utf8, into: &buffer)
        case .blob(let data): writeEscaped(data, into: &buffer)
        }
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
