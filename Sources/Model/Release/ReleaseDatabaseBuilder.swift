import Foundation
import GRDB

/// What one built client database holds.
public struct BuiltDatabase: Sendable {
    public var rows: [String: Int]
    public var contentHash: String
}

/// Builds the client database of one data version from the master database.
///
/// The client file is attached to the master's own connection as schema `client` and
/// filled inside the caller's read transaction (`MasterDatabase.readingOneState`), so
/// its rows come from the same state of the master as everything else a release reads.
/// Deterministic: rows go in key order, indexes after, then `user_version`, so building
/// the same version twice gives the same bytes.
enum ReleaseDatabaseBuilder {
    /// Fills schema `client` with the client tables of `version`; returns rows per table.
    static func fill(version: Int, newest: Int, _ db: Database) throws -> [String: Int] {
        var phases = PhaseLog()
        var rows: [String: Int] = [:]
        try ClientSchema.createTables(db, schema: "client")
        for table in MasterTable.all {
            let state = VersionedState(table: table, version: version, isNewest: version >= newest)
            let columns = table.columnNames.joined(separator: ", ")
            try db.execute(sql: """
                INSERT INTO client.\(table.name) (\(columns))
                SELECT \(columns) FROM (\(state.select())) ORDER BY \(table.keyOrder)
                """)
            rows[table.name] = db.changesCount
        }
        phases.done("client tables filled")
        for index in ClientSchema.indexes(schema: "client") { try db.execute(sql: index) }
        try db.execute(sql: "PRAGMA client.user_version = \(version)")
        phases.done("client indexes built")
        return rows
    }

    /// After the fill is committed and detached: built in key order with indexes last,
    /// the file has no free pages to reclaim; VACUUM only if that ever changes.
    static func compact(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            if try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0 > 0 { try db.execute(sql: "VACUUM") }
        }
    }
}

extension MasterDatabase {
    /// Builds the client database of any version, for `verify` and for tests.
    public func buildClientDatabase(version: Int, at path: String) throws -> BuiltDatabase {
        try? FileManager.default.removeItem(atPath: path)
        let rows = try readingOneState(attaching: path) { db in
            let newest = try Self.dataVersion(db)
            guard (0...newest).contains(version) else { throw ReleaseError.noSuchVersion(requested: version, newest: newest) }
            return try ReleaseDatabaseBuilder.fill(version: version, newest: newest, db)
        }
        try ReleaseDatabaseBuilder.compact(path)
        return BuiltDatabase(rows: rows, contentHash: try ContentHash.compute(ofFile: path))
    }
}
