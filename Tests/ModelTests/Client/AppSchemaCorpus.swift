import Foundation
import GRDB
import Testing

/// The objects real apps keep in their database beside the release's tables, each of a kind that
/// a generic copy gets wrong: an external-content FTS5 index over notes whose rowids are sparse, a
/// contentless FTS5 table (its rows exist only in the index), an R-tree, a rowid table without an
/// `INTEGER PRIMARY KEY` whose rowids the app uses, a `WITHOUT ROWID` table, generated columns and
/// `AUTOINCREMENT`, an app index, an app trigger and an app column on `stations`, a view over
/// release tables, and a foreign key into `stations` (GRDB turns `foreign_keys` on for every
/// connection).
///
/// `snapshot` reads every app object's SQL and every row with its rowid (the virtual tables'
/// shadow tables included), so two snapshots are equal only when nothing of the app's moved.
enum AppSchemaCorpus {
    static let schema = """
        CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
        CREATE VIRTUAL TABLE notes_search USING fts5(body, content='notes', content_rowid='id');
        CREATE TRIGGER notes_indexed AFTER INSERT ON notes BEGIN INSERT INTO notes_search (rowid, body) VALUES (new.id, new.body); END;
        CREATE VIRTUAL TABLE tag_search USING fts5(tag, content='');
        CREATE VIRTUAL TABLE visit_areas USING rtree(id, min_lat, max_lat, min_lon, max_lon);
        CREATE TABLE photos (station_cd INTEGER, caption TEXT);
        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
        CREATE TABLE trips (id INTEGER PRIMARY KEY AUTOINCREMENT, started TEXT, ended TEXT,
            days REAL GENERATED ALWAYS AS (julianday(ended) - julianday(started)) VIRTUAL,
            label TEXT GENERATED ALWAYS AS ('trip ' || id) STORED);
        CREATE TABLE favorites (station_cd INTEGER NOT NULL REFERENCES stations (station_cd) ON DELETE CASCADE, since TEXT);
        CREATE INDEX app_stations_by_name ON stations (station_name);
        CREATE TRIGGER app_stations_kept BEFORE DELETE ON stations BEGIN SELECT RAISE(ABORT, 'the app keeps every station'); END;
        CREATE VIEW favorite_stations AS SELECT s.station_cd, s.station_name FROM favorites f JOIN stations s USING (station_cd);
        ALTER TABLE stations ADD COLUMN app_stars INTEGER NOT NULL DEFAULT 0;
        """

    /// The word three notes hold, which a search must find in all three.
    static let searchedWord = "tunnel"

    /// Creates the corpus in the database at `path` (in `journalMode`), with rows whose rowids have gaps.
    static func create(in path: String, journalMode: String = "delete") throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = \(journalMode)")
            try db.inTransaction {
                try db.execute(sql: schema)
                let stations = try Int64.fetchAll(db, sql: "SELECT station_cd FROM stations ORDER BY station_cd LIMIT 12")
                for (index, id) in [10, 20, 35, 70, 71, 300].enumerated() {
                    let body = index % 2 == 0 ? "through the \(searchedWord) at dawn \(index)" : "a quiet platform \(index)"
                    try db.execute(sql: "INSERT INTO notes (id, body) VALUES (?, ?)", arguments: [id, body])
                }
                for (rowid, tag) in [(5, "coast"), (7, "snow"), (9, "night train")] {
                    try db.execute(sql: "INSERT INTO tag_search (rowid, tag) VALUES (?, ?)", arguments: [rowid, tag])
                }
                for id in [3, 8, 13] {
                    try db.execute(sql: "INSERT INTO visit_areas VALUES (?, ?, ?, ?, ?)", arguments: [id, 35.0 + Double(id) / 10, 35.5 + Double(id) / 10, 139.0, 139.4])
                }
                for (index, station) in stations.enumerated() {
                    try db.execute(sql: "INSERT INTO photos (station_cd, caption) VALUES (?, ?)", arguments: [station, "photo \(index)"])
                }
                // The rowids the app keeps in its own records, with gaps a renumbering would close.
                try db.execute(sql: "DELETE FROM photos WHERE rowid % 3 = 0")
                try db.execute(sql: "INSERT INTO settings VALUES ('map.style', 'dark'), ('sync.last', '2026-11-01')")
                for day in 1...5 {
                    try db.execute(sql: "INSERT INTO trips (started, ended) VALUES (?, ?)", arguments: ["2026-0\(day)-01", "2026-0\(day)-0\(day + 1)"])
                }
                try db.execute(sql: "DELETE FROM trips WHERE id IN (2, 5)")
                for station in stations.prefix(4) {
                    try db.execute(sql: "INSERT INTO favorites VALUES (?, '2025-12-24')", arguments: [station])
                    try db.execute(sql: "UPDATE stations SET app_stars = 3 WHERE station_cd = ?", arguments: [station])
                }
                return .commit
            }
        }
    }

    struct Snapshot: Equatable, CustomStringConvertible {
        var objects: [String]
        var rows: [String: [String]]

        var description: String { "\(objects.count) objects, \(rows.values.map(\.count).reduce(0, +)) rows" }
    }

    /// The names of the objects the release owns (its tables and indexes, and the trust record's table).
    static func releaseNames(_ releaseDatabase: String) throws -> Set<String> {
        let queue = try DatabaseQueue(path: releaseDatabase)
        defer { try? queue.close() }
        return try queue.read { Set(try String.fetchAll($0, sql: "SELECT name FROM sqlite_master")).union(["station_client_trust"]) }
    }

    /// Every object of the app's (SQL as stored) and every row of its tables with its rowid.
    static func snapshot(_ path: String, releaseNames: Set<String>) throws -> Snapshot {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            let objects = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
                .filter { !releaseNames.contains($0["name"]) }
            var rows: [String: [String]] = [:]
            for object in objects where object["type"] as String == "table" {
                let name: String = object["name"], sql: String = object["sql"] ?? ""
                if sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") { continue }
                let select = sql.uppercased().contains("WITHOUT ROWID")
                    ? "SELECT * FROM \(name.quotedDatabaseIdentifier) ORDER BY 1"
                    : "SELECT rowid AS station_test_rowid, * FROM \(name.quotedDatabaseIdentifier) ORDER BY rowid"
                rows[name] = try Row.fetchAll(db, sql: select).map(\.description)
            }
            // The app's column on a release table: its values, by station.
            rows["stations.app_stars"] = try Row.fetchAll(db, sql: "SELECT station_cd, app_stars FROM stations WHERE app_stars != 0 ORDER BY station_cd")
                .map(\.description)
            return Snapshot(objects: objects.map(\.description), rows: rows)
        }
    }

    /// SQLite's, FTS5's and the R-tree's own checks, and a search: the problems found (none: `[]`).
    static func problems(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        var problems: [String] = []
        try queue.writeWithoutTransaction { db in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            if integrity != ["ok"] { problems.append("integrity_check: \(integrity)") }
            for (table, command) in [("notes_search", "INSERT INTO notes_search (notes_search, rank) VALUES ('integrity-check', 1)"),
                                     ("tag_search", "INSERT INTO tag_search (tag_search) VALUES ('integrity-check')")] {
                do { try db.execute(sql: command) } catch { problems.append("\(table): \(error)") }
            }
            let rtree = try String.fetchOne(db, sql: "SELECT rtreecheck('visit_areas')")
            if rtree != "ok" { problems.append("visit_areas: \(rtree ?? "nil")") }
            let found = try Int.fetchOne(db, sql: "SELECT count(*) FROM notes_search WHERE notes_search MATCH ?", arguments: [searchedWord])
            if found != 3 { problems.append("a search for '\(searchedWord)' found \(found ?? 0) of 3 notes") }
            let favorites = try Int.fetchOne(db, sql: "SELECT count(*) FROM favorite_stations")
            if favorites != 4 { problems.append("favorite_stations shows \(favorites ?? 0) of 4") }
        }
        return problems
    }
}
