import Crypto
import Foundation
import GRDB
import StationManifest
import StationRelease
import StationSchema
import StationSQLite

/// A client's database as the kit prepares and reads it: a copy of an older release's database
/// with users' records (`SyntheticCompletions`: on a sample of stations, on every station split
/// later, some already at a split's new station) and an app's own objects beside the release's.
struct ClientDatabase {
    let path: String
    /// The version it starts at; 0 for a new install (no file).
    let version: Int
    let recordsBefore: [Int64: SyntheticCompletions.Record]
    let splits: [StationSplit]

    /// A column of the app's on a release table: not the release's content (a client that hashes
    /// it refuses every delta), and not compared with the release's tables.
    static let appColumn = (table: "stations", name: "app_stars")

    /// The app's own objects: a table with AUTOINCREMENT, its index, a trigger logging into a
    /// second table, a view, a full-text index over the first table (its rowids are the visits'
    /// ids: renumbering them corrupts it), and `appColumn`.
    static let appSchema = """
        CREATE TABLE app_visits (id INTEGER PRIMARY KEY AUTOINCREMENT, station_cd INTEGER NOT NULL, note TEXT);
        CREATE INDEX app_visits_by_station ON app_visits (station_cd);
        CREATE TABLE app_visit_log (visit_id INTEGER NOT NULL, what TEXT NOT NULL);
        CREATE TRIGGER app_visits_logged AFTER INSERT ON app_visits BEGIN INSERT INTO app_visit_log VALUES (new.id, 'added'); END;
        CREATE VIEW app_visited_stations AS SELECT DISTINCT station_cd FROM app_visits;
        CREATE VIRTUAL TABLE app_notes USING fts5(note, content='app_visits', content_rowid='id');
        CREATE VIRTUAL TABLE app_places USING rtree(id, min_lat, max_lat, min_lon, max_lon);
        CREATE TABLE app_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE app_visit_photos (id INTEGER PRIMARY KEY, visit_id INTEGER NOT NULL REFERENCES app_visits (id) ON DELETE CASCADE, file TEXT NOT NULL);
        ALTER TABLE \(appColumn.table) ADD COLUMN \(appColumn.name) INTEGER NOT NULL DEFAULT 0;
        UPDATE \(appColumn.table) SET \(appColumn.name) = 1 + station_cd % 5 WHERE station_cd % 3 = 0;
        """

    /// A copy of `releases`' version `start` at `path`, with records and the app's objects.
    static func prepare(_ start: ConformanceScenario.Start, releases: ConformanceReleases, at path: String) throws -> ClientDatabase {
        guard case .version(let version) = start else {
            return ClientDatabase(path: path, version: 0, recordsBefore: [:], splits: releases.splits)
        }
        try FileManager.default.copyItem(atPath: releases.database(version), toPath: path)
        let later = releases.splits.filter { $0.version > version }
        let records = try SyntheticCompletions.add(to: path, splits: later)
        let queue = try DatabaseQueue(path: path, configuration: SQLiteDefences.configuration())
        try queue.write { db in
            try db.execute(sql: appSchema)
            for row in 0..<40 {
                try db.execute(sql: "INSERT INTO app_visits (station_cd, note) VALUES (?, ?)", arguments: [row * 7, "visit \(row): it's 'quoted'\n駅"])
            }
            try db.execute(sql: "DELETE FROM app_visits WHERE id % 5 = 0")
            try db.execute(sql: "INSERT INTO app_notes (app_notes) VALUES ('rebuild')")
            // A spatial index with gaps in its ids, as an app's deletions leave them: a copy that
            // renumbers them is seen in its shadow tables.
            for id in stride(from: 3, to: 120, by: 3) {
                let (latitude, longitude) = (35.0 + Double(id) / 100, 139.0 + Double(id) / 100)
                try db.execute(sql: "INSERT INTO app_places VALUES (?, ?, ?, ?, ?)", arguments: [id, latitude, latitude + 0.01, longitude, longitude + 0.01])
            }
            try db.execute(sql: "INSERT INTO app_settings VALUES ('theme', 'dark'), ('last_sync', '2026-11-29')")
            try db.execute(sql: "INSERT INTO app_visit_photos (visit_id, file) SELECT id, 'photo-' || id || '.jpg' FROM app_visits WHERE id % 3 = 0")
        }
        try queue.close()
        return ClientDatabase(path: path, version: version, recordsBefore: records, splits: releases.splits)
    }

    /// What must differ from `expectation` after a run: nothing when the list is empty.
    func problems(reaching version: Int, releases: ConformanceReleases, appBefore: Snapshot?) throws -> [String] {
        guard FileManager.default.fileExists(atPath: path) else { return ["the database \(path) does not exist"] }
        let queue = try DatabaseQueue(path: path, configuration: Self.readWrite)
        defer { try? queue.close() }
        let release = try DatabaseQueue(path: releases.database(version), configuration: Self.readOnly)
        defer { try? release.close() }
        var problems: [String] = []
        let found = try queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
        if found != version { problems.append("the database is at version \(found), not \(version)") }
        let tables = MasterTable.all.map(\.name) + [ClientSchema.schemaVersionTable]
        let expected = try release.read { db in try tables.map { try Self.tableDigest(db, $0) } }
        // The release's columns only: the app's column on a release table is the app's.
        let releaseColumns = try release.read { db in try tables.map { try db.tableExists($0) ? try db.columns(in: $0).map(\.name) : [] } }
        let actual = try queue.read { db in try zip(tables, releaseColumns).map { try Self.tableDigest(db, $0, columns: $1) } }
        for (index, table) in tables.enumerated() where expected[index] != actual[index] {
            problems.append("table \(table) differs from release \(version)'s client database (\(actual[index].summary), expected \(expected[index].summary))")
        }
        let splitsTaken = splits.filter { $0.version > self.version && $0.version <= version }
        let records = try queue.read { try SyntheticCompletions.read($0) }
        problems += Self.recordProblems(records, before: recordsBefore, splits: splitsTaken)
        if let appBefore {
            let appNow = try Self.appSnapshot(queue)
            if appNow != appBefore { problems.append("the app's own tables changed: \(appBefore.difference(appNow))") }
        }
        return problems
    }

    /// Each record kept as it was; each split's old record copied to its new station where the
    /// user had none (its date and memo; its updated time kept or set to the copy's).
    static func recordProblems(_ records: [Int64: SyntheticCompletions.Record], before: [Int64: SyntheticCompletions.Record],
                               splits: [StationSplit]) -> [String] {
        let expected = SyntheticCompletions.expected(before, splits: splits)
        var problems: [String] = []
        for (station, record) in expected.sorted(by: { $0.key < $1.key }) {
            guard let found = records[station] else {
                problems.append("the user's record of station \(station) \(before[station] == nil ? "that a split should have copied" : "") is missing")
                continue
            }
            let copied = before[station] == nil
            if found.date != record.date || found.memo != record.memo || (!copied && found.updatedAt != record.updatedAt) {
                problems.append("the user's record of station \(station) is \(found), expected \(record)\(copied ? " (copied by a split)" : "")")
            }
        }
        for station in Set(records.keys).subtracting(expected.keys).sorted() {
            problems.append("a record appeared for station \(station), which no split copies to")
        }
        return Array(problems.prefix(8)) + (problems.count > 8 ? ["… and \(problems.count - 8) more record problems"] : [])
    }

    static let readOnly: Configuration = {
        var configuration = SQLiteDefences.configuration()
        configuration.readonly = true
        return configuration
    }()

    /// The client's file, read as the app's next launch would open it (a hot journal rolled
    /// back); a client still ending gets a few seconds to let go.
    static let readWrite: Configuration = {
        var configuration = SQLiteDefences.configuration()
        configuration.busyMode = .timeout(10)
        return configuration
    }()

    /// A table's columns and rows, digested; `missing` when there is no such table.
    struct TableDigest: Equatable {
        var columns: [String]
        var rows: Int
        var sha256: String
        var summary: String { columns.isEmpty ? "missing" : "\(rows) rows, columns \(columns.joined(separator: ", "))" }
    }

    /// The digest over `only` of the table's columns, in that order (those it has), or over all.
    static func tableDigest(_ db: Database, _ table: String, columns only: [String]? = nil) throws -> TableDigest {
        guard try db.tableExists(table) else { return TableDigest(columns: [], rows: 0, sha256: "") }
        let all = try db.columns(in: table)
        let chosen = only.map { names in names.compactMap { name in all.first { $0.name == name } } } ?? all
        guard !chosen.isEmpty else { return TableDigest(columns: [], rows: 0, sha256: "") }
        let columns = chosen.map { "\($0.name) \($0.type)" }
        let order = (1...columns.count).map(String.init).joined(separator: ", ")
        var hash = SHA256(), count = 0
        let selected = chosen.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
        let rows = try Row.fetchCursor(db, sql: "SELECT \(selected) FROM \(table.quotedDatabaseIdentifier) ORDER BY \(order)")
        while let row = try rows.next() {
            count += 1
            for value in row.databaseValues { hash.update(data: Data(Self.canonical(value).utf8)) }
            hash.update(data: Data([0x1e]))
        }
        return TableDigest(columns: columns, rows: count, sha256: hash.finalize().map { String(format: "%02x", $0) }.joined())
    }

    /// A value with its storage class, so that 1, 1.0 and '1' differ.
    static func canonical(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "n\u{1f}"
        case .int64(let number): return "i\(number)\u{1f}"
        case .double(let number): return "r\(number.bitPattern)\u{1f}"
        case .string(let text): return "t\(text.utf8.count):\(text)\u{1f}"
        case .blob(let data): return "b\(data.base64EncodedString())\u{1f}"
        }
    }

    /// Every object of the file (its SQL) and every table's digest, with the version: what a
    /// refusal must leave as it was.
    struct Snapshot: Equatable {
        var version: Int
        var objects: [String]
        var tables: [String: TableDigest]

        /// The objects named in `names` alone (a client's own bookkeeping tables set aside).
        func restricted(to names: Set<String>) -> Snapshot {
            Snapshot(version: version, objects: objects.filter { names.contains(Self.name(of: $0)) },
                     tables: tables.filter { names.contains($0.key) })
        }

        /// The name in an object's line (`table stations: CREATE …`).
        static func name(of object: String) -> String {
            String(object.split(separator: ":", maxSplits: 1)[0].split(separator: " ", maxSplits: 1).last ?? "")
        }

        var names: Set<String> { Set(objects.map(Self.name(of:))) }

        func difference(_ other: Snapshot) -> String {
            var parts: [String] = []
            if version != other.version { parts.append("version \(version) became \(other.version)") }
            let gone = Set(objects).subtracting(other.objects), added = Set(other.objects).subtracting(objects)
            if !gone.isEmpty { parts.append("gone: \(gone.sorted().map { String($0.prefix(80)) }.joined(separator: "; "))") }
            if !added.isEmpty { parts.append("added: \(added.sorted().map { String($0.prefix(80)) }.joined(separator: "; "))") }
            for (table, digest) in tables.sorted(by: { $0.key < $1.key }) where other.tables[table] != digest {
                parts.append("\(table): \(digest.summary) became \(other.tables[table]?.summary ?? "missing")")
            }
            for table in Set(other.tables.keys).subtracting(tables.keys).sorted() { parts.append("table \(table) added") }
            return parts.isEmpty ? "nothing" : parts.prefix(6).joined(separator: "; ")
        }
    }

    /// The names of the objects the kit owns or made: the releases' (at the start and the newest)
    /// and the app's. A client's own bookkeeping (what it accepted last) is not among them.
    func kitObjectNames(releases: ConformanceReleases) throws -> Set<String> {
        var names = Set<String>()
        for file in [releases.database(ConformanceScenario.newest)] + (version > 0 ? [releases.database(version)] : []) {
            let queue = try DatabaseQueue(path: file, configuration: Self.readOnly)
            defer { try? queue.close() }
            names.formUnion(try queue.read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master") })
        }
        return names.union(try snapshot()?.names.filter { $0.hasPrefix("app_") } ?? [])
    }

    /// The whole file: nil when there is none.
    func snapshot() throws -> Snapshot? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let queue = try DatabaseQueue(path: path, configuration: Self.readWrite)
        defer { try? queue.close() }
        return try queue.read { db in try Self.snapshot(db, where: "1") }
    }

    /// The app's objects and rows, and whether its full-text index is whole; nil without a file.
    func appSnapshot() throws -> Snapshot? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let queue = try DatabaseQueue(path: path, configuration: Self.readWrite)
        defer { try? queue.close() }
        return try Self.appSnapshot(queue)
    }

    static func appSnapshot(_ queue: DatabaseQueue) throws -> Snapshot {
        try queue.inDatabase { db in
            var snapshot = try snapshot(db, where: "name LIKE 'app\\_%' ESCAPE '\\' OR tbl_name LIKE 'app\\_%' ESCAPE '\\'")
            snapshot.version = 0
            // The full-text index agrees with its content table (FTS5's own check, a command
            // written as an insert: rolled back).
            try db.execute(sql: "SAVEPOINT fts_check")
            do {
                try db.execute(sql: "INSERT INTO app_notes (app_notes, rank) VALUES ('integrity-check', 1)")
            } catch {
                snapshot.objects.append("app_notes fails its integrity check: \(error)")
            }
            try db.execute(sql: "ROLLBACK TO fts_check; RELEASE fts_check")
            // The R-tree agrees with itself (its shadow tables are digested with the others), and
            // no photo names a visit that is gone; a table that is gone is in the objects' list already.
            if try db.tableExists("app_places") {
                let rtree = try String.fetchOne(db, sql: "SELECT rtreecheck('app_places')") ?? "no answer"
                if rtree != "ok" { snapshot.objects.append("app_places fails its integrity check: \(rtree)") }
            }
            if try db.tableExists("app_visit_photos") {
                let orphans = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pragma_foreign_key_check('app_visit_photos')") ?? 0
                if orphans > 0 { snapshot.objects.append("app_visit_photos: \(orphans) rows name a visit that is gone") }
            }
            return snapshot
        }
    }

    private static func snapshot(_ db: Database, where condition: String) throws -> Snapshot {
        let objects = try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master WHERE \(condition) ORDER BY type, name")
        var tables: [String: TableDigest] = [:]
        for object in objects where (object["type"] as String) == "table" && !((object["sql"] as String?) ?? "").uppercased().hasPrefix("CREATE VIRTUAL") {
            let name: String = object["name"]
            tables[name] = try tableDigest(db, name)
        }
        return Snapshot(version: try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0,
                        objects: objects.map { "\($0["type"] as String) \($0["name"] as String): \(($0["sql"] as String?) ?? "")" },
                        tables: tables)
    }
}
