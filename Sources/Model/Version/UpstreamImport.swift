import Foundation
import GRDB
import StationSchema

/// One import of a table from an upstream file, as `upstream_imports` records it: the version it
/// made, the snapshot's date, and the columns the file gave (what `<table>_upstream` holds).
public struct UpstreamImport: Sendable, Equatable {
    /// The data version the import made, or the master's when it changed nothing there: versions
    /// after it are the curators' (or later imports').
    public let version: Int
    /// The table imported.
    public let table: MasterTable
    /// The snapshot's date, `YYYY-MM-DD`; nil when neither the file's name nor the curator gave one.
    public let snapshotDate: String?
    /// The file's name, without its folder.
    public let fileName: String
    /// The columns the file gave: only these have a base for the next import.
    public let columns: [String]

    /// The newest import of `table`, if the table was ever imported since imports were recorded.
    package static func newest(of table: MasterTable, _ db: Database) throws -> UpstreamImport? {
        try Row.fetchOne(db, sql: """
            SELECT version, snapshot_date, file_name, columns FROM upstream_imports
            WHERE table_name = ? ORDER BY id DESC LIMIT 1
            """, arguments: [table.name]).map { row in
            UpstreamImport(version: row[0], table: table, snapshotDate: row[1], fileName: row[2],
                           columns: (row[3] as String).split(separator: ",").map(String.init))
        }
    }

    /// The newest snapshot date recorded for `table`, with the version that brought it: the
    /// first import of that snapshot, one that made its version before one that changed nothing
    /// (which records the master's version then, a curator's perhaps).
    package static func newestDate(of table: MasterTable, _ db: Database) throws -> (date: String, version: Int)? {
        try Row.fetchOne(db, sql: """
            SELECT snapshot_date, version FROM upstream_imports
            WHERE table_name = ? AND snapshot_date IS NOT NULL ORDER BY snapshot_date DESC, made_version DESC, id LIMIT 1
            """, arguments: [table.name]).map { ($0[0], $0[1]) }
    }

    package func record(_ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO upstream_imports (version, made_version, table_name, snapshot_date, file_name, columns) VALUES (?, 1, ?, ?, ?, ?)
            """, arguments: [version, table.name, snapshotDate, fileName, columns.joined(separator: ",")])
    }
}
