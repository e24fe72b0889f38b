import Foundation
import GRDB
import GRDBSQLite

/// Binds, steps and reads statements straight through SQLite's C API, text with its byte length.
///
/// **The text rule.** GRDB binds a `String` as a C string (`sqlite3_bind_text(…, -1, …)`) and
/// reads one with `String(cString:)`: either way text is cut at its first NUL byte. A station
/// name, a memo or a waiver reason may hold any character, NUL included, and must reach the
/// master, the client database and every delta byte for byte. So every statement that writes
/// text a user gave binds it here (`bind`, `execute`), and every row that is read in order to
/// be written back is read here (`rows`), never through GRDB's `arguments:` or `Row`.
/// `TextRoundTripTests` runs such text through every write path. The bulk paths also save
/// GRDB's per-row arrays.
package enum StatementBinding {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    package static func bind(_ values: [DatabaseValue], to statement: Statement) {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (offset, value) in values.enumerated() {
            bind(value, at: Int32(offset + 1), handle)
        }
    }

    package static func bind(_ value: DatabaseValue, at index: Int32, _ handle: SQLiteStatement) {
        switch value.storage {
        case .null:
            sqlite3_bind_null(handle, index)
        case .int64(let number):
            sqlite3_bind_int64(handle, index, number)
        case .double(let number):
            sqlite3_bind_double(handle, index, number)
        case .string(let string):
            bind(text: string, at: index, handle)
        case .blob(let data):
            data.withUnsafeBytes { bytes in
                _ = sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), transient)
            }
        }
    }

    /// Binds `text` by its byte length (copied by SQLite).
    package static func bind(text: String, at index: Int32, _ handle: SQLiteStatement) {
        var text = text
        text.withUTF8 { bytes in
            _ = sqlite3_bind_text(handle, index, bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  Int32(bytes.count), transient)
        }
    }

    /// Runs `sql` once with `values` bound by their byte lengths: how text a user gave is written.
    ///
    /// For example `execute("INSERT INTO versions (version, memo) VALUES (?, ?)", [3, "a\u{0}b"], db)`
    /// stores the memo's three bytes, where GRDB's `arguments:` would store one.
    package static func execute(_ sql: String, _ values: [DatabaseValueConvertible?], _ db: Database) throws {
        let statement = try db.makeStatement(sql: sql)
        bind(values.map { $0?.databaseValue ?? .null }, to: statement)
        try step(statement, db)
    }

    /// Every row of a query, each value read exactly (text by its byte length): the rows a
    /// curated change reads in order to write them back.
    package static func rows(_ db: Database, sql: String, arguments: [DatabaseValue] = []) throws -> [[DatabaseValue]] {
        let statement = try db.makeStatement(sql: sql)
        bind(arguments, to: statement)
        let count = sqlite3_column_count(statement.sqliteStatement)
        var rows: [[DatabaseValue]] = []
        try forEachRow(statement, db) { handle in
            rows.append((0..<count).map { value(handle, at: $0) })
        }
        return rows
    }

    /// The value of column `index` of the current row, text read with its byte length.
    package static func value(_ handle: SQLiteStatement, at index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER:
            return sqlite3_column_int64(handle, index).databaseValue
        case SQLITE_FLOAT:
            return sqlite3_column_double(handle, index).databaseValue
        case SQLITE_TEXT:
            // column_text before column_bytes: the count is then of the UTF-8 text.
            guard let text = sqlite3_column_text(handle, index) else { return "".databaseValue }
            let count = Int(sqlite3_column_bytes(handle, index))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self).databaseValue
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard let bytes = sqlite3_column_blob(handle, index), count > 0 else { return Data().databaseValue }
            return Data(bytes: bytes, count: count).databaseValue
        default:
            return .null
        }
    }

    /// Runs a statement whose arguments were bound by `bind`.
    package static func step(_ statement: Statement, _ db: Database) throws {
        let code = sqlite3_step(statement.sqliteStatement)
        guard code == SQLITE_DONE else { throw lastError(statement, db) }
    }

    /// Steps a query to its end, handing `body` the statement at each row: the bulk reads take
    /// their columns straight from SQLite, without a GRDB `Row` per row.
    package static func forEachRow(_ statement: Statement, _ db: Database, _ body: (SQLiteStatement) throws -> Void) throws {
        let handle = statement.sqliteStatement
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw lastError(statement, db) }
            try body(handle)
        }
    }

    /// The connection's last error, for a statement that failed to step (the statement is reset).
    package static func lastError(_ statement: Statement, _ db: Database) -> DatabaseError {
        let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
        sqlite3_reset(statement.sqliteStatement)
        return DatabaseError(resultCode: ResultCode(rawValue: sqlite3_extended_errcode(db.sqliteConnection)),
                             message: message, sql: statement.sql)
    }
}
