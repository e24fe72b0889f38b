import Foundation
import GRDB
import StationHistory
import StationSchema

extension MasterDatabase {
    /// Every rule over the master at `version` (default: the newest), errors first, each
    /// finding marked waived when a curator accepted it.
    ///
    /// - Throws: `CheckError.noSuchVersion` for a version the master does not have.
    public func check(version: Int? = nil, limits: CheckLimits = CheckLimits()) throws -> CheckReport {
        // Not `read`: an older version is rebuilt in temp tables.
        try readingOneState { db in
            let newest = try Self.dataVersion(db)
            let version = version ?? newest
            guard (1...max(newest, 1)).contains(version), newest > 0 else {
                throw CheckError.noSuchVersion(requested: version, newest: newest)
            }
            return try DataChecker(version: version, newest: newest, limits: limits).report(db)
        }
    }

    /// The findings that `version` (the newest, maybe not committed yet) brings that the
    /// version before did not have, waivers applied: what an import or a plan ends its report with.
    ///
    /// When the version before's findings are recorded (under these rules and the default
    /// limits), only the rows in the version's `CheckScope` are checked and the record carried
    /// forward: at a million stations a 1 % import's checks take a fraction of a full pass.
    package static func introducedFindings(_ db: Database, version: Int, limits: CheckLimits = CheckLimits()) throws -> [CheckFinding] {
        guard limits == CheckLimits() else {
            return try introducedByFullCheck(db, version: version, limits: limits, recorded: nil)
        }
        let recorded = try RecordedFindings.identities(db, version: version - 1)
        guard let recorded, version > 1 else {
            return try introducedByFullCheck(db, version: version, limits: limits, recorded: recorded)
        }
        let scope = try CheckScope.build(db, version: version)
        defer { try? CheckScope.drop(db) }
        let found = try DataChecker(version: version, newest: version, limits: limits, scope: scope).report(db).findings
        try RecordedFindings.carryForward(to: version, replacingScopeWith: found, db)
        return found.filter { !recorded.contains($0.identity) }
    }

    /// The checks a release makes of `version`: their tally, and every error-level finding no
    /// waiver accepts (a release with any is refused).
    ///
    /// The newest version's recorded findings (made at its commit, under these rules and the
    /// default limits, and equal to a full pass: `IncrementalCheckTests`) stand for the pass
    /// when none of them blocks: at a million stations that pass took 2.5–5 s of a release.
    /// Anything else, and a version with a blocking finding (to name it), is checked whole.
    package static func releaseChecks(_ db: Database, version: Int, newest: Int, limits: CheckLimits) throws -> (tally: CheckTally, blocking: [CheckFinding]) {
        if version == newest, limits == CheckLimits(), let tally = try recordedTally(db, version: version),
           tally.count(.error, waived: false) == 0 {
            return (tally, [])
        }
        let report = try DataChecker(version: version, newest: newest, limits: limits).report(db)
        return (CheckTally(report), report.blocking)
    }

    /// The tally of the findings recorded at `version`'s commit (the newest version's, under the
    /// default limits), today's waivers applied; nil when none are recorded or a recorded rule
    /// is one this binary does not have.
    package static func recordedTally(_ db: Database, version: Int) throws -> CheckTally? {
        guard let counts = try RecordedFindings.counts(db, version: version) else { return nil }
        return CheckTally(version: version, counts: counts)
    }

    private static func introducedByFullCheck(_ db: Database, version: Int, limits: CheckLimits,
                                              recorded: Set<FindingIdentity>?) throws -> [CheckFinding] {
        let now = try DataChecker(version: version, newest: version, limits: limits).report(db).findings
        if limits == CheckLimits() { try RecordedFindings.record(now, version: version, db) }
        guard version > 1, !now.isEmpty else { return now }
        let before: Set<FindingIdentity>
        if let recorded {
            before = recorded
        } else {
            // Only a rule that finds something now can have introduced it: the version before is
            // read for those rules alone (rebuilding a past version costs a pass over the history).
            before = Set(try DataChecker(version: version - 1, newest: version, limits: limits)
                .findings(db, rules: Set(now.map(\.rule))).map(\.identity))
        }
        return now.filter { !before.contains($0.identity) }
    }
}

/// Runs the rules of `CheckRule` over one version's rows.
///
/// The newest version is the master tables themselves; an older one is rebuilt from the
/// history (`VersionedState`) as common table expressions named like the tables, which the
/// rules' SQL then reads unchanged.
package struct DataChecker {
    package let version: Int
    package let newest: Int
    package let limits: CheckLimits
    /// When set (the newest version only), each rule finds what it finds on the rows in scope alone.
    package var scope: CheckScope? = nil

    package init(version: Int, newest: Int, limits: CheckLimits, scope: CheckScope? = nil) {
        self.version = version
        self.newest = newest
        self.limits = limits
        self.scope = scope
    }

    private static let closed = MasterTable.closedStatus

    package func report(_ db: Database) throws -> CheckReport {
        let waived = try Waivers.identities(db)
        var findings = try self.findings(db)
        for index in findings.indices where waived.contains(findings[index].identity) { findings[index].waived = true }
        return CheckReport(version: version, findings: findings)
    }

    /// The findings of `rules` (default: all).
    package func findings(_ db: Database, rules: Set<CheckRule> = Set(CheckRule.allCases)) throws -> [CheckFinding] {
        precondition(scope == nil || version == newest, "a scope is the newest version's")
        if version < newest { try materializeState(db) }
        defer { if version < newest { try? dropState(db) } }
        var findings: [CheckFinding] = []
        if rules.contains(.openUnderClosed) { findings += try openUnderClosed(db) }
        if rules.contains(.datesOutOfOrder) { findings += try datesOutOfOrder(db) }
        if rules.contains(.coordinatesOutsideJapan) { findings += try coordinatesOutsideJapan(db) }
        if rules.contains(.closedWithoutDate) { findings += try closedWithoutDate(db) }
        if !rules.isDisjoint(with: [.connectionTooLong, .connectionToClosedStation]) { findings += try connections(db) }
        if rules.contains(.stationMovedFar) { findings += try stationsMovedFar(db) }
        if rules.contains(.kanaNotKatakana) { findings += try kanaNotKatakana(db) }
        if rules.contains(.groupDangling) { findings += try groupsDangling(db) }
        if rules.contains(.duplicateNameOnLine) { findings += try duplicateNamesOnLines(db) }
        if rules.contains(.lineWithoutStations) { findings += try linesWithoutStations(db) }
        if rules.contains(.valueOutsideDomain) { findings += try valuesOutsideDomain(db) }
        let ruleOrder = Dictionary(uniqueKeysWithValues: CheckRule.allCases.enumerated().map { ($1, $0) })
        let tableOrder = Dictionary(uniqueKeysWithValues: MasterTable.all.enumerated().map { ($1.name, $0) })
        // Each finding's order computed once, not in every comparison: parsing the keys there
        // was 60 s of an import that introduced 960,000 findings.
        // A key is at most three integers: held inline, so that a million orders allocate nothing.
        let orders = findings.map { finding in
            let key = KeyOrder(finding.key).parts
            return (finding.severity == .error ? 0 : 1, ruleOrder[finding.rule]!, tableOrder[finding.table]!,
                    key.count > 0 ? key[0] : Int64.min, key.count > 1 ? key[1] : Int64.min, key.count > 2 ? key[2] : Int64.min)
        }
        return findings.indices.sorted { orders[$0] < orders[$1] }.map { findings[$0] }
    }

    private static let stateTables = [MasterTable.companies, .lines, .stations, .connections]

    /// An older version's rows, rebuilt from the history once for all the rules (each rule
    /// rebuilding them took 3 s at a million stations, a minute for a whole check). The caller's connection must allow temp tables (a write, or
    /// `readingOneState`).
    private func materializeState(_ db: Database) throws {
        for table in Self.stateTables {
            try db.execute(sql: """
                DROP TABLE IF EXISTS temp.\(Self.stateTable(table));
                CREATE TEMP TABLE \(Self.stateTable(table)) AS \(VersionedState(table: table, version: version).select());
                """)
        }
        // The lookups the rules' joins make, as the master's keys and indexes serve them at the newest version.
        let indexes: [(MasterTable, String, String)] = [
            (.stations, "by_code", "station_cd"), (.stations, "by_line", "line_cd, station_cd"),
            (.lines, "by_code", "line_cd"), (.companies, "by_code", "company_cd"),
        ]
        for (table, name, columns) in indexes {
            try db.execute(sql: "CREATE INDEX temp.\(Self.stateTable(table))_\(name) ON \(Self.stateTable(table)) (\(columns))")
        }
    }

    private func dropState(_ db: Database) throws {
        for table in Self.stateTables { try db.execute(sql: "DROP TABLE IF EXISTS temp.\(Self.stateTable(table))") }
    }

    private static func stateTable(_ table: MasterTable) -> String { "checked_\(table.name)" }

    /// The rows of the tables a rule reads, as they were at `version`; SQL that names no
    /// table is given none.
    private func state(for sql: String) -> String {
        guard version < newest else { return "" }
        let tables = Self.stateTables.filter {
            sql.range(of: "\\b\($0.name)\\b", options: .regularExpression) != nil
        }
        guard !tables.isEmpty else { return "" }
        // Not materialized: a copy per rule cost 1.5 s for the stations at 1M, and SQLite would
        // copy a table named twice (`stations a`, `stations b`) unless told not to.
        return "WITH " + tables.map { "\($0.name) AS NOT MATERIALIZED (SELECT * FROM temp.\(Self.stateTable($0)))" }.joined(separator: ",\n") + "\n"
    }

    /// Each row of `sql` at this version through `transform`, read with a cursor: a rule may
    /// scan a million rows, and only its findings are kept.
    private func rows<T>(_ db: Database, _ sql: String, _ transform: (Row) throws -> T?) throws -> [T] {
        var results: [T] = []
        let cursor = try Row.fetchCursor(db, sql: state(for: sql) + sql)
        while let row = try cursor.next() {
            if let result = try transform(row) { results.append(result) }
        }
        return results
    }

    /// SQL: ` AND <column in scope>`, or nothing when every row is checked.
    private func inScope(_ table: MasterTable, _ column: String) -> String {
        scope.map { " AND " + $0.contains(table, column) } ?? ""
    }

    private func openUnderClosed(_ db: Database) throws -> [CheckFinding] {
        let lines = try rows(db, """
            SELECT l.line_cd, l.line_name, c.company_cd, c.company_name FROM lines l
            JOIN companies c ON c.company_cd = l.company_cd
            WHERE l.e_status <> \(Self.closed) AND c.e_status = \(Self.closed)\(inScope(.lines, "l.line_cd"))
            """) { row -> CheckFinding in
            let line: Int64 = row[0], company: Int64 = row[2]
            return CheckFinding(.openUnderClosed, .lines, key: String(line), """
                open line \(name(row[1])) belongs to closed company \(company) \(name(row[3])) \
                (close the line: station-admin close lines \(line); or restore the company: station-admin restore companies \(company))
                """)
        }
        let stations = try rows(db, """
            SELECT s.station_cd, s.station_name, l.line_cd, l.line_name FROM stations s
            JOIN lines l ON l.line_cd = s.line_cd
            WHERE s.e_status <> \(Self.closed) AND l.e_status = \(Self.closed)\(inScope(.stations, "s.station_cd"))
            """) { row -> CheckFinding in
            let station: Int64 = row[0], line: Int64 = row[2]
            return CheckFinding(.openUnderClosed, .stations, key: String(station), """
                open station \(name(row[1])) is on closed line \(line) \(name(row[3])) \
                (close the station: station-admin close stations \(station); move it to an open line: \
                station-admin move-stations \(station) --to-line LINE; or restore the line: station-admin restore lines \(line))
                """)
        }
        return lines + stations
    }

    private func datesOutOfOrder(_ db: Database) throws -> [CheckFinding] {
        try rows(db, """
            SELECT station_cd, station_name, open_ymd, close_ymd FROM stations
            WHERE open_ymd IS NOT NULL AND close_ymd IS NOT NULL AND open_ymd > close_ymd\(inScope(.stations, "station_cd"))
            """) { row in
            let station: Int64 = row[0]
            return CheckFinding(.datesOutOfOrder, .stations, key: String(station), """
                \(name(row[1])) opens after it closes (open_ymd \(row[2] as String), close_ymd \(row[3] as String); \
                correct one: station-admin edit stations \(station) close_ymd=YYYY-MM-DD)
                """)
        }
    }

    private func coordinatesOutsideJapan(_ db: Database) throws -> [CheckFinding] {
        let outside = """
            lat IS NOT NULL AND lon IS NOT NULL
            AND (lat NOT BETWEEN \(JapanBounds.latitude.lowerBound) AND \(JapanBounds.latitude.upperBound)
                 OR lon NOT BETWEEN \(JapanBounds.longitude.lowerBound) AND \(JapanBounds.longitude.upperBound))
            """
        let bounds = "expected latitude 20–46 °N and longitude 122–154 °E"
        let stations = try rows(db, "SELECT station_cd, station_name, lat, lon FROM stations WHERE \(outside)\(inScope(.stations, "station_cd"))") { row in
            let station: Int64 = row[0]
            return CheckFinding(.coordinatesOutsideJapan, .stations, key: String(station), """
                \(name(row[1])) lies outside Japan (lat \(row[2] as Double), lon \(row[3] as Double); \(bounds); \
                correct it: station-admin edit stations \(station) lat=… lon=…)
                """)
        }
        let lines = try rows(db, "SELECT line_cd, line_name, lat, lon FROM lines WHERE \(outside)\(inScope(.lines, "line_cd"))") { row in
            let line: Int64 = row[0]
            return CheckFinding(.coordinatesOutsideJapan, .lines, key: String(line), """
                the map centre of \(name(row[1])) lies outside Japan (lat \(row[2] as Double), lon \(row[3] as Double); \(bounds); \
                correct it: station-admin edit lines \(line) lat=… lon=…)
                """)
        }
        return stations + lines
    }

    private func closedWithoutDate(_ db: Database) throws -> [CheckFinding] {
        try rows(db, "SELECT station_cd, station_name FROM stations WHERE e_status = \(Self.closed) AND close_ymd IS NULL\(inScope(.stations, "station_cd"))") { row in
            let station: Int64 = row[0]
            return CheckFinding(.closedWithoutDate, .stations, key: String(station), """
                closed station \(name(row[1])) has no close_ymd (the apps show when a station closed; \
                set it: station-admin edit stations \(station) close_ymd=YYYY-MM-DD)
                """)
        }
    }

    /// `connection-too-long` and `connection-to-closed-station`: one pass over the connections
    /// reading numbers only; the names are read for the few that are findings.
    private func connections(_ db: Database) throws -> [CheckFinding] {
        struct Edge {
            package let line: Int64, first: Int64, second: Int64
            package let kilometres: Double?
            package let closedEnds: [Int64]
        }
        let edges = try rows(db, """
            SELECT c.line_cd, c.station_cd1, c.station_cd2, l.e_status,
                   a.lat, a.lon, a.e_status, b.lat, b.lon, b.e_status
            FROM \(scope == nil ? "connections c" : "\(CheckScope.connections) k JOIN connections c USING (line_cd, station_cd1, station_cd2)")
            JOIN stations a ON a.station_cd = c.station_cd1
            JOIN stations b ON b.station_cd = c.station_cd2
            LEFT JOIN lines l ON l.line_cd = c.line_cd
            """) { row -> Edge? in
            var kilometres: Double?
            if let a = row[4] as Double?, let b = row[5] as Double?, let c = row[7] as Double?, let d = row[8] as Double? {
                let length = Geography.metres(latitude: a, longitude: b, toLatitude: c, longitude: d) / 1000
                if length > limits.connectionKilometres { kilometres = length }
            }
            let lineOpen = (row[3] as Int?).map { $0 != Self.closed } ?? false
            let first: Int64 = row[1], second: Int64 = row[2]
            let closedEnds = lineOpen ? [(first, row[6] as Int), (second, row[9] as Int)].filter { $0.1 == Self.closed }.map(\.0) : []
            guard kilometres != nil || !closedEnds.isEmpty else { return nil }
            return Edge(line: row[0], first: first, second: second, kilometres: kilometres, closedEnds: closedEnds)
        }
        guard !edges.isEmpty else { return [] }
        let lineNames = try names(db, table: "lines", key: "line_cd", name: "line_name", of: Set(edges.map(\.line)))
        let stationNames = try names(db, table: "stations", key: "station_cd", name: "station_name", of: Set(edges.flatMap { [$0.first, $0.second] }))
        var findings: [CheckFinding] = []
        for edge in edges {
            let (line, first, second) = (edge.line, edge.first, edge.second)
            let key = "\(line)/\(first)/\(second)"
            let lineName = lineNames[line].map { name($0) } ?? "(no such line)"
            let stationName = { (station: Int64) in name(stationNames[station] ?? "") }
            let description = "\(lineName): \(stationName(first)) – \(stationName(second))"
            if let kilometres = edge.kilometres {
                findings.append(CheckFinding(.connectionTooLong, .connections, key: key, """
                    \(description) is \(String(format: "%.1f", kilometres)) km long (limit \(Self.kilometres(limits.connectionKilometres)) km; \
                    if they are not neighbours: station-admin disconnect \(line) \(first) \(second); \
                    a real long edge, such as a tunnel under a strait: waive it)
                    """))
            }
            if !edge.closedEnds.isEmpty {
                findings.append(CheckFinding(.connectionToClosedStation, .connections, key: key, """
                    open line \(description) runs to closed \(edge.closedEnds.map { "\($0) \(stationName($0))" }.joined(separator: " and ")) \
                    (remove it: station-admin disconnect \(line) \(first) \(second); or restore the station)
                    """))
            }
        }
        return findings
    }

    /// The names of the given rows of `table` at `version`, a few thousand keys per query.
    private func names(_ db: Database, table: String, key: String, name: String, of keys: Set<Int64>) throws -> [Int64: String] {
        var names: [Int64: String] = [:]
        let sorted = keys.sorted()
        for start in stride(from: 0, to: sorted.count, by: 4096) {
            let chunk = sorted[start..<min(start + 4096, sorted.count)].map(String.init).joined(separator: ", ")
            _ = try rows(db, "SELECT \(key), \(name) FROM \(table) WHERE \(key) IN (\(chunk))") { row -> Void? in
                names[row[0]] = row[1]
                return nil
            }
        }
        return names
    }

    private func stationsMovedFar(_ db: Database) throws -> [CheckFinding] {
        guard version > 1 else { return [] }  // the first version moves nothing
        let changedInVersion = UpdateLog.changedKeys(of: .stations, in: version, kinds: [.update, .delete, .restore])
        let before = VersionedState(table: .stations, version: version - 1).select(restrictedTo: "(\(changedInVersion))")
        let now = VersionedState(table: .stations, version: version, isNewest: version == newest)
            .select(restrictedTo: "(\(changedInVersion))")
        let rows = try Row.fetchAll(db, sql: """
            SELECT n.station_cd, n.station_name, b.lat, b.lon, n.lat, n.lon
            FROM (\(now)) n JOIN (\(before)) b ON b.key_id = n.key_id
            WHERE b.lat IS NOT NULL AND b.lon IS NOT NULL AND n.lat IS NOT NULL AND n.lon IS NOT NULL
            """)
        return rows.compactMap { row in
            let station: Int64 = row[0]
            let kilometres = Geography.metres(latitude: row[2], longitude: row[3], toLatitude: row[4], longitude: row[5]) / 1000
            guard kilometres > limits.moveKilometres else { return nil }
            return CheckFinding(.stationMovedFar, .stations, key: String(station), """
                \(name(row[1])) moved \(String(format: "%.1f", kilometres)) km in version \(version) \
                (\(Self.degrees(row[2])), \(Self.degrees(row[3])) → \(Self.degrees(row[4])), \(Self.degrees(row[5])); limit \(Self.kilometres(limits.moveKilometres)) km; \
                if the new place is wrong: station-admin edit stations \(station) lat=… lon=…; if the station really moved: waive it)
                """)
        }
    }

    private func kanaNotKatakana(_ db: Database) throws -> [CheckFinding] {
        let readings: [(MasterTable, String, String)] = [
            (.companies, "company_cd", "company_name_k"), (.lines, "line_cd", "line_name_k"), (.stations, "station_cd", "station_name_k"),
        ]
        var findings: [CheckFinding] = []
        for (table, keyColumn, column) in readings {
            findings += try rows(db, "SELECT \(keyColumn), \(column) FROM \(table.name) WHERE \(column) IS NOT NULL\(inScope(table, keyColumn))") { row in
                let key: Int64 = row[0], reading: String = row[1]
                let strangers = Katakana.characters(notAllowedIn: reading)
                guard !strangers.isEmpty else { return nil }
                let shown = strangers.prefix(5).map { String($0).escapingControlCharacters }.joined(separator: " ")
                return CheckFinding(.kanaNotKatakana, table, key: String(key), """
                    \(column) \(name(reading)) has \(strangers.count) character\(strangers.count == 1 ? "" : "s") that \
                    \(strangers.count == 1 ? "is" : "are") not katakana (\(shown)\(strangers.count > 5 ? " …" : ""); \
                    expected katakana, ー, ・ and spaces; station-admin edit \(table.name) \(key) \(column)=…)
                    """)
            }
        }
        return findings
    }

    private func groupsDangling(_ db: Database) throws -> [CheckFinding] {
        try rows(db, """
            SELECT s.station_cd, s.station_name, s.station_g_cd FROM stations s
            WHERE s.station_g_cd IS NOT NULL AND NOT EXISTS (SELECT 1 FROM stations g WHERE g.station_cd = s.station_g_cd)\(inScope(.stations, "s.station_cd"))
            """) { row in
            let station: Int64 = row[0], group: Int64 = row[2]
            return CheckFinding(.groupDangling, .stations, key: String(station), """
                \(name(row[1]))'s station_g_cd \(group) names no station (a group is named after one of its \
                stations; a station alone is its own group: station-admin edit stations \(station) station_g_cd=\(station))
                """)
        }
    }

    /// One pass over the open stations in line order, the first of each name remembered per
    /// line (a self-join on line and name visited every station of a line once per station: 2.4 s
    /// at a million stations, against 0.9 s). Names compare as bytes, as SQLite compares text.
    private func duplicateNamesOnLines(_ db: Database) throws -> [CheckFinding] {
        var currentLine: Int64?
        var firstOfName: [[UInt8]: Int64] = [:]
        // In scope, whole lines are read (a finding depends on every open station of its line)
        // and the findings of the stations in scope kept.
        let scoped = scope.map { scope in (
            column: ", \(scope.contains(.stations, "station_cd"))",
            lines: " AND line_cd IN (SELECT DISTINCT s.line_cd FROM \(CheckScope.stations) k CROSS JOIN stations s ON s.station_cd = k.station_cd)"
        ) }
        return try rows(db, """
            SELECT station_cd, station_name, line_cd\(scoped?.column ?? "") FROM stations
            WHERE e_status <> \(Self.closed)\(scoped?.lines ?? "") ORDER BY line_cd, station_cd
            """) { row in
            let station: Int64 = row[0], stationName: String = row[1], line: Int64 = row[2]
            if line != currentLine {
                currentLine = line
                firstOfName.removeAll(keepingCapacity: true)
            }
            guard let other = firstOfName[Array(stationName.utf8)] else {
                firstOfName[Array(stationName.utf8)] = station
                return nil
            }
            if scoped != nil && !(row[3] as Bool) { return nil }
            return CheckFinding(.duplicateNameOnLine, .stations, key: String(station), """
                \(name(stationName)) is the second open station of that name on line \(line) (the first is \(other); \
                close the one that is wrong: station-admin close stations \(station); or rename it)
                """)
        }
    }

    private func linesWithoutStations(_ db: Database) throws -> [CheckFinding] {
        try rows(db, """
            SELECT l.line_cd, l.line_name FROM lines l
            WHERE l.e_status <> \(Self.closed)
            AND NOT EXISTS (SELECT 1 FROM stations s WHERE s.line_cd = l.line_cd AND s.e_status <> \(Self.closed))\(inScope(.lines, "l.line_cd"))
            """) { row in
            let line: Int64 = row[0]
            return CheckFinding(.lineWithoutStations, .lines, key: String(line), """
                open line \(name(row[1])) has no open station (the apps list it empty; \
                close it: station-admin close lines \(line); or add its stations)
                """)
        }
    }

    /// Rows whose values break their column's CHECK: only rows written before the master had
    /// the constraints (the `checkDomains` migration kept them). Prefectures have no scope and
    /// are few: they are read whole, and their findings always found afresh.
    private func valuesOutsideDomain(_ db: Database) throws -> [CheckFinding] {
        var findings: [CheckFinding] = []
        for table in MasterTable.all {
            let checked = table.columns.filter { $0.domainCheck != nil }
            let outside = checked.map { "NOT (\($0.domainCheck!))" }
            var scope = ""
            switch table {
            case .prefectures: break
            case .connections:
                scope = self.scope.map { _ in " AND (line_cd, station_cd1, station_cd2) IN (SELECT line_cd, station_cd1, station_cd2 FROM \(CheckScope.connections))" } ?? ""
            default: scope = inScope(table, table.keyColumns[0])
            }
            let columns = outside.enumerated().map { "(\($1)) AS outside_\($0)" } + checked.map(\.name)
            findings += try rows(db, """
                SELECT \(table.keyText()) AS key_id, \(columns.joined(separator: ", ")) FROM \(table.name)
                WHERE (\(outside.joined(separator: " OR ")))\(scope)
                """) { row in
                let key: String = row["key_id"]
                let outsideColumns = checked.indices.filter { row["outside_\($0)"] as Bool? == true }.map { checked[$0] }
                let values = outsideColumns.map { column in
                    "\(column.name) \(FieldChange.text(row[column.name]).map(name) ?? "NULL") (expected \(column.domainExpectation))"
                }
                let mend = table == .connections
                    ? "remove it: station-admin disconnect \(key.split(separator: "/").joined(separator: " "))"
                    : "mend it: station-admin edit \(table.name) \(key) \(outsideColumns.first?.name ?? "column")=…"
                return CheckFinding(.valueOutsideDomain, table, key: key, "\(values.joined(separator: "; ")); \(mend)")
            }
        }
        return findings
    }

    private func name(_ text: String) -> String { text.escapingControlCharacters }

    /// Six decimals, as ekidata writes coordinates (about 0.1 m).
    private static func degrees(_ value: Double) -> String { String(format: "%.6f", value) }

    private static func kilometres(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// A key text in the order of its integer parts (`9/1` before `10/1`).
package struct KeyOrder: Comparable {
    package let parts: [Int64]
    package init(_ key: String) { parts = key.split(separator: "/").map { Int64($0) ?? 0 } }
    package static func < (a: KeyOrder, b: KeyOrder) -> Bool { a.parts.lexicographicallyPrecedes(b.parts) }
}

/// What a kana reading (`*_k`) may hold.
package enum Katakana {
    /// The katakana block (ァ…ヺ, ・, ー, ヽ, ヾ, ヿ), its phonetic extensions (ㇰ…ㇿ), and spaces.
    package static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30A1...0x30FF, 0x31F0...0x31FF, 0x20, 0x3000: return true
        default: return false
        }
    }

    package static func characters(notAllowedIn text: String) -> [Character] {
        text.filter { character in !character.unicodeScalars.allSatisfy(isAllowed) }.map { $0 }
    }
}
