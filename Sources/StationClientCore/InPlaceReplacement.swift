import Foundation
import GRDB
import StationManifest

/// The full and bundled paths' install: the release's tables are replaced inside the app's own
/// database, in one write transaction of it, and nothing else in the file is touched.
///
/// The release's tables are the library's (every table of the release database but
/// `completions`); everything else in the file is the app's: its tables, virtual tables and their
/// shadow tables, indexes, triggers and views are never copied, dropped or rebuilt, so they keep
/// every byte and rowid (an FTS5 index over the app's notes stays consistent with them). With the
/// release database attached as `station_client_release`, the transaction
///
/// 1. brings each release table to the release's schema (a table the database lacks is created
///    from the release's statement; a column a newer client schema added is added) and to the
///    release's rows: an UPSERT by the table's key writes only the rows that differ, so a row
///    keeps its rowid and an app's index, trigger or foreign key on a release table sees an
///    ordinary update; rows the release does not have are removed (the master data never removes
///    one, so this happens only to a database that holds rows of its own there);
/// 2. creates the release's indexes the database lacks (or holds in another form);
/// 3. copies `completions` across every split after the database's version, in the order
///    recorded, never over a record the user has (as the delta's `DUPLICATE` statements do);
/// 4. sets `user_version`, then runs `finish` (the app's hook and the trust record).
///
/// The transaction takes the database's write lock only once everything is downloaded and
/// checked: the app's connections keep reading throughout (in WAL mode) and write again at its
/// commit (their busy timeout waits for it). A kill at any instant leaves the old content or the
/// new: SQLite's own journal decides. The file keeps its inode, its WAL and every open connection.
struct InPlaceReplacement {
    let database: String
    let release: String
    let busyTimeout: TimeInterval

    /// The schema name under which the release database is attached.
    static let releaseSchema = "station_client_release"
    /// The one table of the release that holds the user's records, not master data.
    static let recordsTable = "completions"

    private var configuration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        return configuration
    }

    /// Replaces the release's tables in the database with `release`'s, at `version`, copying the
    /// records across `splits` (those after the database's version); `finish` runs last, in the
    /// same transaction. `progress` is told rows done of the release's rows in all.
    func install(version: Int, splits: [ReleaseSplit], onStep: (UpdateStep) throws -> Void,
                 progress: (Int, Int) -> Void, finish: (Database) throws -> Void) throws {
        let queue = try DatabaseQueue(path: database, configuration: configuration)
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ? AS \(Self.releaseSchema)", arguments: [release])
            defer { try? db.execute(sql: "DETACH DATABASE \(Self.releaseSchema)") }
            let tables = try ReleaseTable.all(db)
            let totalRows = try tables.reduce(0) { $0 + (try $1.rowCount(db)) }
            try db.inTransaction(.immediate) {
                try onStep(.replacing)
                var rowsDone = 0
                progress(0, totalRows)
                for table in tables {
                    try table.replace(db)
                    rowsDone += try table.rowCount(db)
                    progress(rowsDone, totalRows)
                    try onStep(.replacingTable)
                }
                try Self.createRecordsTable(db)
                try ReleaseTable.createIndexes(db)
                for split in splits { try db.execute(sql: split.recordsCopy, arguments: split.recordsCopyArguments) }
                try db.execute(sql: "PRAGMA main.user_version = \(version)")
                try finish(db)
                try onStep(.carriedOver)
                return .commit
            }
        }
    }

    /// A new install (or a database the app made) has no `completions` yet: it takes the release's.
    private static func createRecordsTable(_ db: Database) throws {
        guard try !db.tableExists(recordsTable, in: "main"),
              let sql = try String.fetchOne(db, sql: "SELECT sql FROM \(releaseSchema).sqlite_master WHERE type = 'table' AND name = ?",
                                            arguments: [recordsTable])
        else { return }
        try db.execute(sql: sql)
    }
}

/// One table of the release database that the library owns in the app's database.
struct ReleaseTable {
    let name: String
    /// The release's `CREATE TABLE` statement.
    let sql: String
    /// The release's columns, in order, with what an added column needs.
    let columns: [Column]
    /// The key's columns, in key order.
    let key: [String]

    struct Column {
        let name: String
        let type: String
        let defaultValue: String?
        let isNotNull: Bool

        /// The column's definition for `ALTER TABLE … ADD COLUMN`.
        var definition: String {
            var text = "\(name.quotedDatabaseIdentifier) \(type)"
            if let defaultValue { text += " DEFAULT \(defaultValue)" }
            if isNotNull && defaultValue != nil { text += " NOT NULL" }
            return text
        }
    }

    private var quoted: String { name.quotedDatabaseIdentifier }
    private var release: String { "\(InPlaceReplacement.releaseSchema).\(quoted)" }

    /// Every table of the attached release but `completions`, in the release's order.
    static func all(_ db: Database) throws -> [ReleaseTable] {
        let schema = InPlaceReplacement.releaseSchema
        return try Row.fetchAll(db, sql: """
            SELECT name, sql FROM \(schema).sqlite_master
            WHERE type = 'table' AND sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> ?
            ORDER BY rowid
            """, arguments: [InPlaceReplacement.recordsTable]).map { row in
            let name: String = row["name"]
            let info = try Row.fetchAll(db, sql: "SELECT name, type, dflt_value, \"notnull\", pk FROM pragma_table_info(?, ?) ORDER BY cid",
                                        arguments: [name, schema])
            return ReleaseTable(
                name: name, sql: row["sql"],
                columns: info.map { Column(name: $0["name"], type: $0["type"], defaultValue: $0["dflt_value"], isNotNull: $0["notnull"] as Bool) },
                key: info.filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }.map { $0["name"] })
        }
    }

    func rowCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(release)") ?? 0
    }

    /// Brings `main`'s table to the release's schema and rows.
    func replace(_ db: Database) throws {
        guard try db.tableExists(name, in: "main") else {
            try db.execute(sql: sql)
            try db.execute(sql: "INSERT INTO main.\(quoted) SELECT * FROM \(release)")
            return
        }
        let existing = try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?, 'main') ORDER BY cid", arguments: [name])
        let existingNames = Set(existing.map { $0["name"] as String })
        let existingKey = existing.filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }.map { $0["name"] as String }
        guard existingKey == key else { throw StationClientError.incompatibleTable(name: name, reason: "its key is not the release's") }
        // A newer client schema adds columns; it never removes or retypes one.
        for column in columns where !existingNames.contains(column.name) {
            try db.execute(sql: "ALTER TABLE main.\(quoted) ADD COLUMN \(column.definition)")
        }
        let names = columns.map(\.name.quotedDatabaseIdentifier)
        guard !key.isEmpty else {
            // A table without a key (the client schema's version, one row) is written whole.
            try db.execute(sql: "DELETE FROM main.\(quoted)")
            try db.execute(sql: "INSERT INTO main.\(quoted) (\(names.joined(separator: ", "))) SELECT \(names.joined(separator: ", ")) FROM \(release)")
            return
        }
        let keyNames = key.map(\.quotedDatabaseIdentifier)
        let nonKey = names.filter { !keyNames.contains($0) }
        let upsert = nonKey.isEmpty
            ? "DO NOTHING"
            : "DO UPDATE SET \(nonKey.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")) WHERE \(nonKey.map { "\($0) IS NOT excluded.\($0)" }.joined(separator: " OR "))"
        try db.execute(sql: """
            INSERT INTO main.\(quoted) (\(names.joined(separator: ", "))) SELECT \(names.joined(separator: ", ")) FROM \(release) WHERE true
            ON CONFLICT (\(keyNames.joined(separator: ", "))) \(upsert)
            """)
        // Every release row is in main now, keys unique: equal counts mean main has no other row.
        let mainRows = try Int.fetchOne(db, sql: "SELECT count(*) FROM main.\(quoted)") ?? 0
        if try mainRows != rowCount(db) {
            // A lookup by the release table's key for each row: SQLite answers a row value's
            // NOT IN over a subquery without that key's index.
            let matches = keyNames.map { "kept.\($0) = main.\(quoted).\($0)" }.joined(separator: " AND ")
            try db.execute(sql: "DELETE FROM main.\(quoted) WHERE NOT EXISTS (SELECT 1 FROM \(release) AS kept WHERE \(matches))")
        }
    }

    /// Creates in `main` every index of the release that `main` lacks or holds in another form.
    static func createIndexes(_ db: Database) throws {
        let schema = InPlaceReplacement.releaseSchema
        let indexes = try Row.fetchAll(db, sql: """
            SELECT r.name, r.sql, m.sql AS existing, m.type AS existingType FROM \(schema).sqlite_master r
            LEFT JOIN main.sqlite_master m ON m.name = r.name
            WHERE r.type = 'index' AND r.sql IS NOT NULL ORDER BY r.rowid
            """)
        for index in indexes {
            let sql: String = index["sql"]
            let existing: String? = index["existing"]
            if existing == sql { continue }
            if existing != nil {
                guard index["existingType"] as String == "index" else {
                    throw StationClientError.incompatibleTable(name: index["name"], reason: "the app has an object of that name")
                }
                try db.execute(sql: "DROP INDEX main.\((index["name"] as String).quotedDatabaseIdentifier)")
            }
            try db.execute(sql: sql)
        }
    }
}

extension ReleaseSplit {
    /// Copies the user's records of the old station to the new one, keeping any the user already
    /// has there: the statement a delta's `DUPLICATE` runs (docs/DOMAIN.md, "Splits: DUPLICATE, and what a user keeps").
    var recordsCopy: String {
        "INSERT OR IGNORE INTO main.completions (station_cd, date, memo, updated_at) SELECT ?, date, memo, updated_at FROM main.completions WHERE station_cd = ?"
    }

    var recordsCopyArguments: StatementArguments { [new, old] }
}
