import Foundation
import GRDB

/// How a master database is told apart from every other SQLite file: SQLite's
/// `PRAGMA application_id` holds `applicationID`, and `station_admin_meta` holds the
/// random lineage id `init` gave it. A release folder records the lineage, so the
/// releases of two masters are never mixed.
///
/// Masters made before the stamp existed are recognised by their migration ids
/// (`grdb_migrations` holds `createMasterTables`) and stamped on their next write.
package enum MasterStamp {
    /// "STAD" in ASCII.
    package static let applicationID: Int32 = 0x5354_4144

    package enum Recognition: Equatable {
        /// Ours; `isUpToDate` is false when migrations (the stamp among them) are pending.
        case master(isUpToDate: Bool)
        case foreign
    }

    /// SQLite's own test for a database file: the 16-byte header string. An empty file,
    /// which SQLite would happily turn into a database, is not one.
    package static func hasSQLiteHeader(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        return header == Data("SQLite format 3\u{0}".utf8)
    }

    package static func recognise(_ db: Database, _ declared: DeclaredSchema) throws -> Recognition {
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        if applicationID == Self.applicationID {
            return .master(isUpToDate: try MasterSchema.migrator(declared).hasCompletedMigrations(db))
        }
        guard applicationID == 0, try db.tableExists("grdb_migrations"), try db.tableExists("updates") else { return .foreign }
        let migrations = try Set(String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
        return migrations.contains("createMasterTables") ? .master(isUpToDate: false) : .foreign
    }

    package static func lineage(_ db: Database) throws -> String? {
        guard try db.tableExists("station_admin_meta") else { return nil }
        return try String.fetchOne(db, sql: "SELECT value FROM station_admin_meta WHERE key = 'lineage'")
    }

    /// The migration that stamps a master (frozen: see `MasterSchema`).
    package static func stamp(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE station_admin_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
            INSERT INTO station_admin_meta (key, value) VALUES ('lineage', ?);
            PRAGMA application_id = \(applicationID);
            """, arguments: [UUID().uuidString.lowercased()])
    }
}
