import Foundation
import GRDB
import GRDBSQLite

/// The full and bundled paths' install: the new master tables replace the old inside the app's
/// own database file, which keeps its inode, its WAL and every connection the app has open on it.
///
/// 1. `prepare`: beside the database, the new content (`incoming`, the release's database)
///    receives the user's records (the release's carry-over script, run as it is published:
///    the working database as `main`, the new one attached as `incoming`), then every table,
///    row, index, trigger and view of the app's that the release does not define, then the app's
///    hook and the trust record, in one transaction. The database is only read.
/// 2. `replace`: SQLite's online backup copies the new content into the database, as one write
///    transaction of the database's own (into its WAL, or under its rollback journal): a kill
///    at any instant leaves the old content or the new, and the app's connections read the new
///    one at their next transaction. Before the first page is copied, with the database's write
///    lock held, the database must be as `prepare` read it; when another connection committed
///    meanwhile (the app wrote a record), nothing is copied and `prepare` runs again, so no write
///    is ever lost.
struct InPlaceReplacement {
    let database: String
    let incoming: String
    let busyTimeout: TimeInterval

    /// The schema name under which the working database is attached to the new content.
    private static let working = "station_client_working"

    private var configuration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        return configuration
    }

    /// What `prepare` read: the database's state then, checked again by `replace`.
    struct Prepared {
        let reader: DatabaseQueue
        let usesWAL: Bool
        let state: Int64
    }

    /// Carries the records and the app's objects into `incoming`, then runs `finish` (the hook and
    /// the trust record) there, in the same transaction as the objects' copy.
    func prepare(carryOver script: String?, finish: (Database) throws -> Void) throws -> Prepared {
        let reader = try DatabaseQueue(path: database, configuration: configuration)
        var usesWAL = false, state: Int64 = 0
        try reader.writeWithoutTransaction { db in
            usesWAL = try String.fetchOne(db, sql: "PRAGMA main.journal_mode") == "wal"
            try db.execute(sql: "ATTACH DATABASE ? AS incoming", arguments: [incoming])
            try db.inTransaction {
                state = try Self.state(db, usesWAL: usesWAL)
                // A new install (or an app that made its own tables first) has no records to carry.
                if let script, try db.tableExists("completions") { try db.execute(sql: script) }
                return .commit
            }
            try db.execute(sql: "DETACH DATABASE incoming")
        }
        let fresh = try DatabaseQueue(path: incoming, configuration: configuration)
        try fresh.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ? AS \(Self.working)", arguments: [database])
            try db.inTransaction {
                try AppObjects.copy(db, from: Self.working)
                try finish(db)
                return .commit
            }
            try db.execute(sql: "DETACH DATABASE \(Self.working)")
            // A database in WAL mode takes a backup of its own page size only.
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA main.page_size")
            let theirs = try reader.read { try Int.fetchOne($0, sql: "PRAGMA main.page_size") }
            if let theirs, pageSize != theirs {
                try db.execute(sql: "PRAGMA main.page_size = \(theirs)")
                try db.execute(sql: "VACUUM")
            }
        }
        try fresh.close()
        return Prepared(reader: reader, usesWAL: usesWAL, state: state)
    }

    /// Copies `incoming` into the database in one transaction; false, copying nothing, when the
    /// database changed since `prepared` read it.
    func replace(_ prepared: Prepared, onStep: (UpdateStep) throws -> Void, progress: (Int, Int) -> Void) throws -> Bool {
        let destination = try DatabaseQueue(path: database, configuration: configuration)
        defer { try? destination.close() }
        let source = try DatabaseQueue(path: incoming, configuration: configuration)
        defer { try? source.close() }
        return try destination.writeWithoutTransaction { target in
            try source.inDatabase { origin in
                guard let backup = sqlite3_backup_init(target.sqliteConnection, "main", origin.sqliteConnection, "main") else {
                    throw Self.error(target)
                }
                var finished = false
                // Unfinished, the backup's transaction is rolled back: the database as it was.
                defer { if !finished { sqlite3_backup_finish(backup) } }
                // Copying no page yet takes the database's write lock (waiting as the busy timeout says).
                var code = sqlite3_backup_step(backup, 0)
                guard code == SQLITE_OK || code == SQLITE_DONE else { throw Self.error(target, code: code) }
                let now = prepared.usesWAL
                    ? try prepared.reader.writeWithoutTransaction { try Self.state($0, usesWAL: true) }
                    : try Self.changeCounter(target)
                guard now == prepared.state else { return false }
                try onStep(.replacing)
                while code == SQLITE_OK {
                    code = sqlite3_backup_step(backup, 256)
                    let total = Int(sqlite3_backup_pagecount(backup))
                    progress(total - Int(sqlite3_backup_remaining(backup)), total)
                    if code == SQLITE_OK { try onStep(.replacingPages) }
                }
                finished = true
                let finish = sqlite3_backup_finish(backup)
                guard code == SQLITE_DONE else { throw Self.error(target, code: code) }
                guard finish == SQLITE_OK else { throw Self.error(target, code: finish) }
                return true
            }
        }
    }

    /// What changes whenever another connection commits to the database: `data_version` in WAL
    /// mode; in rollback-journal mode the file's change counter (bytes 24–27 of its header), which
    /// every commit advances, read because the backup's exclusive lock keeps SQL readers out.
    private static func state(_ db: Database, usesWAL: Bool) throws -> Int64 {
        if usesWAL { return try Int64.fetchOne(db, sql: "PRAGMA main.data_version") ?? 0 }
        // A read first: the shared lock it takes keeps every writer out while the counter is read.
        _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM main.sqlite_master")
        return try changeCounter(db)
    }

    /// The change counter, read through the connection's own file descriptor (SQLite's VFS):
    /// opening and closing another descriptor on the file would drop every POSIX lock this
    /// process holds on it, the backup's and the app's connections' alike.
    private static func changeCounter(_ db: Database) throws -> Int64 {
        var file: UnsafeMutablePointer<sqlite3_file>?
        let found = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_FILE_POINTER, &file)
        guard found == SQLITE_OK, let file, let read = file.pointee.pMethods?.pointee.xRead else { throw error(db, code: found) }
        var header = [UInt8](repeating: 0, count: 4)
        let code = read(file, &header, 4, 24)
        // A file shorter than its header (a new, empty database) has no counter yet: SQLITE_IOERR_SHORT_READ,
        // which Swift does not import (a macro).
        guard code == SQLITE_OK || code == SQLITE_IOERR | (2 << 8) else { throw error(db, code: code) }
        return header.reduce(0) { $0 << 8 | Int64($1) }
    }

    private static func error(_ db: Database, code: Int32? = nil) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code ?? sqlite3_errcode(db.sqliteConnection)),
                      message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }
}

/// The app's own objects of a database: every table, index, trigger and view a release does not
/// define, with the tables' rows.
enum AppObjects {
    /// Creates in `main` each object of `schema` that `main` lacks, in an order that works:
    /// tables, their rows (and AUTOINCREMENT counters), indexes, triggers (after the rows, so they
    /// do not fire on the copy), views. A virtual table is created by its statement, which makes
    /// its shadow tables, and filled through it.
    static func copy(_ db: Database, from schema: String) throws {
        let defined = Set(try String.fetchAll(db, sql: "SELECT name FROM main.sqlite_master"))
        let objects = try Row.fetchAll(db, sql: """
            SELECT type, name, sql FROM \(schema).sqlite_master
            WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid
            """).map { (type: $0["type"] as String, name: $0["name"] as String, sql: $0["sql"] as String) }
            .filter { !defined.contains($0.name) }
        let virtual = objects.filter { $0.type == "table" && $0.sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") }.map(\.name)
        let isShadow = { (name: String) in virtual.contains { name.hasPrefix($0 + "_") } }
        let tables = objects.filter { $0.type == "table" && !isShadow($0.name) }
        for table in tables { try db.execute(sql: table.sql) }
        for table in tables {
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?, ?) WHERE hidden = 0",
                                              arguments: [table.name, schema])
                .map { $0.quotedDatabaseIdentifier }.joined(separator: ", ")
            try db.execute(sql: "INSERT INTO main.\(table.name.quotedDatabaseIdentifier) (\(columns)) SELECT \(columns) FROM \(schema).\(table.name.quotedDatabaseIdentifier)")
        }
        if try !tables.isEmpty && db.tableExists("sqlite_sequence", in: schema) && db.tableExists("sqlite_sequence", in: "main") {
            let names = tables.map(\.name)
            try db.execute(sql: "DELETE FROM main.sqlite_sequence WHERE name IN (\(databaseQuestionMarks(count: names.count)))", arguments: StatementArguments(names))
            try db.execute(sql: "INSERT INTO main.sqlite_sequence SELECT * FROM \(schema).sqlite_sequence WHERE name IN (\(databaseQuestionMarks(count: names.count)))",
                           arguments: StatementArguments(names))
        }
        for kind in ["index", "trigger", "view"] {
            for object in objects where object.type == kind && !isShadow(object.name) { try db.execute(sql: object.sql) }
        }
    }
}
