import GRDB
import GRDBSQLite

/// Reads one CSV file into `temp.import_<table>`, checking every field on the way.
///
/// Fields are bound straight from the file's bytes to the prepared statement.
///
/// - Throws: `CSVError` naming the file, line and column: wrong field count, a bad value,
///   or a key that appears twice (both lines named).
struct StagingLoader {
    let file: ImportFile

    /// Returns the number of data rows read.
    @discardableResult
    func load(into db: Database) throws -> Int {
        let table = file.table
        let header = file.header
        let decoder = FieldDecoder(file: file.displayName)
        let names = ["source_line"] + header.columns.map(\.name)
        let insert = try db.makeStatement(sql: """
            INSERT INTO \(StagingTables.importTable(table)) (\(names.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))
            """)
        let handle = insert.sqliteStatement
        var isHeader = true
        var rows = 0
        try CSVReader(path: file.path, displayName: file.displayName).forEachRecord { record in
            if isHeader {
                isHeader = false
                return
            }
            guard record.fieldCount == header.columns.count else {
                throw CSVError(
                    file: file.displayName, line: record.line,
                    message: "\(record.fieldCount) fields, expected \(header.columns.count) as in the header (\(header.columns.map(\.name).joined(separator: ",")))")
            }
            sqlite3_reset(handle)
            sqlite3_bind_int64(handle, 1, Int64(record.line))
            for (index, column) in header.columns.enumerated() {
                try decoder.bind(record.field(index), as: column, line: record.line, to: handle, at: Int32(index + 2))
            }
            do {
                try StatementBinding.step(insert, db)
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                throw try duplicateKeyError(db, record: record, decoder: decoder)
            }
            rows += 1
        }
        if isHeader {
            throw CSVError(file: file.displayName, line: nil, message: "empty file (expected a header line, then one row per record)")
        }
        return rows
    }

    private func duplicateKeyError(_ db: Database, record: CSVRecord, decoder: FieldDecoder) throws -> CSVError {
        let table = file.table
        let keyValues = try table.keyColumns.map { key in
            let index = file.header.columns.firstIndex { $0.name == key }!
            return try decoder.decode(ArraySlice(record.field(index)), as: file.header.columns[index], line: record.line)
        }
        let condition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        let firstLine = try Int.fetchOne(
            db, sql: "SELECT source_line FROM \(StagingTables.importTable(table)) WHERE \(condition)",
            arguments: StatementArguments(keyValues)) ?? 0
        let keyText = keyValues.map { $0.description }.joined(separator: "/")
        return CSVError(
            file: file.displayName, line: record.line,
            message: "duplicate key \(table.keyColumns.joined(separator: "/")) \(keyText), already on line \(firstLine) (expected each key once per file)")
    }
}
