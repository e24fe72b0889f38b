import Foundation
import GRDB

/// Checks of a pending import version that need every file: references between tables,
/// mass closures, and connections naming what the free data leaves out.
struct ImportChecks {
    let files: [ImportFile]
    /// The line of each key in each file, from `PendingVersion.stage(_:)`.
    let keyLines: [MasterTable: KeyLines]
    /// More closures than this share of a table's open rows needs `allowMassClose`.
    static let massCloseShare = 0.05

    func file(for table: MasterTable) -> ImportFile? { files.first { $0.table == table } }

    /// Run before the version is written: open rows are counted in the current state.
    func checkMassClosures(_ version: PendingVersion, _ db: Database) throws {
        for file in files {
            let table = file.table
            let open = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM main.\(table.name)\(table.closesByStatus ? " WHERE e_status <> \(MasterTable.closedStatus)" : "")") ?? 0
            let closing = try version.closingCount(of: table)
            if open > 0 && Double(closing) > Double(open) * Self.massCloseShare {
                throw ImportError.massClosure(file: file.displayName, table: table.name, closing: closing, open: open)
            }
        }
    }

    /// Run after the version is written: every row the files changed must name an existing parent.
    func checkReferences(_ version: PendingVersion) throws {
        for reference in MasterTable.references {
            let (column, parent) = (reference.column, reference.parent)
            guard let file = file(for: reference.child),
                  let dangling = try version.firstDanglingRow(reference, fromFilesOnly: true)
            else { continue }
            let line = dangling.sourceLine ?? Int64(dangling.key).flatMap { keyLines[reference.child]?[RowKey([$0])] } ?? 0
            throw CSVError(
                file: file.displayName, line: line,
                message: "\(column) \(dangling.value) names no row of \(parent.name) (expected a \(parent.keyColumns[0]) that exists in the database or in the \(parent.name) file)")
        }
    }

    /// Connections naming a missing station or line are imported, and counted here.
    ///
    /// Run after the batch is written: the master's connections are then the file's.
    func connectionWarnings(_ db: Database, examples: Int = 3) throws -> [String] {
        guard let file = file(for: .connections), let lines = keyLines[.connections] else { return [] }
        let rows = try Row.fetchCursor(db, sql: """
            SELECT line_cd, station_cd1, station_cd2 FROM main.connections c
            WHERE NOT EXISTS (SELECT 1 FROM main.lines l WHERE l.line_cd = c.line_cd)
               OR NOT EXISTS (SELECT 1 FROM main.stations s WHERE s.station_cd = c.station_cd1)
               OR NOT EXISTS (SELECT 1 FROM main.stations s WHERE s.station_cd = c.station_cd2)
            """)
        var missing: [(line: Int, key: RowKey)] = []
        while let row = try rows.next() {
            let key = RowKey([row[0], row[1], row[2]])
            missing.append((lines[key] ?? 0, key))
        }
        let count = missing.count
        let shown = missing.sorted { $0.line < $1.line }.prefix(examples).map { "line \($0.line): \($0.key.values.map(String.init).joined(separator: ","))" }
        guard count > 0 else { return [] }
        let subject = count == 1 ? "1 connection names" : "\(count) connections name"
        return ["\(file.displayName): \(subject) a station or line that does not exist; imported anyway "
            + "(the free ekidata leaves out Shinkansen stations), e.g. \(shown.joined(separator: "; "))"]
    }
}

public enum ImportError: Error, LocalizedError, Equatable {
    case massClosure(file: String, table: String, closing: Int, open: Int)

    public var errorDescription: String? {
        switch self {
        case let .massClosure(file, table, closing, open):
            let percent = Double(closing) / Double(open) * 100
            return "\(file): would close \(closing) of \(open) open \(table) rows (\(String(format: "%.1f", percent))%, more than 5%): "
                + "is the file truncated? If this is really so, import again with --allow-mass-close"
        }
    }
}
