import Foundation
import GRDB
import GRDBSQLite
import StationCSV
import StationCheck
import StationSchema
import StationSupport

/// Compares one CSV file with its master table as the file is read, and stages in
/// `temp.staged_<table>` only the rows that change (by the diff rules: `FieldChange.differ`).
///
/// Exports list their rows in key order, so the master is read in key order beside the file
/// (`OrderedScan`), and each row is compared column by column with the master's row of its
/// key; a row that did not change costs a step of the scan and is written nowhere. A row out
/// of place is looked up through the primary key instead. A table that is empty is neither
/// scanned nor searched: every row is an INSERT, written straight into the master. Rows of the
/// master that the file lacks, found where the scan steps over them, are staged last, as
/// closures (or removals, for connections).
///
/// A second thread reads and checks the file (libcsv, field rules) while this one compares:
/// the two halves of an import take about as long each.
///
/// - Throws: `InputError` naming the file, line and column: wrong field count, a bad value,
///   or a key that appears twice (both lines named). Of several problems, the one on
///   the earliest line is reported, as a reader going line by line would.
package struct StreamingTableDiff {
    package let file: ImportFile
    /// What the file is compared with.
    package var comparison: Comparison = .master

    /// What a file is compared with.
    package enum Comparison {
        /// The master, as the whole of the table: no import of the table was recorded before
        /// (DOMAIN.md: the first import of a table has no base).
        case master
        /// Upstream's last file: the master's rows, but where `<table>_upstream` holds them apart or
        /// lacks them. Those rows go to `theirs` for the three-way merge (`ThreeWayMerge`); every
        /// other row's base is the master's own, so it is compared and staged as against the
        /// master; the rows upstream had and the file lacks go to `dropped`, and close in the
        /// master where they are still open.
        case upstream
    }

    package init(file: ImportFile, comparison: Comparison = .master) {
        self.file = file
        self.comparison = comparison
    }

    /// What staging a file did.
    package struct StagedFile {
        /// The line of every key the file holds.
        package let keyLines: KeyLines
        /// The table was empty, and the file's rows are in the master already.
        package let loadedIntoMaster: Bool
        /// For the stations: every station as it was, as the scan read them; nil for another
        /// table, or a table that was empty.
        package let stationPlaces: StationPlaces?
        /// The table's rows before the version, counted by the scan (which steps onto each
        /// once): the mass-closure and mass-reopening guards weigh against them, and need no
        /// scan of their own.
        package let rowsBefore: RowCount
    }

    /// A table's rows, and how many of them are closed (`e_status`; none for a table that
    /// does not close by status).
    package struct RowCount: Sendable, Equatable {
        package var rows = 0
        package var closedRows = 0

        package init(rows: Int = 0, closedRows: Int = 0) {
            self.rows = rows
            self.closedRows = closedRows
        }

        package var openRows: Int { rows - closedRows }
    }

    /// Stages the file's changes.
    package func stage(_ db: Database) throws -> StagedFile {
        let staging = try RowStaging(file: file, comparison: comparison, db)
        let expectedLines = ImportFile.estimatedLineCount(file.path) ?? 0
        var scan = try staging.tableIsEmpty ? nil : OrderedScan(file.table, keepingPlacesOf: expectedLines, db)
        var lines = KeyLines(expected: expectedLines)
        // The whole file is counted only for a progress bar, which needs its total.
        Progress.phase("comparing \(URL(fileURLWithPath: file.path).lastPathComponent)",
                       total: Progress.observer == nil ? nil : ImportFile.lineCount(file.path))
        try file.forEachBatch { batch in
            try batch.text.withUnsafeBufferPointer { text in
                for row in 0..<batch.count {
                    try staging.stage(row, of: batch, text, scan: &scan, lines: &lines, db)
                }
            }
            if let last = batch.lines.last { Progress.update(last) }
        }
        sqlite3_reset(staging.lookup.sqliteStatement)
        var stationPlaces: StationPlaces?
        var rowsBefore = RowCount()
        if var scan {
            let passed = try scan.finish()
            stationPlaces = scan.places
            rowsBefore = scan.rowsStepped
            if comparison == .upstream {
                // What upstream had and no longer has: open rows of the master it did not lack,
                // and rows held apart (a connection a curator removed, say).
                let dropped = passed.filter { lines[$0] == nil && !staging.lacking.contains($0) && !staging.heldApart.contains($0) }
                try stageDroppedRows(dropped + staging.heldApart.filter { lines[$0] == nil }.sorted(), db)
            } else {
                try stageMissingRows(passed.filter { lines[$0] == nil }, db)
            }
        } else {
            try StagingTables.stageAsLoaded(file.table, db)
        }
        return StagedFile(keyLines: lines, loadedIntoMaster: staging.tableIsEmpty, stationPlaces: stationPlaces, rowsBefore: rowsBefore)
    }

    /// The statements and column maps that stage one file's rows, one row at a time: the master's
    /// row found (in the ordered scan, else by its key), the row kept for the merge where upstream's
    /// last file is not the master's, else compared and staged where it changes.
    private struct RowStaging {
        let file: ImportFile
        let columns: [MasterTable.Column]
        /// For each master column, the field of the file that gives it (nil: the stored value stays).
        let fieldOfColumn: [Int?]
        let keyFields: [Int]
        /// Fields a row of the file has (its header's columns).
        let width: Int
        let isKeyColumn: [Bool]
        let statusColumn: Int?
        /// Upstream's last file is the master but for these rows, held apart; a row it lacks has no base.
        let heldApart: Set<RowKey>, lacking: Set<RowKey>
        let tableIsEmpty: Bool
        let lookup: Statement
        /// Where a row goes for the merge.
        let keepTheirs: Statement?
        let insert: Statement

        init(file: ImportFile, comparison: Comparison, _ db: Database) throws {
            let table = file.table
            self.file = file
            columns = table.columns
            fieldOfColumn = table.columns.map { column in file.header.columns.firstIndex(of: column) }
            keyFields = table.keyColumns.map { key in file.header.columns.firstIndex { $0.name == key }! }
            width = file.header.columns.count
            isKeyColumn = table.columns.map { table.keyColumns.contains($0.name) }
            statusColumn = table.closesByStatus ? table.columns.firstIndex { $0.name == "e_status" } : nil
            let isThreeWay = comparison == .upstream
            (heldApart, lacking) = isThreeWay ? try Self.rowsHeldApart(table, db) : ([], [])
            tableIsEmpty = try !isThreeWay && Int.fetchOne(db, sql: "SELECT 1 FROM main.\(table.name) LIMIT 1") == nil
            let keyCondition = table.keyColumns.enumerated().map { "\($1) = ?\($0 + 1)" }.joined(separator: " AND ")
            lookup = try db.makeStatement(sql: "SELECT \(table.columnNames.joined(separator: ", ")) FROM main.\(table.name) WHERE \(keyCondition)")
            keepTheirs = isThreeWay ? try db.makeStatement(sql: """
                INSERT INTO \(StagingTables.theirsTable(table)) (source_line, \(table.columnNames.joined(separator: ", ")))
                VALUES (\((0..<table.columns.count + 1).map { "?\($0 + 1)" }.joined(separator: ", ")))
                """) : nil
            // An empty table is loaded straight into the master (every row is an INSERT), saving a
            // copy of every row; the staged table then becomes a view of it. The kind and line are
            // bound to ?1 and ?2 either way, and the master's statement leaves them out.
            insert = try db.makeStatement(sql: tableIsEmpty
                ? """
                    INSERT INTO main.\(table.name) (\(table.columnNames.joined(separator: ", ")))
                    VALUES (\((0..<table.columns.count).map { "?\($0 + 3)" }.joined(separator: ", ")))
                    """
                : """
                    INSERT INTO \(StagingTables.stagedTable(table)) (kind, source_line, \(table.columnNames.joined(separator: ", ")))
                    VALUES (\((0..<table.columns.count + 2).map { "?\($0 + 1)" }.joined(separator: ", ")))
                    """)
        }

        /// The keys `<table>_upstream` holds apart, and those of them upstream's last file lacked.
        private static func rowsHeldApart(_ table: MasterTable, _ db: Database) throws -> (heldApart: Set<RowKey>, lacking: Set<RowKey>) {
            var heldApart = Set<RowKey>(), lacking = Set<RowKey>()
            let keys = try db.makeStatement(sql: "SELECT \(table.keyOrder), upstream_lacks FROM main.\(table.upstreamTable)")
            let count = Int32(table.keyColumns.count)
            try StatementBinding.forEachRow(keys, db) { row in
                let key = RowKey(count: Int(count)) { sqlite3_column_int64(row, Int32($0)) }
                if sqlite3_column_int64(row, count) != 0 { lacking.insert(key) } else { heldApart.insert(key) }
            }
            return (heldApart, lacking)
        }

        func stage(_ row: Int, of batch: ParsedBatch, _ text: UnsafeBufferPointer<UInt8>, scan: inout OrderedScan?,
                   lines: inout KeyLines, _ db: Database) throws {
            let base = row * width
            let key = RowKey(count: keyFields.count) { batch.fields[base + keyFields[$0]].integerValue ?? 0 }
            try lines.recordOnce(key, line: batch.lines[row], of: file)
            let storedRow = try self.storedRow(key, in: batch, at: base, scan: &scan, db)
            // Where upstream's last file is the master's row, the master holds base, so no
            // column can conflict and the merge is this diff; only a row held apart or
            // lacking goes to the three-way merge.
            if let keepTheirs, (!heldApart.isEmpty && heldApart.contains(key)) || (!lacking.isEmpty && lacking.contains(key)) {
                let handle = keepTheirs.sqliteStatement
                sqlite3_reset(handle)
                sqlite3_bind_int64(handle, 1, Int64(batch.lines[row]))
                for (column, field) in fieldOfColumn.enumerated() {
                    if let field { StreamingTableDiff.bind(batch.fields[base + field], text, to: handle, at: Int32(column + 2)) } else { sqlite3_bind_null(handle, Int32(column + 2)) }
                }
                try StatementBinding.step(keepTheirs, db)
                return
            }
            guard let kind = change(of: storedRow, to: batch, at: base, text) else { return }
            let insertHandle = insert.sqliteStatement
            sqlite3_reset(insertHandle)
            sqlite3_bind_text(insertHandle, 1, kind.rawValue, -1, StreamingTableDiff.transient)
            sqlite3_bind_int64(insertHandle, 2, Int64(batch.lines[row]))
            for (column, field) in fieldOfColumn.enumerated() {
                let index = Int32(column + 3)
                if let field {
                    StreamingTableDiff.bind(batch.fields[base + field], text, to: insertHandle, at: index)
                } else if let storedRow {
                    sqlite3_bind_value(insertHandle, index, sqlite3_column_value(storedRow, Int32(column)))
                } else if let value = columns[column].defaultValue {
                    sqlite3_bind_int64(insertHandle, index, Int64(value))
                } else {
                    sqlite3_bind_null(insertHandle, index)
                }
            }
            try StatementBinding.step(insert, db)
        }

        /// The statement that stands on the master's row of `key`, if there is one: the ordered
        /// scan's, or the lookup's for a row out of place.
        private func storedRow(_ key: RowKey, in batch: ParsedBatch, at base: Int, scan: inout OrderedScan?, _ db: Database) throws -> SQLiteStatement? {
            let place = try scan?.advance(to: key) ?? .absent
            if place == .found { return scan!.handle }
            guard place == .unknown else { return nil }
            let lookupHandle = lookup.sqliteStatement
            sqlite3_reset(lookupHandle)
            for (index, field) in keyFields.enumerated() {
                sqlite3_bind_int64(lookupHandle, Int32(index + 1), batch.fields[base + field].integerValue ?? 0)
            }
            switch sqlite3_step(lookupHandle) {
            case SQLITE_ROW: return lookupHandle
            case SQLITE_DONE: return nil
            default: throw StatementBinding.lastError(lookup, db)
            }
        }

        /// The kind of change the file's row makes to the stored one; nil where no column differs.
        private func change(of storedRow: SQLiteStatement?, to batch: ParsedBatch, at base: Int, _ text: UnsafeBufferPointer<UInt8>) -> Update.Kind? {
            guard let storedRow else { return .insert }
            var changed = false
            for (column, field) in fieldOfColumn.enumerated() {
                guard let field, !isKeyColumn[column] else { continue }
                if StreamingTableDiff.differs(batch.fields[base + field], text, stored: storedRow, column: Int32(column), kind: columns[column].kind) {
                    changed = true
                    break
                }
            }
            guard changed else { return nil }
            var storedStatus: Int64?, newStatus: Int64?
            if let statusColumn, let field = fieldOfColumn[statusColumn] {
                storedStatus = sqlite3_column_int64(storedRow, Int32(statusColumn))
                newStatus = batch.fields[base + field].integerValue
            }
            return Update.Kind.change(stored: true, storedStatus: storedStatus, newStatus: newStatus)
        }
    }

    /// Rows of the master that the file lacks: closed (e_status 2, the rest unchanged) or,
    /// for a table that does not close by status, removed.
    private func stageMissingRows(_ missing: [RowKey], _ db: Database) throws {
        let table = file.table
        let keyCondition = table.keyColumns.enumerated().map { "\($1) = ?\($0 + 1)" }.joined(separator: " AND ")
        let values = table.columns.map { table.closesByStatus && $0.name == "e_status" ? "\(MasterTable.closedStatus)" : $0.name }
        let stageMissing = try db.makeStatement(sql: """
            INSERT INTO \(StagingTables.stagedTable(table)) (kind, source_line, \(table.columnNames.joined(separator: ", ")))
            SELECT \(Update.Kind.delete.sql), NULL, \(values.joined(separator: ", ")) FROM main.\(table.name) WHERE \(keyCondition)
            """)
        for key in missing {
            try stageMissing.execute(arguments: StatementArguments(key.values))
        }
    }

    /// Rows upstream's last file had and this one lacks: upstream dropped them. Each is recorded
    /// in `dropped` (the base forgets it) and closed in the master if it is open there (or, for
    /// connections, removed if the master has it): a row upstream never had is not looked at.
    private func stageDroppedRows(_ dropped: [RowKey], _ db: Database) throws {
        let table = file.table
        let keyCondition = table.keyColumns.enumerated().map { "\($1) = ?\($0 + 1)" }.joined(separator: " AND ")
        let values = table.columns.map { table.closesByStatus && $0.name == "e_status" ? "\(MasterTable.closedStatus)" : $0.name }
        let record = try db.makeStatement(sql: """
            INSERT OR IGNORE INTO \(StagingTables.droppedTable(table)) (\(table.keyOrder))
            VALUES (\(table.keyColumns.indices.map { "?\($0 + 1)" }.joined(separator: ", ")))
            """)
        let close = try db.makeStatement(sql: """
            INSERT OR IGNORE INTO \(StagingTables.stagedTable(table)) (kind, source_line, \(table.columnNames.joined(separator: ", ")))
            SELECT \(Update.Kind.delete.sql), NULL, \(values.joined(separator: ", ")) FROM main.\(table.name) WHERE \(keyCondition)
            \(table.closesByStatus ? "AND e_status <> \(MasterTable.closedStatus)" : "")
            """)
        for key in dropped {
            try record.execute(arguments: StatementArguments(key.values))
            try close.execute(arguments: StatementArguments(key.values))
        }
    }

    /// True when a file's field and the stored column differ under the diff rules:
    /// NULL-aware, text byte for byte, coordinates equal within `MasterTable.coordinateTolerance`
    /// (as `CuratedRowDiff.differsSQL` says in SQL for curated batches).
    ///
    /// The column is read once (`sqlite3_column_value`), its type and value from that: each
    /// `sqlite3_column_*` call takes and leaves the connection's mutex, which its type, text and
    /// length would pass three times for every text column of every row. The value is read on
    /// the connection's own thread, before the statement steps again.
    fileprivate static func differs(_ field: ParsedBatch.Field, _ text: UnsafeBufferPointer<UInt8>,
                                stored: SQLiteStatement, column: Int32, kind: MasterTable.ColumnKind) -> Bool {
        let stored = sqlite3_column_value(stored, column)
        let type = sqlite3_value_type(stored)
        switch field {
        case .null:
            return type != SQLITE_NULL
        case .integer(let value):
            switch type {
            case SQLITE_INTEGER: return sqlite3_value_int64(stored) != value
            case SQLITE_FLOAT: return sqlite3_value_double(stored) != Double(value)
            default: return true
            }
        case .real(let value):
            guard type == SQLITE_INTEGER || type == SQLITE_FLOAT else { return true }
            let old = sqlite3_value_double(stored)
            switch kind {
            case .coordinate, .real: return !MasterTable.isSameCoordinate(value, old)
            default: return value != old
            }
        case let .text(start, count):
            guard type == SQLITE_TEXT else { return true }
            let bytes = sqlite3_value_text(stored)
            guard Int(sqlite3_value_bytes(stored)) == count else { return true }
            guard count > 0, let bytes else { return false }
            return memcmp(bytes, text.baseAddress! + start, count) != 0
        }
    }

    fileprivate static func bind(_ field: ParsedBatch.Field, _ text: UnsafeBufferPointer<UInt8>, to handle: SQLiteStatement, at index: Int32) {
        switch field {
        case .null: sqlite3_bind_null(handle, index)
        case .integer(let value): sqlite3_bind_int64(handle, index, value)
        case .real(let value): sqlite3_bind_double(handle, index, value)
        case let .text(start, count):
            sqlite3_bind_text(handle, index, UnsafeRawPointer(text.baseAddress! + start).assumingMemoryBound(to: CChar.self),
                              Int32(count), transient)
        }
    }

    fileprivate static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

}

/// The master's rows in key order, walked alongside a file whose rows come in key order, as
/// exports list them: one step per row instead of a primary-key lookup, and the rows the
/// file skips are found on the way instead of by a second scan.
private struct OrderedScan {
    private let statement: Statement
    private let db: Database
    private let keyColumns: [Int32]
    /// For a table that closes by status: `e_status`, since a closed row the file lacks stays as it is.
    private let statusColumn: Int32?
    /// The key of the row the scan stands on; nil after the last.
    private(set) var key: RowKey?
    /// Open rows stepped over: the file had not given them when the scan passed.
    private var passed: [RowKey] = []
    /// The scan stands on a row the file gave: stepping off it passes nothing.
    private var standsOnGivenRow = false
    /// The row the scan stands on is closed.
    private var standsOnClosedRow = false
    /// Every row stepped onto, and the closed among them: once `finish` returns, the table's.
    private(set) var rowsStepped = StreamingTableDiff.RowCount()
    /// For the stations: every row stepped onto (each is, once, in code order).
    private(set) var places: StationPlaces?
    private let placeColumns: StationPlaces.Columns?

    package var handle: SQLiteStatement { statement.sqliteStatement }

    /// - Parameter expected: the rows the file is thought to hold; for the stations, every
    ///   station's place is kept (`places`), with room for that many.
    package init(_ table: MasterTable, keepingPlacesOf expected: Int, _ db: Database) throws {
        statement = try db.makeStatement(sql: "SELECT \(table.columnNames.joined(separator: ", ")) FROM main.\(table.name) ORDER BY \(table.keyOrder)")
        self.db = db
        placeColumns = table == .stations ? StationPlaces.Columns(in: table.columnNames) : nil
        places = placeColumns.map { _ in StationPlaces(expected: expected) }
        keyColumns = table.keyColumns.map { key in Int32(table.columns.firstIndex { $0.name == key }!) }
        statusColumn = table.closesByStatus ? table.columns.firstIndex { $0.name == "e_status" }.map(Int32.init) : nil
        try step()
    }

    /// Where a key stands against the scan.
    package enum Place {
        /// The scan stands on the key's row.
        case found
        /// The scan passed the key's place: the master has no such row.
        case absent
        /// The key is behind the scan, or too far ahead: look it up.
        case unknown
    }

    /// Rows the scan steps over for one key before it leaves that key to a lookup. A row out
    /// of place, such as a new station listed with its line, then costs a few steps and a few
    /// lookups, instead of taking the scan past the rows that follow it in the file.
    package static let reach = 32

    /// Moves towards `target`, at most `reach` rows.
    package mutating func advance(to target: RowKey) throws -> Place {
        var steps = 0
        while let current = key, current < target {
            guard steps < Self.reach else { return .unknown }
            pass(current)
            try step()
            steps += 1
        }
        guard let current = key else { return .unknown }
        if current == target {
            standsOnGivenRow = true
            return .found
        }
        return steps > 0 ? .absent : .unknown
    }

    /// Steps over the rest; returns every open row stepped over.
    package mutating func finish() throws -> [RowKey] {
        while let current = key {
            pass(current)
            try step()
        }
        sqlite3_reset(handle)
        return passed
    }

    private mutating func pass(_ current: RowKey) {
        if standsOnGivenRow || standsOnClosedRow { return }
        passed.append(current)
    }

    private mutating func step() throws {
        standsOnGivenRow = false
        switch sqlite3_step(handle) {
        case SQLITE_ROW:
            let handle = handle, keyColumns = keyColumns
            key = RowKey(count: keyColumns.count) { sqlite3_column_int64(handle, keyColumns[$0]) }
            if let placeColumns { places?.append(handle, placeColumns) }
            standsOnClosedRow = statusColumn.map { sqlite3_column_int64(handle, $0) == Int64(MasterTable.closedStatus) } ?? false
            rowsStepped.rows += 1
            if standsOnClosedRow { rowsStepped.closedRows += 1 }
        case SQLITE_DONE:
            key = nil
            standsOnClosedRow = false
        default:
            throw StatementBinding.lastError(statement, db)
        }
    }
}
