import Foundation
import GRDB

/// What one built client database holds.
public struct BuiltDatabase: Sendable {
    public var rows: [String: Int]
    public var contentHash: String
}

/// Builds the client database of one data version from the master database.
///
/// Deterministic: rows go in key order, indexes after, then `user_version` and a VACUUM,
/// so building the same version twice gives the same bytes.
struct ReleaseDatabaseBuilder {
    let masterPath: String

    /// - Parameter hashing: compute the content hash now (a caller may compute it later,
    ///   with `ContentHash.compute(ofFile:)`, to overlap it with other work).
    func build(version: Int, newest: Int, at path: String, hashing: Bool = true) throws -> BuiltDatabase {
        try? FileManager.default.removeItem(atPath: path)
        var phases = PhaseLog()
        var configuration = Configuration()
        configuration.busyMode = .timeout(MasterDatabase.busyTimeout)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let built = try queue.writeWithoutTransaction { db -> BuiltDatabase in
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: "ATTACH DATABASE ? AS master", arguments: [masterPath])
            var rows: [String: Int] = [:]
            try db.inTransaction {
                try ClientSchema.createTables(db)
                for table in MasterTable.all {
                    let state = VersionedState(table: table, version: version, schema: "master", isNewest: version >= newest)
                    let columns = table.columnNames.joined(separator: ", ")
                    try db.execute(sql: """
                        INSERT INTO main.\(table.name) (\(columns))
                        SELECT \(columns) FROM (\(state.select())) ORDER BY \(table.keyOrder)
                        """)
                    rows[table.name] = db.changesCount
                }
                phases.done("client tables filled")
                for index in ClientSchema.indexes { try db.execute(sql: index) }
                phases.done("client indexes built")
                return .commit
            }
            try db.execute(sql: "DETACH DATABASE master")
            try db.execute(sql: "PRAGMA user_version = \(version)")
            // Built in key order with indexes last, the file has no free pages to reclaim;
            // VACUUM only if that ever changes.
            if try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0 > 0 { try db.execute(sql: "VACUUM") }
            phases.done("user_version set")
            let hash = hashing ? try ContentHash.compute(db) : ""
            if hashing { phases.done("content hash") }
            return BuiltDatabase(rows: rows, contentHash: hash)
        }
        try queue.close()
        return built
    }
}
