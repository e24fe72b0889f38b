import GRDB
import GRDBSQLite
import StationHistory
import StationSchema
import StationSupport

/// The rows whose findings the newest version can have changed, held in temp tables that the
/// rules of `DataChecker` then read instead of every row: a 1 % import at a million stations
/// re-checks about a fifth of them, and every other finding is the version before's, as recorded.
///
/// A rule's finding on a row depends on that row and on a few neighbours; a row is in scope when
/// the version changed it or one of those neighbours:
/// - a station: its line (`open-under-closed`) and every station of its line, before and after
///   the version (`duplicate-name-on-line`): the stations in scope are those of the lines in
///   scope, and the rules read them by line;
/// - a line: its company (`open-under-closed`) and its stations, before and after (`line-without-stations`);
/// - a connection: its line and its two stations.
/// `station-moved-far` is about the version's own changes: it is always found afresh, and so is
/// `source-disagrees`, read from the few cells the sources' last imports recorded. So is
/// `group-dangling`, on fewer rows: a station's group can only come to dangle if the station
/// changed (stations are closed, never removed), and only one that dangled can become whole (an
/// added station names it), so the changed stations and those the version before found are
/// checked (`groupStations`), not the 191,545 of the lines in scope.
///
/// A rule that reads a station's or a line's row alone (`rowLocal`) finds on a row what it
/// found before unless the version changed that row: it reads only the changed rows, and only
/// their findings are replaced. A 1 % import at a million stations changes 11,046 stations, in a
/// scope of about 192,000 (every station of the 11,209 lines they are on).
///
/// `IncrementalCheckTests` holds this to a full check over random histories.
package struct CheckScope {
    /// The stations whose `group-dangling` finding can have changed.
    package static let groupStations = "temp.check_scope_group_stations"
    package static let lines = "temp.check_scope_lines"
    package static let companies = "temp.check_scope_companies"
    package static let connections = "temp.check_scope_connections"
    private static let changedStations = "temp.check_changed_stations"
    private static let changedLines = "temp.check_changed_lines"

    /// The rules whose finding on a station or a line depends on that row alone.
    package static let rowLocal: [CheckRule] = [.datesOutOfOrder, .coordinatesOutsideJapan, .closedWithoutDate, .kanaNotKatakana, .valueOutsideDomain]

    /// A connection's key.
    package struct ConnectionKey: Sendable, Hashable {
        package let line: Int64, station1: Int64, station2: Int64
    }

    /// The connections `db` reads that touch one of `stations`: one scan of the connections, each
    /// end looked up in memory. No index reads connections by station.
    package static func connections(touching stations: Set<Int64>, _ db: Database) throws -> [ConnectionKey] {
        var found: [ConnectionKey] = []
        guard !stations.isEmpty else { return found }
        let statement = try db.makeStatement(sql: "SELECT line_cd, station_cd1, station_cd2 FROM main.connections")
        try StatementBinding.forEachRow(statement, db) { row in
            let (first, second) = (sqlite3_column_int64(row, 1), sqlite3_column_int64(row, 2))
            if stations.contains(first) || stations.contains(second) {
                found.append(ConnectionKey(line: sqlite3_column_int64(row, 0), station1: first, station2: second))
            }
        }
        return found
    }

    /// Fills the scope of `version`, the newest, inside its write transaction (its log rows and
    /// history rows written), with the version before's findings still recorded.
    ///
    /// `touchingBefore`: the connections that touched a station the version changed before the
    /// version was written (`connections(touching:)` on a connection reading the state before, as
    /// an import's second connection does while the version is written). With the connections
    /// the version changed, which are in scope anyway, they are the connections touching a changed
    /// station now: the scan of every connection is then not made here.
    ///
    /// Joins name their order (CROSS JOIN): without statistics SQLite read the million stations
    /// and probed the few changed keys, instead of the other way round.
    package static func build(_ db: Database, version: Int, touchingBefore: [ConnectionKey]? = nil) throws -> CheckScope {
        try drop(db)
        try db.execute(sql: """
            CREATE TEMP TABLE check_changed_stations (station_cd INTEGER PRIMARY KEY);
            CREATE TEMP TABLE check_changed_lines (line_cd INTEGER PRIMARY KEY);
            CREATE TEMP TABLE check_scope_group_stations (station_cd INTEGER PRIMARY KEY);
            CREATE TEMP TABLE check_scope_lines (line_cd INTEGER PRIMARY KEY);
            CREATE TEMP TABLE check_scope_companies (company_cd INTEGER PRIMARY KEY);
            CREATE TEMP TABLE check_scope_connections (
                line_cd INTEGER, station_cd1 INTEGER, station_cd2 INTEGER,
                PRIMARY KEY (line_cd, station_cd1, station_cd2)) WITHOUT ROWID;

            INSERT OR IGNORE INTO \(changedStations) SELECT CAST(key_id AS INTEGER) FROM (\(UpdateLog.changedKeys(of: .stations, in: version)));
            INSERT OR IGNORE INTO \(changedLines) SELECT CAST(key_id AS INTEGER) FROM (\(UpdateLog.changedKeys(of: .lines, in: version)));
            INSERT OR IGNORE INTO \(companies) SELECT CAST(key_id AS INTEGER) FROM (\(UpdateLog.changedKeys(of: .companies, in: version)));

            INSERT OR IGNORE INTO \(lines) SELECT line_cd FROM \(changedLines);
            INSERT OR IGNORE INTO \(lines) SELECT line_cd FROM main.lines WHERE company_cd IN (SELECT company_cd FROM \(companies));
            INSERT OR IGNORE INTO \(lines) SELECT s.line_cd FROM \(changedStations) c CROSS JOIN main.stations s ON s.station_cd = c.station_cd;
            INSERT OR IGNORE INTO \(lines) SELECT h.line_cd FROM \(changedStations) c
                CROSS JOIN main.\(MasterTable.stations.historyTable) h ON h.key_id = CAST(c.station_cd AS TEXT) AND h.valid_to = \(version)
                WHERE h.line_cd IS NOT NULL;

            INSERT OR IGNORE INTO \(groupStations) SELECT station_cd FROM \(changedStations);
            INSERT OR IGNORE INTO \(groupStations) SELECT CAST(key_id AS INTEGER) FROM main.recorded_findings
                WHERE rule = '\(CheckRule.groupDangling.rawValue)' AND table_name = 'stations';
            """)
        if let touchingBefore {
            let insert = try db.makeStatement(sql: "INSERT OR IGNORE INTO \(connections) VALUES (?, ?, ?)")
            let handle = insert.sqliteStatement
            for key in touchingBefore {
                sqlite3_bind_int64(handle, 1, key.line)
                sqlite3_bind_int64(handle, 2, key.station1)
                sqlite3_bind_int64(handle, 3, key.station2)
                try StatementBinding.step(insert, db)
                sqlite3_reset(handle)
            }
        } else if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(changedStations)")! > 0 {
            // No index reads connections by station: one scan.
            try db.execute(sql: """
                INSERT OR IGNORE INTO \(connections) SELECT line_cd, station_cd1, station_cd2 FROM main.connections
                WHERE station_cd1 IN (SELECT station_cd FROM \(changedStations)) OR station_cd2 IN (SELECT station_cd FROM \(changedStations));
                """)
        }
        try db.execute(sql: """
            INSERT OR IGNORE INTO \(connections) SELECT c.line_cd, c.station_cd1, c.station_cd2
                FROM \(changedLines) l CROSS JOIN main.connections c ON c.line_cd = l.line_cd;
            """)
        // A connection the version removed is in scope too: its findings go, and nothing replaces them.
        let keyParts = VersionedState.keyParts("key_id", count: 3).map { "CAST(\($0) AS INTEGER)" }.joined(separator: ", ")
        try db.execute(sql: """
            INSERT OR IGNORE INTO \(connections) SELECT \(keyParts) FROM (\(UpdateLog.changedKeys(of: .connections, in: version)))
            """)
        return CheckScope()
    }

    package static func drop(_ db: Database) throws {
        for table in [groupStations, lines, companies, connections, changedStations, changedLines] {
            try db.execute(sql: "DROP TABLE IF EXISTS \(table)")
        }
    }

    /// SQL condition: `column` (a key of `table`) is in scope.
    package func contains(_ table: MasterTable, _ column: String) -> String {
        switch table {
        case .lines: return "\(column) IN (SELECT line_cd FROM \(Self.lines))"
        case .companies: return "\(column) IN (SELECT company_cd FROM \(Self.companies))"
        default: preconditionFailure("\(table.name): no rule reads it by its own key")
        }
    }

    /// SQL condition: `column` (a key of `table`) is of a row the version changed, for the
    /// `rowLocal` rules; companies are in scope only when changed.
    package func containsChanged(_ table: MasterTable, _ column: String) -> String {
        switch table {
        case .stations: return "\(column) IN (SELECT station_cd FROM \(Self.changedStations))"
        case .lines: return "\(column) IN (SELECT line_cd FROM \(Self.changedLines))"
        default: return contains(table, column)
        }
    }

    private static let rowLocalList = rowLocal.map { "'\($0.rawValue)'" }.joined(separator: ", ")

    /// SQL condition: a recorded finding (a `rule`, `table_name`, `key_id` row) is one this
    /// scope finds afresh, so the version's set replaces it: every one of the rules found afresh
    /// whole; for a `rowLocal` rule only on a changed station or line; for the others on any in
    /// scope, a station by its line.
    package static let foundAfresh = """
        rule IN ('\(CheckRule.stationMovedFar.rawValue)', '\(CheckRule.stationMovedImplausibly.rawValue)', '\(CheckRule.groupDangling.rawValue)',
                 '\(CheckRule.sourceDisagrees.rawValue)') OR table_name = 'prefectures'
        OR (table_name = 'stations' AND key_id IN (SELECT CAST(station_cd AS TEXT) FROM \(changedStations)))
        OR (table_name = 'stations' AND rule NOT IN (\(rowLocalList))
            AND (SELECT s.line_cd FROM main.stations s WHERE s.station_cd = CAST(key_id AS INTEGER)) IN (SELECT line_cd FROM \(lines)))
        OR (table_name = 'lines' AND key_id IN (SELECT CAST(line_cd AS TEXT) FROM \(changedLines)))
        OR (table_name = 'lines' AND rule NOT IN (\(rowLocalList)) AND key_id IN (SELECT CAST(line_cd AS TEXT) FROM \(lines)))
        OR (table_name = 'companies' AND key_id IN (SELECT CAST(company_cd AS TEXT) FROM \(companies)))
        OR (table_name = 'connections' AND key_id IN (SELECT \(MasterTable.connections.keyText()) FROM \(connections)))
        """
}
