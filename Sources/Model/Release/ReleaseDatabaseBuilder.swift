import Foundation
import GRDB
import StationHistory
import StationSchema
import StationSupport

/// What one built client database holds.
public struct BuiltDatabase: Sendable {
    /// Rows per client table.
    public var rows: [String: Int]
    /// Its content hash (`ContentHash`).
    public var contentHash: String
}

/// Builds the client database of one data version from the master database.
///
/// The client file is attached to the master's own connection as schema `client` and its
/// tables filled inside the caller's read transaction (`MasterDatabase.readingOneState`), so
/// its rows come from the same state of the master as everything else a release reads. The
/// indexes are built after that transaction, on the file alone. The content hash is computed
/// meanwhile on another core: from the master by a twin reader for the newest version
/// (`MasterDatabase.readingOneState(attaching:alongside:handing:)`), else from a copy of the tables.
/// Deterministic: rows go in key order, indexes after, then `user_version`, so building
/// the same version twice gives the same bytes.
///
/// For example, what `release` does for version 4 (the publisher adds the deltas, the
/// carry-over script, the gzip and the manifest, then publishes the folder atomically):
///
///     let rows = try master.readingOneState(attaching: "building/4/stations.sqlite") { db in
///         try ReleaseDatabaseBuilder.fill(version: 4, newest: 4, master.declared, db)   // ["stations": 10_990, …]
///     }
///     try ReleaseDatabaseBuilder.complete("building/4/stations.sqlite", version: 4, master.declared)
///     // indexes built, `PRAGMA user_version = 4`, `client_schema` recorded
package enum ReleaseDatabaseBuilder {
    /// Fills schema `client` with the client tables of `version` as `declared` declares them;
    /// returns rows per table.
    package static func fill(version: Int, newest: Int, _ declared: DeclaredSchema, _ db: Database) throws -> [String: Int] {
        var phases = PhaseLog()
        var rows: [String: Int] = [:]
        let clientSchema = try ClientSchema.version(atData: version, db)
        try ClientSchema.createTables(db, declared, schema: "client", clientSchema: clientSchema)
        for table in declared.tables {
            let state = VersionedState(table: table, version: version, isNewest: version >= newest)
            let columns = table.columns(clientSchema: clientSchema).map(\.name).joined(separator: ", ")
            try db.execute(sql: """
                INSERT INTO client.\(table.name) (\(columns))
                SELECT \(columns) FROM (\(state.select())) ORDER BY \(table.keyOrder)
                """)
            rows[table.name] = db.changesCount
        }
        phases.done("client tables filled")
        return rows
    }

    /// Starts the content hash of a filled client file (committed and detached) on another
    /// core. It reads a copy of the file, so that the indexes can be written meanwhile: the
    /// indexes and `user_version` change no row, so the copy's content is the finished file's.
    /// `scratch` is the copy's path, removed when the hash is done.
    package static func hashInBackground(_ path: String, _ declared: DeclaredSchema, copyingTo scratch: String) throws -> BackgroundTask<String> {
        try? FileManager.default.removeItem(atPath: scratch)
        try FileManager.default.copyItem(atPath: path, toPath: scratch)
        return BackgroundTask {
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            return try ContentHash.compute(ofFile: scratch, declared)
        }
    }

    /// Builds the indexes of a filled client file and stamps its version. Built in key order
    /// with indexes last, the file has no free pages to reclaim; VACUUM only if that ever changes.
    ///
    /// `besideOtherWork`: the other cores are busy (a release deflates the tables' blocks and
    /// hashes meanwhile), so SQLite sorts on this thread alone: its helper threads would take
    /// turns with that work and add merging of their own, the same index bytes for more CPU.
    package static func complete(_ path: String, version: Int, _ declared: DeclaredSchema, besideOtherWork: Bool = false) throws {
        var phases = PhaseLog()
        let queue = try DatabaseQueue(path: path, configuration: MasterDatabase.configuration(label: "client"))
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            // A fresh file built once and renamed into place needs no rollback journal.
            try db.execute(sql: "PRAGMA journal_mode = MEMORY")
            if besideOtherWork { try db.execute(sql: "PRAGMA threads = 0") }
            try db.inTransaction {
                for index in ClientSchema.indexes(declared, clientSchema: try ClientSchema.recordedVersion(db)) { try db.execute(sql: index) }
                try db.execute(sql: "PRAGMA user_version = \(version)")
                return .commit
            }
            phases.done("client indexes built")
            if try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0 > 0 { try db.execute(sql: "VACUUM") }
        }
    }
}

extension Publisher {
    /// Builds the client database of any version, for `verify` and for tests.
    public func buildClientDatabase(version: Int, at path: String) throws -> BuiltDatabase {
        try? FileManager.default.removeItem(atPath: path)
        let rows = try master.readingOneState(attaching: path) { db in
            let newest = try MasterDatabase.dataVersion(db)
            try NoSuchVersion.require(version, newest: newest, lowest: 0)
            return try ReleaseDatabaseBuilder.fill(version: version, newest: newest, master.declared, db)
        }
        try ReleaseDatabaseBuilder.complete(path, version: version, master.declared)
        return BuiltDatabase(rows: rows, contentHash: try ContentHash.compute(ofFile: path, master.declared))
    }
}
