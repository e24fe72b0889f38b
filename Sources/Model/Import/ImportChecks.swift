import Foundation
import GRDB
import GRDBSQLite
import StationCSV
import StationCheck
import StationSchema
import StationSupport
import StationVersion

/// Checks of a pending import version that need every file: references between tables,
/// mass closures, and connections naming what the free data leaves out.
package struct ImportChecks {
    package let files: [ImportFile]
    /// The line of each key in each file, from `PendingVersion.stage(_:)`.
    package let keyLines: [MasterTable: KeyLines]
    /// More closures than this share of a table's open rows needs `allowMassClose`.
    package static let massCloseShare = 0.05

    package func file(for table: MasterTable) -> ImportFile? { files.first { $0.table == table } }

    /// The master as it was before the import, read on a second connection and core begun inside
    /// the import's write transaction: the write lock keeps every other writer out, so this
    /// connection reads the state the import began from while the import writes and checks its
    /// version: that reading is off the import's own path.
    package struct StateBefore: Sendable {
        /// What the import needs first, once its version is written.
        package struct Counts: Sendable {
            /// The open rows of each imported table, which `checkMassClosures` weighs closures against.
            package let openRows: [MasterTable: Int]
            /// The closed rows of each imported table that closes by status, which
            /// `checkMassReopenings` weighs reopenings against.
            package let closedRows: [MasterTable: Int]
            /// The connections that touched a station the import changes (`CheckScope.build`); nil
            /// unless the import changes few enough stations (a twentieth, or a thousand) that
            /// looking at them again after a scan of the stations before is cheaper than a scan
            /// of the stations now.
            package let touchingChangedStations: [CheckScope.ConnectionKey]?
        }

        package let counts: BackgroundTask<Counts>
        /// `connectionWarnings`, read once `counts` is, while the import checks its version.
        package let connectionWarnings: BackgroundTask<[String]>
        /// Closed once the import and the last of these reads are done with it (GRDB closes a
        /// queue when it is released); nil when the state before was read up front (`MasterBefore`).
        let queue: DatabaseQueue?

        /// Until the second connection is done, however it ended (an import that fails waits so).
        package func finish() {
            _ = try? counts.wait()
            _ = try? connectionWarnings.wait()
        }
    }

    /// Starts reading `StateBefore` of `master`, whose write transaction the caller holds, with
    /// `changedStations` the codes of the stations the import changes (nil when the stations were
    /// loaded into their empty table: every one is new), and `counted` the tables whose rows the
    /// compare counted as it scanned them (not scanned again here).
    package func readStateBefore(of master: MasterDatabase, changedStations: Set<Int64>?,
                                 counted: [MasterTable: StreamingTableDiff.RowCount]) throws -> StateBefore {
        var configuration = MasterDatabase.configuration(label: "state before the import")
        configuration.readonly = true
        let queue = try DatabaseQueue(path: master.path, configuration: configuration)
        let checks = self
        // Each connection found is inserted into the scope on the import's connection, and each
        // station changed read again for the suggestions, a few times the cost of scanning one.
        let changedStations = changedStations.flatMap { $0.count <= max(1_000, (keyLines[.stations]?.count ?? 0) / 20) ? $0 : nil }
        let counts = BackgroundTask {
            try queue.read { db in
                var rows = try Self.rowCounts(db, tables: checks.files.map(\.table).filter { counted[$0] == nil })
                for (table, count) in counted {
                    rows.open[table] = count.openRows
                    if table.closesByStatus { rows.closed[table] = count.closedRows }
                }
                return StateBefore.Counts(openRows: rows.open, closedRows: rows.closed,
                                   touchingChangedStations: try changedStations.map { try CheckScope.connections(touching: $0, db) })
            }
        }
        let warnings = BackgroundTask {
            // One connection, one read after the other: the second core is not shared three ways.
            _ = try? counts.wait()
            return try queue.read { db in try checks.connectionWarnings { table, codes in try Self.existing(codes, in: table, db) } }
        }
        return StateBefore(counts: counts, connectionWarnings: warnings, queue: queue)
    }

    /// What an import checks against in the master before it, read on the import's own
    /// connection before anything is staged. For a master with a rollback journal, where a
    /// second connection cannot read beside a writer that has begun writing pages to the file
    /// (`MasterDatabase.withRollbackJournal`); the master is then empty, and this costs nothing.
    package struct MasterBefore: Sendable {
        let openRows: [MasterTable: Int]
        let closedRows: [MasterTable: Int]
        let stationCodes: Set<Int64>
        let lineCodes: Set<Int64>

        package static func read(_ db: Database, tables: [MasterTable]) throws -> MasterBefore {
            let rows = try ImportChecks.rowCounts(db, tables: tables)
            return MasterBefore(openRows: rows.open, closedRows: rows.closed,
                                stationCodes: try ImportChecks.codes(db, "SELECT station_cd FROM main.stations"),
                                lineCodes: try ImportChecks.codes(db, "SELECT line_cd FROM main.lines"))
        }
    }

    /// `StateBefore` from what was read up front, with nothing left to read.
    package func stateBefore(from master: MasterBefore) -> StateBefore {
        let counts = StateBefore.Counts(openRows: master.openRows, closedRows: master.closedRows, touchingChangedStations: nil)
        let warnings = Result {
            try connectionWarnings { table, codes in codes.intersection(table == .stations ? master.stationCodes : master.lineCodes) }
        }
        return StateBefore(counts: BackgroundTask { counts },
                           connectionWarnings: BackgroundTask { try warnings.get() }, queue: nil)
    }

    private static func rowCounts(_ db: Database, tables: [MasterTable]) throws -> (open: [MasterTable: Int], closed: [MasterTable: Int]) {
        var open: [MasterTable: Int] = [:], closed: [MasterTable: Int] = [:]
        for table in tables {
            guard table.closesByStatus else {
                open[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM main.\(table.name)") ?? 0
                continue
            }
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*), COALESCE(SUM(e_status = \(MasterTable.closedStatus)), 0) FROM main.\(table.name)
                """)!
            let (all, closedCount): (Int, Int) = (row[0], row[1])
            open[table] = all - closedCount
            closed[table] = closedCount
        }
        return (open, closed)
    }

    /// An older snapshot reopens what the newer ones closed: more reopenings than this share of a
    /// table's closed rows, and more than `massReopenFloor`, needs `allowMassReopen`.
    package static let massReopenShare = 0.05
    /// Reopening a handful of stations is a curator's everyday correction, whatever the share.
    package static let massReopenFloor = 10

    /// Refuses reopening more than `massReopenShare` of a table's rows closed before the import
    /// (`closedRows`, from `StateBefore.Counts`): the mirror of `checkMassClosures`.
    package func checkMassReopenings(_ version: PendingVersion, closedRows: [MasterTable: Int]) throws {
        for file in files where file.table.closesByStatus {
            let closed = closedRows[file.table] ?? 0
            let reopening = try version.reopeningCount(of: file.table)
            if reopening > Self.massReopenFloor && Double(reopening) > Double(closed) * Self.massReopenShare {
                throw ImportError.massReopening(file: file.displayName, table: file.table.name, reopening: reopening, closed: closed)
            }
        }
    }

    /// Refuses closing more than `massCloseShare` of a table's rows open before the import
    /// (`openRows`, from `StateBefore.Counts`).
    package func checkMassClosures(_ version: PendingVersion, openRows: [MasterTable: Int]) throws {
        for file in files {
            let table = file.table
            let open = openRows[table] ?? 0
            let closing = try version.closingCount(of: table)
            if open > 0 && Double(closing) > Double(open) * Self.massCloseShare {
                throw ImportError.massClosure(file: file.displayName, table: table.name, closing: closing, open: open)
            }
        }
    }

    /// Run after the version is written: every row the files changed must name an existing parent.
    package func checkReferences(_ version: PendingVersion) throws {
        for reference in MasterTable.references {
            let (column, parent) = (reference.column, reference.parent)
            guard let file = file(for: reference.child),
                  let dangling = try version.firstDanglingRow(reference, fromFilesOnly: true)
            else { continue }
            let line = dangling.sourceLine ?? Int64(dangling.key).flatMap { keyLines[reference.child]?[RowKey([$0])] } ?? 0
            throw InputError(.importedRow, file: file.displayName, line: line,
                message: "\(column) \(dangling.value) names no row of \(parent.name) (expected a \(parent.keyColumns[0]) that exists in the database or in the \(parent.name) file)")
        }
    }

    /// Connections naming a missing station or line are imported, and counted here.
    ///
    /// The master's connections after the import are the file's, whose keys `keyLines` holds,
    /// so they are read from there and not from the table. Rows are never removed, so the
    /// stations and lines after the import are the files' and those before it: a code is looked
    /// up in the files first, and only the few codes they lack (the Shinkansen stations of 145
    /// connections in the 2021 ekidata, none in the synthetic million) are asked of the master:
    /// `existingInMaster` gives those of `codes` that its `table` has. The master's codes are not
    /// all read into memory for the few the files lack.
    private func connectionWarnings(existingInMaster: (_ table: MasterTable, _ codes: Set<Int64>) throws -> Set<Int64>,
                                    examples: Int = 3) throws -> [String] {
        guard let file = file(for: .connections), let connections = keyLines[.connections] else { return [] }
        let (fileStations, fileLines) = (keyLines[.stations], keyLines[.lines])
        // Connections come line after line, their stations in code order: each lookup starts
        // where the one before ended.
        var (lineHint, stationHint) = (0, 0)
        func inFile(_ code: Int64, _ file: KeyLines?, _ hint: inout Int) -> Bool {
            file?.contains(RowKey(count: 1) { _ in code }, near: &hint) == true
        }
        var (stationsNotInFiles, linesNotInFiles) = (Set<Int64>(), Set<Int64>())
        connections.forEach { key, _ in
            if !inFile(key[0], fileLines, &lineHint) { linesNotInFiles.insert(key[0]) }
            if !inFile(key[1], fileStations, &stationHint) { stationsNotInFiles.insert(key[1]) }
            if !inFile(key[2], fileStations, &stationHint) { stationsNotInFiles.insert(key[2]) }
        }
        let missingStations = stationsNotInFiles.subtracting(try existingInMaster(.stations, stationsNotInFiles))
        let missingLines = linesNotInFiles.subtracting(try existingInMaster(.lines, linesNotInFiles))
        guard !missingStations.isEmpty || !missingLines.isEmpty else { return [] }
        var missing: [(line: Int, key: RowKey)] = []
        connections.forEach { key, line in
            guard missingLines.contains(key[0]) || missingStations.contains(key[1]) || missingStations.contains(key[2]) else { return }
            missing.append((line, key))
        }
        let count = missing.count
        let shown = missing.sorted { $0.line < $1.line }.prefix(examples).map { "line \($0.line): \($0.key.values.map(String.init).joined(separator: ","))" }
        let subject = count == 1 ? "1 connection names" : "\(count) connections name"
        return ["\(file.displayName): \(subject) a station or line that does not exist; imported anyway "
            + "(the free ekidata leaves out Shinkansen stations), e.g. \(shown.joined(separator: "; "))"]
    }

    /// Those of `codes` that `table` has, each looked up by its key.
    private static func existing(_ codes: Set<Int64>, in table: MasterTable, _ db: Database) throws -> Set<Int64> {
        guard !codes.isEmpty else { return [] }
        let key = table.keyColumns[0]
        let listed = String(decoding: try JSONEncoder().encode(codes.sorted()), as: UTF8.self)
        return Set(try Int64.fetchAll(db, sql: """
            SELECT t.\(key) FROM json_each(?) j JOIN main.\(table.name) t ON t.\(key) = j.value
            """, arguments: [listed]))
    }

    /// The codes a query lists, read straight from SQLite into a set.
    private static func codes(_ db: Database, _ sql: String) throws -> Set<Int64> {
        var codes = Set<Int64>()
        try StatementBinding.forEachRow(try db.makeStatement(sql: sql), db) { codes.insert(sqlite3_column_int64($0, 0)) }
        return codes
    }
}


/// An import refused as a whole, not for one row.
public enum ImportError: Error, LocalizedError, Equatable {
    case massClosure(file: String, table: String, closing: Int, open: Int)
    case massReopening(file: String, table: String, reopening: Int, closed: Int)
    /// The file's snapshot is older than the newest one imported for its table.
    case olderSnapshot(file: String, table: String, date: String, newest: String, newestVersion: Int)
    case badSnapshotDate(String)
    /// Conflicts or provisional rows nobody decided: nothing is written.
    case undecided(conflicts: [MergeConflict], adoptions: [Adoption])
    /// A second source's import into a master its primary has not yet imported into.
    case noPrimary(source: String)
    /// `--source` names no source this StationAdmin knows.
    case unknownSource(String)

    public var errorDescription: String? {
        switch self {
        case let .massReopening(file, table, reopening, closed):
            let percent = closed == 0 ? 100 : Double(reopening) / Double(closed) * 100
            return "\(file): would reopen \(reopening) of the \(closed) closed rows of \(table) (\(String(format: "%.1f", percent))%, more than 5%): "
                + "is this an older snapshot? If this is really so, import again with --allow-mass-reopen"
        case let .olderSnapshot(file, table, date, newest, newestVersion):
            return "\(file): the snapshot is of \(date), older than the \(table) snapshot of \(newest) imported in version \(newestVersion): "
                + "importing it would undo what upstream and curators recorded since (expected a snapshot of \(newest) or later; "
                + "if the file is named with the wrong date, give the right one with --snapshot-date YYYY-MM-DD; to import it anyway, --allow-older)"
        case let .noPrimary(source):
            return "\(source) fills what the master's primary source lacks, and nothing was imported from the primary yet "
                + "(expected an import without --source first: the first source a master imports is its primary, ekidata)"
        case let .unknownSource(name):
            return "--source \(name): not a source this StationAdmin reads (expected one of: \(SourceProfile.known.map(\.name).joined(separator: ", ")))"
        case let .badSnapshotDate(date):
            return "--snapshot-date \(date) is not a date (expected YYYY-MM-DD, e.g. 2021-03-12)"
        case let .undecided(conflicts, adoptions):
            var lines: [String] = []
            if !adoptions.isEmpty {
                lines.append("\(adoptions.count) provisional \(adoptions.count == 1 ? "row matches" : "rows match") upstream's rows for the same event; adopt them (--adopt) or decide each in a resolution file:")
                lines += adoptions.map { "  \($0.description) (\($0.reason))" }
            }
            if !conflicts.isEmpty {
                lines.append("\(conflicts.count) \(conflicts.count == 1 ? "column was" : "columns were") changed by both upstream and curators:")
                lines += conflicts.prefix(MergeConflict.shownInRefusal).map { "  " + $0.description }
                if conflicts.count > MergeConflict.shownInRefusal { lines.append("  … and \(conflicts.count - MergeConflict.shownInRefusal) more") }
            }
            let all = [conflicts.isEmpty ? nil : "--prefer theirs|ours", adoptions.isEmpty ? nil : "--adopt"].compactMap { $0 }
            lines.append("Nothing was written. Decide all with \(all.joined(separator: " and ")), "
                + "or each in a file: diff --conflicts writes its skeleton, import --resolve FILE reads it.")
            return "the import needs decisions:\n" + lines.joined(separator: "\n")
        case let .massClosure(file, table, closing, open):
            let percent = Double(closing) / Double(open) * 100
            return "\(file): would close \(closing) of the \(open) open rows of \(table) (\(String(format: "%.1f", percent))%, more than 5%): "
                + "is the file truncated? If this is really so, import again with --allow-mass-close"
        }
    }
}
