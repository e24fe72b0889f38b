import GRDB
import StationCSV
import StationSchema
import StationVersion

/// What the master records of its sources (the `sources` command): the primary (the source of
/// its first import, ekidata) and each source that fills what the primary lacks, in the order
/// first imported, with its newest import of each table and what that import contributed.
public struct SourceLedger: Sendable {
    /// The master whose sources these are.
    public let master: MasterDatabase

    /// The ledger of `master`'s sources.
    public init(_ master: MasterDatabase) { self.master = master }

    /// One source, as `sources --json` prints it.
    public struct Source: Codable, Sendable, Equatable {
        /// The source's name (`import --source`): `ekidata` for the primary.
        public let name: String
        /// `primary`, whose values stand; `fills`, which fills only what the primary lacks.
        public let role: String
        /// 1 for the primary, then in the order first imported.
        public let position: Int
        /// The data version of its newest import (the master's then when it changed nothing).
        public let version: Int
        /// The newest snapshot's date imported, `YYYY-MM-DD`; nil when no file gave one.
        public let snapshotDate: String?
        /// Its newest import of each table.
        public let tables: [Table]
        /// Cells where it and the primary both have a value and differ (`source-disagrees`); 0 for the primary.
        public let disagreements: Int

        private enum CodingKeys: String, CodingKey {
            case name, role, position, version, snapshotDate = "snapshot_date", tables, disagreements
        }
    }

    /// A source's newest import of one table.
    public struct Table: Codable, Sendable, Equatable {
        /// The master table.
        public let table: String
        /// The file's name, without its folder.
        public let file: String
        /// The master's columns the file gave.
        public let columns: [String]
        /// Rows of the master the source carries: for the primary, every row its last file
        /// has; for another, the rows it added that the primary still lacks.
        public let rows: Int
        /// For a source that fills: rows whose empty cells its newest import filled; nil for the primary.
        public let filled: Int?
    }

    /// Every source, the primary first; empty before the first import.
    public func sources() throws -> [Source] {
        try master.read { db in
            guard try db.tableExists("upstream_imports"), let primaryVersion = try Int.fetchOne(db, sql: "SELECT MAX(version) FROM upstream_imports") else {
                return []
            }
            var sources = [Source(name: SourceProfile.ekidata.name, role: "primary", position: 1, version: primaryVersion,
                                  snapshotDate: try String.fetchOne(db, sql: "SELECT MAX(snapshot_date) FROM upstream_imports"),
                                  tables: try primaryTables(db), disagreements: 0)]
            guard try db.tableExists("source_imports") else { return sources }
            let names = try String.fetchAll(db, sql: "SELECT source FROM source_imports GROUP BY source ORDER BY MIN(id)")
            for (index, name) in names.enumerated() {
                sources.append(Source(
                    name: name, role: "fills", position: index + 2,
                    version: try Int.fetchOne(db, sql: "SELECT MAX(version) FROM source_imports WHERE source = ?", arguments: [name]) ?? 0,
                    snapshotDate: try String.fetchOne(db, sql: "SELECT MAX(snapshot_date) FROM source_imports WHERE source = ?", arguments: [name]),
                    tables: try sourceTables(name, db),
                    disagreements: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM source_disagreements WHERE source = ?", arguments: [name]) ?? 0))
            }
            return sources
        }
    }

    /// The cells where `source` and the primary disagree, as of its newest import.
    public func disagreements(of source: String) throws -> [SourceDisagreement] {
        try master.read { db in
            guard try db.tableExists("source_disagreements") else { return [] }
            return try Row.fetchAll(db, sql: """
                SELECT table_name, key_id, column_name, primary_value, source_value FROM source_disagreements
                WHERE source = ? ORDER BY table_name, CAST(key_id AS INTEGER), column_name
                """, arguments: [source]).map {
                SourceDisagreement(table: $0[0], key: $0[1], column: $0[2], primaryValue: $0[3], sourceValue: $0[4])
            }
        }
    }

    private func primaryTables(_ db: Database) throws -> [Table] {
        try master.declared.tables.compactMap { table in
            guard let newest = try UpstreamImport.newest(of: table, db) else { return nil }
            let lacking = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM main.\(table.upstreamTable) WHERE upstream_lacks") ?? 0
            let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM main.\(table.name)") ?? 0
            return Table(table: table.name, file: newest.fileName, columns: newest.columns, rows: rows - lacking, filled: nil)
        }
    }

    private func sourceTables(_ source: String, _ db: Database) throws -> [Table] {
        try master.declared.tables.compactMap { table in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT file_name, columns, filled FROM source_imports WHERE source = ? AND table_name = ? ORDER BY id DESC LIMIT 1
                """, arguments: [source, table.name]) else { return nil }
            // The rows it carries that the primary lacks: those its base has, held apart as lacking.
            let keyText = table.keyText(alias: "u")
            let rows = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM main.\(table.upstreamTable) u WHERE u.upstream_lacks
                AND EXISTS (SELECT 1 FROM source_values v WHERE v.source = ? AND v.table_name = ? AND v.key_id = \(keyText))
                """, arguments: [source, table.name]) ?? 0
            return Table(table: table.name, file: row[0], columns: (row[1] as String).split(separator: ",").map(String.init), rows: rows, filled: row[2])
        }
    }
}
