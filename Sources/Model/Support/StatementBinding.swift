import Foundation
import GRDB
import GRDBSQLite

/// Binds values and steps statements straight through SQLite's C API, with explicit byte lengths.
///
/// GRDB binds strings as C strings, which cuts them at a NUL byte; a station name
/// with a NUL must survive exactly, and the bulk paths also save GRDB's per-row arrays.
enum StatementBinding {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func bind(_ values: [DatabaseValue], to statement: Statement) {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (offset, value) in values.enumerated() {
            bind(value, at: Int32(offset + 1), handle)
        }
    }

    static func bind(_ value: DatabaseValue, at index: Int32, _ handle: SQLiteStatement) {
        switch value.storage {
        case .null:
            sqlite3_bind_null(handle, index)
        case .int64(let number):
            sqlite3_bind_int64(handle, index, number)
        case .double(let number):
            sqlite3_bind_double(handle, index, number)
        case .string(let string):
            var string = string
            string.withUTF8 { bytes in
                _ = sqlite3_bind_text(handle, index, bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                      Int32(bytes.count), transient)
            }
        case .blob(let data):
            data.withUnsafeBytes { bytes in
                _ = sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), transient)
            }
        }
    }

    /// Runs a statement whose arguments were bound by `bind`.
    static func step(_ statement: Statement, _ db: Database) throws {
        let code = sqlite3_step(statement.sqliteStatement)
        guard code == SQLITE_DONE else { throw lastError(statement, db) }
    }

    /// Steps a query to its end, handing `body` the statement at each row: the bulk reads take
    /// their columns straight from SQLite, without a GRDB `Row` per row.
    static func forEachRow(_ statement: Statement, _ db: Database, _ body: (SQLiteStatement) throws -> Void) throws {
        let handle = statement.sqliteStatement
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw lastError(statement, db) }
            try body(handle)
        }
    }

    /// The connection's last error, for a statement that failed to step (the statement is reset).
    static func lastError(_ statement: Statement, _ db: Database) -> DatabaseError {
        let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
        sqlite3_reset(statement.sqliteStatement)
        return DatabaseError(resultCode: ResultCode(rawValue: sqlite3_extended_errcode(db.sqliteConnection)),
                             message: message, sql: statement.sql)
    }
}
