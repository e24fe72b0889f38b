import GRDB

/// Reads one CSV file into `temp.import_<table>`, checking every field on the way.
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
        var isHeader = true
        var rows = 0
        var values: [DatabaseValue] = []
        values.reserveCapacity(names.count)
        try CSVReader(path: file.path, displayName: file.displayName).forEachRecord { record in
            if isHeader { isHeader = false; return }
            guard record.fields.count == header.columns.count else {
                throw CSVError(
                    file: file.displayName, line: record.line,
                    message: "\(record.fields.count) fields, expected \(header.columns.count) as in the header (\(header.columns.map(\.name).joined(separator: ",")))")
            }
            values.removeAll(keepingCapacity: true)
            values.append(record.line.databaseValue)
            for (field, column) in zip(record.fields, header.columns) {
                values.append(try decoder.decode(field, as: column, line: record.line))
            }
            StatementBinding.bind(values, to: insert)
            do {
                try StatementBinding.step(insert, db)
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                throw try duplicateKeyError(db, record: record, values: values)
            }
            rows += 1
        }
        if isHeader {
            throw CSVError(file: file.displayName, line: nil, message: "empty file (expected a header line, then one row per record)")
        }
        return rows
    }

    private func duplicateKeyError(_ db: Database, record: CSVRecord, values: [DatabaseValue]) throws -> CSVError {
        let table = file.table
        let keyValues = table.keyColumns.map { key in values[1 + file.header.columns.firstIndex { $0.name == key }!] }
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
