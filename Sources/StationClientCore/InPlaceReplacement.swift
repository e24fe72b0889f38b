import Foundation
import GRDB
import StationManifest
import StationSQLite

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
/// 4. hashes the release tables as installed (`ReleaseContentHash`) and rolls back unless the
///    hash is the signed `content_hash`;
/// 5. sets `user_version`, then runs `finish` (the app's hook and the trust record).
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
    static let recordsTable = UserRecords.table

    private var configuration: Configuration {
        var configuration = SQLiteDefences.configuration()
        configuration.busyMode = .timeout(busyTimeout)
        return configuration
    }

    /// Replaces the release's tables in the database with `release`'s, at `version`, copying the
    /// records across `splits` (those after the database's version); `finish` runs last, in the
    /// same transaction. `progress` is told rows done of the release's rows in all.
    func install(version: Int, contentHash: String, splits: [ReleaseSplit], onStep: (UpdateStep) throws -> Void,
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
                // The tables as installed, whatever file the path named by then: the signed content or nothing.
                let installed = try ReleaseContentHash.compute(db, columnsFrom: Self.releaseSchema)
                guard installed == contentHash else { throw StationClientError.contentDiffers(version: version, expected: contentHash, actual: installed) }
                try db.execute(sql: "PRAGMA main.user_version = \(version)")
                try finish(db)
                try onStep(.carriedOver)
                return .commit
            }
        }
    }

    /// A new install (or a database the app made) has no `completions` yet: it takes the release's
    /// columns and key (`ReleaseTable.createStatement`).
    private static func createRecordsTable(_ db: Database) throws {
        guard try !db.tableExists(recordsTable, in: "main"), try db.tableExists(recordsTable, in: releaseSchema) else { return }
        try db.execute(sql: try ReleaseTable.read(recordsTable, db).createStatement)
    }
}

/// One table of the release database that the library owns in the app's database.
///
/// Its statements are made here from the columns and key SQLite parsed from the release file
/// (`pragma_table_info`), never taken from the file's `sqlite_master` text: that text is
/// whatever the file's maker wrote there (`PRAGMA writable_schema` rewrites it at will), and a
/// statement read from it and run would be SQL the file brought.
struct ReleaseTable {
    let name: String
    /// The release's columns, in order, with what an added column needs.
    let columns: [Column]
    /// The key's columns, in key order.
    let key: [String]
    /// A table of a composite key is stored by it (`WITHOUT ROWID`), as the release makes it.
    let withoutRowid: Bool

    struct Column {
        let name: String
        let type: String
        let defaultValue: String?
        let isNotNull: Bool

        /// A column as the release file declares it, refused unless its type is a type name and
        /// its default a literal (a default is an expression SQLite would evaluate in the app's file).
        init(table: String, name: String, type: String, defaultValue: String?, isNotNull: Bool) throws {
            guard type.range(of: #"^[A-Za-z][A-Za-z0-9 ]*(\([0-9]+(, ?[0-9]+)?\))?$|^$"#, options: .regularExpression) != nil else {
                throw StationClientError.incompatibleTable(name: table, reason: "its column \(name) has the type \(type), not a type name")
            }
            if let defaultValue, defaultValue.range(of: #"^(NULL|[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|'([^']|'')*')$"#, options: .regularExpression) == nil {
                throw StationClientError.incompatibleTable(name: table, reason: "its column \(name) has the default \(defaultValue), not a literal")
            }
            self.name = name
            self.type = type
            self.defaultValue = defaultValue
            self.isNotNull = isNotNull
        }

        /// The column's definition in `CREATE TABLE`.
        var createDefinition: String {
            var text = "\(name.quotedDatabaseIdentifier) \(type)"
            if isNotNull { text += " NOT NULL" }
            if let defaultValue { text += " DEFAULT \(defaultValue)" }
            return text
        }

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

    /// The table's `CREATE TABLE` in `main`, from its parsed columns and key. A single INTEGER
    /// key stays the rowid's alias (`PRIMARY KEY (x)` on an `INTEGER` column is one).
    var createStatement: String {
        let key = self.key.isEmpty ? "" : ", PRIMARY KEY (\(self.key.map(\.quotedDatabaseIdentifier).joined(separator: ", ")))"
        return "CREATE TABLE main.\(quoted) (\(columns.map(\.createDefinition).joined(separator: ", "))\(key))\(withoutRowid ? " WITHOUT ROWID" : "")"
    }

    /// Every table of the attached release but `completions`, in the release's order.
    static func all(_ db: Database) throws -> [ReleaseTable] {
        try names(db).filter { $0 != InPlaceReplacement.recordsTable }.map { try read($0, db) }
    }

    /// The release's tables' names, in its order.
    private static func names(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: """
            SELECT name FROM \(InPlaceReplacement.releaseSchema).sqlite_master
            WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY rowid
            """)
    }

    /// The release's table `name`, as SQLite parsed it; nil when the release has none.
    static func read(_ name: String, _ db: Database) throws -> ReleaseTable {
        let schema = InPlaceReplacement.releaseSchema
        let info = try Row.fetchAll(db, sql: "SELECT name, type, dflt_value, \"notnull\", pk FROM pragma_table_info(?, ?) ORDER BY cid",
                                    arguments: [name, schema])
        // A table stored without rowids has none to select: SQLite refuses the statement.
        let withoutRowid = (try? db.makeStatement(sql: "SELECT rowid FROM \(schema).\(name.quotedDatabaseIdentifier) LIMIT 0")) == nil
        return ReleaseTable(
            name: name,
            columns: try info.map { try Column(table: name, name: $0["name"], type: $0["type"], defaultValue: $0["dflt_value"], isNotNull: $0["notnull"] as Bool) },
            key: info.filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }.map { $0["name"] },
            withoutRowid: withoutRowid)
    }

    func rowCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(release)") ?? 0
    }

    /// Brings `main`'s table to the release's schema and rows.
    func replace(_ db: Database) throws {
        let names = columns.map(\.name.quotedDatabaseIdentifier)
        guard try db.tableExists(name, in: "main") else {
            try db.execute(sql: createStatement)
            try db.execute(sql: "INSERT INTO main.\(quoted) (\(names.joined(separator: ", "))) SELECT \(names.joined(separator: ", ")) FROM \(release)")
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

    /// Creates in `main` every index of the release that `main` lacks or holds in another form,
    /// each made from the columns SQLite parsed (`ReleaseIndexShape`), never from the file's text.
    static func createIndexes(_ db: Database) throws {
        let schema = InPlaceReplacement.releaseSchema
        for table in try names(db) {
            for index in try ReleaseIndexShape.all(on: table, in: schema, db) {
                let existingType = try String.fetchOne(db, sql: "SELECT type FROM main.sqlite_master WHERE name = ?", arguments: [index.name])
                if let existingType {
                    guard existingType == "index" else {
                        throw StationClientError.incompatibleTable(name: index.name, reason: "the app has an object of that name")
                    }
                    if try ReleaseIndexShape.read(index.name, on: table, in: "main", db) == index { continue }
                    try db.execute(sql: "DROP INDEX main.\(index.name.quotedDatabaseIdentifier)")
                }
                try db.execute(sql: index.createStatement)
            }
        }
    }
}

/// An index of the release as SQLite parsed it: its table, whether unique, its columns in order
/// with their sort order. An index over an expression, or a partial one, is refused: the release
/// makes none, and its text is SQL a file would bring.
struct ReleaseIndexShape: Equatable {
    let name: String
    let table: String
    let isUnique: Bool
    let columns: [(name: String, descending: Bool)]

    static func == (lhs: ReleaseIndexShape, rhs: ReleaseIndexShape) -> Bool {
        lhs.name == rhs.name && lhs.table == rhs.table && lhs.isUnique == rhs.isUnique
            && lhs.columns.map(\.name) == rhs.columns.map(\.name) && lhs.columns.map(\.descending) == rhs.columns.map(\.descending)
    }

    var createStatement: String {
        let columns = self.columns.map { $0.name.quotedDatabaseIdentifier + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
        return "CREATE \(isUnique ? "UNIQUE " : "")INDEX main.\(name.quotedDatabaseIdentifier) ON \(table.quotedDatabaseIdentifier) (\(columns))"
    }

    /// The indexes made by `CREATE INDEX` on `table` in `schema`, in SQLite's order.
    static func all(on table: String, in schema: String, _ db: Database) throws -> [ReleaseIndexShape] {
        try Row.fetchAll(db, sql: "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?, ?) WHERE origin = 'c' ORDER BY name",
                         arguments: [table, schema]).map { row in
            let name: String = row["name"]
            guard (row["partial"] as Int) == 0 else {
                throw StationClientError.incompatibleTable(name: name, reason: "a partial index, which no release makes")
            }
            return try shape(name, on: table, unique: row["unique"], in: schema, db)
        }
    }

    /// The index `name` on `table` in `schema`, nil when it is not an index made by `CREATE INDEX` there.
    static func read(_ name: String, on table: String, in schema: String, _ db: Database) throws -> ReleaseIndexShape? {
        guard let row = try Row.fetchOne(db, sql: "SELECT \"unique\", partial FROM pragma_index_list(?, ?) WHERE name = ? AND origin = 'c'",
                                         arguments: [table, schema, name]), (row["partial"] as Int) == 0 else { return nil }
        return try? shape(name, on: table, unique: row["unique"], in: schema, db)
    }

    private static func shape(_ name: String, on table: String, unique: Bool, in schema: String, _ db: Database) throws -> ReleaseIndexShape {
        let columns = try Row.fetchAll(db, sql: "SELECT cid, name, \"desc\" FROM pragma_index_xinfo(?, ?) WHERE key = 1 ORDER BY seqno",
                                       arguments: [name, schema]).map { row -> (name: String, descending: Bool) in
            guard (row["cid"] as Int) >= 0, let column = row["name"] as String? else {
                throw StationClientError.incompatibleTable(name: name, reason: "an index over an expression, which no release makes")
            }
            return (column, row["desc"] as Bool)
        }
        return ReleaseIndexShape(name: name, table: table, isUnique: unique, columns: columns)
    }
}

extension ReleaseSplit {
    /// Copies the user's records of the old station to the new one, keeping any the user already
    /// has there: the statement a delta's `DUPLICATE` runs (docs/DOMAIN.md, "Splits: DUPLICATE, and what a user keeps").
    var recordsCopy: String {
        UserRecords.splitCopy(.bound, into: "main", from: "main")
    }

    var recordsCopyArguments: StatementArguments { [new, old] }
}
