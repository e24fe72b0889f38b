import Foundation
import GRDB
import GRDBSQLite

/// Reads one CSV file into `temp.import_<table>`, checking every field on the way.
///
/// A second thread reads and checks the file (libcsv, field rules) while this one binds
/// the values and inserts them: the two halves of an import take about as long each.
///
/// - Throws: `CSVError` naming the file, line and column: wrong field count, a bad value,
///   or a key that appears twice (both lines named). Of several problems, the one on
///   the earliest line is reported, as a reader going line by line would.
struct StagingLoader {
    let file: ImportFile
    static let batchSize = 2048
    /// Smaller files are read on the inserting thread: a second one would cost more than it saves.
    static let threadedFromBytes = 8 << 20

    /// Lines in a file (a quoted newline counts too: a progress estimate), read in large blocks.
    static func lineCount(_ path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var lines = 0
        while let block = try? handle.read(upToCount: 4 << 20), !block.isEmpty {
            lines += block.withUnsafeBytes { bytes in
                guard var next = bytes.baseAddress else { return 0 }
                var count = 0, rest = bytes.count
                while rest > 0, let found = memchr(next, 0x0A, rest) {
                    count += 1
                    let after = UnsafeRawPointer(found) + 1
                    rest -= after - next
                    next = after
                }
                return count
            }
        }
        return lines
    }

    /// Returns the number of data rows read.
    @discardableResult
    func load(into db: Database) throws -> Int {
        let table = file.table
        let header = file.header
        let names = ["source_line"] + header.columns.map(\.name)
        let insert = try db.makeStatement(sql: """
            INSERT INTO \(StagingTables.importTable(table)) (\(names.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))
            """)
        let handle = insert.sqliteStatement
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
        let threaded = size >= Self.threadedFromBytes
        let channel = BatchChannel(capacity: threaded ? 4 : .max)
        let reading = DispatchGroup()
        let file = self.file
        if threaded {
            reading.enter()
            DispatchQueue.global().async {
                channel.finish(Self.read(file, into: channel))
                reading.leave()
            }
        } else {
            channel.finish(Self.read(file, into: channel))
        }
        defer {
            channel.cancel()
            reading.wait()
        }
        var rows = 0
        Progress.phase("reading \(URL(fileURLWithPath: file.path).lastPathComponent)", total: Progress.observer == nil ? nil : Self.lineCount(file.path))
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let width = header.columns.count
        while let batch = try channel.take() {
            try batch.text.withUnsafeBufferPointer { text in
                for row in 0..<batch.count {
                    sqlite3_reset(handle)
                    sqlite3_bind_int64(handle, 1, Int64(batch.lines[row]))
                    for column in 0..<width {
                        let index = Int32(column + 2)
                        switch batch.fields[row * width + column] {
                        case .null: sqlite3_bind_null(handle, index)
                        case .integer(let value): sqlite3_bind_int64(handle, index, value)
                        case .real(let value): sqlite3_bind_double(handle, index, value)
                        case let .text(start, count):
                            sqlite3_bind_text(handle, index, UnsafeRawPointer(text.baseAddress! + start).assumingMemoryBound(to: CChar.self),
                                              Int32(count), transient)
                        }
                    }
                    do {
                        try StatementBinding.step(insert, db)
                    } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                        throw try duplicateKeyError(db, batch: batch, row: row)
                    }
                }
            }
            rows += batch.count
            if let last = batch.lines.last { Progress.update(last) }
        }
        return rows
    }

    /// Reads and checks the file, handing rows over in batches. Returns the error that
    /// stopped it (nil at the end of a good file).
    private static func read(_ file: ImportFile, into channel: BatchChannel) -> Error? {
        struct Cancelled: Error {}
        let header = file.header
        let decoder = FieldDecoder(file: file.displayName)
        var batch = ParsedBatch(capacity: batchSize, fieldsPerRow: header.columns.count)
        var isHeader = true
        do {
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
                for (index, column) in header.columns.enumerated() {
                    switch try decoder.parse(record.field(index), as: column, line: record.line) {
                    case .null: batch.fields.append(.null)
                    case .integer(let value): batch.fields.append(.integer(value))
                    case .real(let value): batch.fields.append(.real(value))
                    case .text(let bytes):
                        batch.fields.append(.text(start: batch.text.count, count: bytes.count))
                        batch.text.append(contentsOf: bytes)
                    }
                }
                batch.lines.append(record.line)
                if batch.count == batchSize {
                    guard channel.put(batch) else { throw Cancelled() }
                    batch = ParsedBatch(capacity: batchSize, fieldsPerRow: header.columns.count)
                }
            }
        } catch is Cancelled {
            return nil
        } catch {
            if batch.count > 0 { _ = channel.put(batch) }
            return error
        }
        if isHeader {
            return CSVError(file: file.displayName, line: nil, message: "empty file (expected a header line, then one row per record)")
        }
        if batch.count > 0 { _ = channel.put(batch) }
        return nil
    }

    private func duplicateKeyError(_ db: Database, batch: ParsedBatch, row: Int) throws -> CSVError {
        let table = file.table
        let width = file.header.columns.count
        let keyValues = table.keyColumns.map { key -> DatabaseValue in
            let index = file.header.columns.firstIndex { $0.name == key }!
            switch batch.fields[row * width + index] {
            case .null: return .null
            case .integer(let value): return value.databaseValue
            case .real(let value): return value.databaseValue
            case let .text(start, count): return String(decoding: batch.text[start..<(start + count)], as: UTF8.self).databaseValue
            }
        }
        let condition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        let firstLine = try Int.fetchOne(
            db, sql: "SELECT source_line FROM \(StagingTables.importTable(table)) WHERE \(condition)",
            arguments: StatementArguments(keyValues)) ?? 0
        let keyText = keyValues.map { $0.description }.joined(separator: "/")
        return CSVError(
            file: file.displayName, line: batch.lines[row],
            message: "duplicate key \(table.keyColumns.joined(separator: "/")) \(keyText), already on line \(firstLine) (expected each key once per file)")
    }
}
