import Foundation
import GRDB
import GRDBSQLite
import StationHistory
import StationSchema
import StationSupport

extension MasterDatabase {
    /// Every rule over the master at `version` (default: the newest), errors first, each
    /// finding marked waived when a curator accepted it. Holds every finding: at any size,
    /// `check(version:limits:rules:each:)` streams them.
    ///
    /// - Throws: `CheckError.noSuchVersion` for a version the master does not have.
    public func check(version: Int? = nil, limits: CheckLimits = CheckLimits()) throws -> CheckReport {
        var findings: [CheckFinding] = []
        let outcome = try check(version: version, limits: limits) { findings.append($0) }
        return CheckReport(version: outcome.tally.version, findings: findings)
    }

    /// The rules of `rules` over the master at `version` (default: the newest): each finding,
    /// waived or not, handed to `body` as it is found, errors first, then by rule, table and key.
    /// A million findings stream in the memory of one.
    ///
    /// - Returns: how many there were, and which waivers' findings went by.
    /// - Throws: `CheckError.noSuchVersion` for a version the master does not have.
    public func check(version: Int? = nil, limits: CheckLimits = CheckLimits(), rules: Set<CheckRule> = Set(CheckRule.allCases),
                      each body: (CheckFinding) throws -> Void) throws -> CheckOutcome {
        // Not `read`: an older version is rebuilt in temp tables.
        try readingOneState { db in
            let newest = try Self.dataVersion(db)
            let version = version ?? newest
            guard (1...max(newest, 1)).contains(version), newest > 0 else {
                throw CheckError.noSuchVersion(requested: version, newest: newest)
            }
            let waivers = try Waivers.identities(db)
            var outcome = CheckOutcome(tally: CheckTally(version: version), rules: rules)
            try DataChecker(version: version, newest: newest, limits: limits).forEachFinding(db, rules: rules) { found, message in
                var finding = found.finding(message())
                finding.waived = Waivers.accept(found, among: waivers)
                if finding.waived { outcome.waiversMet.insert(found.identity) }
                outcome.tally.add(finding)
                try body(finding)
            }
            return outcome
        }
    }

    /// The findings that `version` (the newest, maybe not committed yet) brings that the
    /// version before did not have, waivers applied: what an import or a plan ends its report
    /// with. The version's findings are recorded (`RecordedFindings`) as they stream by, and only
    /// the counts and the first of each rule are kept: a version of a million findings takes the
    /// memory of a few hundred.
    ///
    /// When the version before's findings are recorded (under these rules), only the rows in the
    /// version's `CheckScope` are checked and the record carried forward: at a million stations a
    /// 1 % import's checks take a fraction of a full pass.
    ///
    /// `touchingBefore`: see `CheckScope.build`.
    package static func introducedFindings(_ db: Database, version: Int,
                                           touchingBefore: [CheckScope.ConnectionKey]? = nil) throws -> IntroducedFindings {
        let waived = try Waivers.identities(db)
        var introduced = IntroducedFindings()
        let add = { (found: FoundRow, message: () -> String) in
            introduced.add(found, waived: Waivers.accept(found, among: waived), message: message)
        }
        if version > 1, try RecordedFindings.isRecorded(version - 1, db) {
            let scope = try CheckScope.build(db, version: version, touchingBefore: touchingBefore)
            defer { try? CheckScope.drop(db) }
            let found = try FindingIdentityTable.temporary(db, name: "found_findings", appended: true)
            defer { try? found.drop() }
            let recorded = try FindingIdentityTable.recorded(db)
            try DataChecker(version: version, newest: version, limits: CheckLimits(), scope: scope).forEachFinding(db) { row, message in
                try found.add(row)
                if try !recorded.contains(row) { add(row, message) }
            }
            try RecordedFindings.carryForward(to: version, replacingScopeWith: found, db)
            return introduced
        }
        // No record to start from: the version before is checked from the history, for its
        // identities alone, and this version checked whole.
        let before = version > 1
            ? try FindingIdentityTable.gathered(db, name: "findings_before", from: DataChecker(version: version - 1, newest: version, limits: CheckLimits()))
            : nil
        defer { try? before?.drop() }
        let recording = try FindingIdentityTable.temporary(db, name: "findings_now", appended: true)
        defer { try? recording.drop() }
        // Every row of a first version was written under the master's CHECKs, so none can be
        // outside its domain: that rule's scan of every column is spared.
        var rules = Set(CheckRule.allCases)
        if version == 1 { rules.remove(.valueOutsideDomain) }
        try DataChecker(version: version, newest: version, limits: CheckLimits()).forEachFinding(db, rules: rules) { row, message in
            try recording.add(row)
            if try before?.contains(row) != true { add(row, message) }
        }
        try RecordedFindings.replaceAll(version: version, with: recording, before: before, db)
        return introduced
    }

    /// The checks a release makes of `version`: their tally, and every error-level finding no
    /// waiver accepts (a release with any is refused).
    ///
    /// The newest version's recorded findings (made at its commit, under these rules and the
    /// default limits, and equal to a full pass: `IncrementalCheckTests`) stand for the pass
    /// when none of them blocks: the pass is a large share of a release.
    /// Anything else, and a version with a blocking finding (to name it), is checked whole.
    package static func releaseChecks(_ db: Database, version: Int, newest: Int, limits: CheckLimits) throws -> (tally: CheckTally, blocking: [CheckFinding]) {
        if version == newest, limits == CheckLimits(), let tally = try recordedTally(db, version: version),
           tally.count(.error, waived: false) == 0 {
            return (tally, [])
        }
        // Streamed: only the blocking findings are put in words and kept.
        let waived = try Waivers.identities(db)
        var tally = CheckTally(version: version)
        var blocking: [CheckFinding] = []
        try DataChecker(version: version, newest: newest, limits: limits).forEachFinding(db) { found, message in
            let isWaived = Waivers.accept(found, among: waived)
            if found.rule.severity == .error && !isWaived {
                blocking.append(found.finding(message()))
                tally.add(blocking.last!)
            } else {
                tally.add(severity: found.rule.severity, waived: isWaived)
            }
        }
        return (tally, blocking)
    }

    /// The tally of the findings recorded at `version`'s commit (the newest version's, under the
    /// default limits), today's waivers applied; nil when none are recorded or a recorded rule
    /// is one this binary does not have.
    package static func recordedTally(_ db: Database, version: Int) throws -> CheckTally? {
        guard let counts = try RecordedFindings.counts(db, version: version) else { return nil }
        return CheckTally(version: version, counts: counts)
    }
}

/// A finding as a rule hands it over: what identifies it, with its words made only when the
/// handler asks for them. An import shows the first twenty of each rule: a message built for each
/// of a million findings would cost seconds and hundreds of MiB.
package struct FoundRow: Sendable {
    package let rule: CheckRule
    package let table: MasterTable
    /// As `updates.key_id` (`1120101`, `11302/1130201/1130202`).
    package let key: String

    package init(rule: CheckRule, table: MasterTable, key: String) {
        self.rule = rule
        self.table = table
        self.key = key
    }

    package var identity: FindingIdentity { FindingIdentity(rule: rule.rawValue, table: table.name, key: key) }

    package func finding(_ message: String) -> CheckFinding { CheckFinding(rule, table, key: key, message) }
}

/// Takes each finding, in the order `check` lists them (errors first, then rule, table and key),
/// and its message when it calls `message`, before it returns.
package typealias FindingHandler = (_ found: FoundRow, _ message: () -> String) throws -> Void

/// Runs the rules of `CheckRule` over one version's rows.
///
/// The newest version is the master tables themselves; an older one is rebuilt from the
/// history (`VersionedState`) as common table expressions named like the tables, which the
/// rules' SQL then reads unchanged.
///
/// The findings stream: each rule reads its rows in key order and hands each finding over as it
/// finds it, and the rules run in the order findings are listed, so nothing is sorted or held.
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

    /// The rules in the order their findings are listed: errors first, then as `CheckRule` declares them.
    package static let listingOrder: [CheckRule] = CheckRule.allCases.enumerated()
        .sorted { ($0.element.severity == .error ? 0 : 1, $0.offset) < ($1.element.severity == .error ? 0 : 1, $1.offset) }
        .map(\.element)

    /// Hands each finding of `rules` to `handler` in listing order, as the rules find them.
    package func forEachFinding(_ db: Database, rules: Set<CheckRule> = Set(CheckRule.allCases), _ handler: FindingHandler) throws {
        precondition(scope == nil || version == newest, "a scope is the newest version's")
        if version < newest { try materializeState(db) }
        defer { if version < newest { try? dropState(db) } }
        try withoutActuallyEscaping(handler) { handler in
            let out = FindingOutput(handler)
            var closedEnds: [ClosedEnd]?
            var moves: [StationMove]?
            for rule in Self.listingOrder where rules.contains(rule) {
                switch rule {
                case .openUnderClosed: try openUnderClosed(db, out)
                case .datesOutOfOrder: try datesOutOfOrder(db, out)
                case .coordinatesOutsideJapan: try coordinatesOutsideJapan(db, out)
                case .valueOutsideDomain: try valuesOutsideDomain(db, out)
                case .closedWithoutDate: try closedWithoutDate(db, out)
                case .connectionTooLong:
                    closedEnds = try connections(db, tooLong: out, collectingClosedEnds: rules.contains(.connectionToClosedStation))
                // One reading of the moved stations serves both rules: each move is one or the other.
                case .stationMovedImplausibly, .stationMovedFar:
                    let read = try moves ?? stationMoves(db)
                    moves = read
                    try report(read, as: rule, out)
                case .kanaNotKatakana: try kanaNotKatakana(db, out)
                case .groupDangling: try groupsDangling(db, out)
                case .duplicateNameOnLine: try duplicateNamesOnLines(db, out)
                case .lineWithoutStations: try linesWithoutStations(db, out)
                case .connectionToClosedStation:
                    let ends = try closedEnds ?? connections(db, tooLong: nil, collectingClosedEnds: true)
                    try connectionsToClosedStations(ends, out)
                }
            }
        }
    }

    private static let stateTables = [MasterTable.companies, .lines, .stations, .connections]

    /// An older version's rows, rebuilt from the history once for all the rules, not by each
    /// rule again. The caller's connection must allow temp tables (a write, or
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
            (.connections, "by_key", "line_cd, station_cd1, station_cd2"),
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
        // Not materialized: a copy per rule would copy the stations again for each, and SQLite would
        // copy a table named twice (`stations a`, `stations b`) unless told not to.
        return "WITH " + tables.map { "\($0.name) AS NOT MATERIALIZED (SELECT * FROM temp.\(Self.stateTable($0)))" }.joined(separator: ",\n") + "\n"
    }

    /// Each row of `sql` at this version, read with a cursor: a rule may scan a million rows.
    private func forEachRow(_ db: Database, _ sql: String, arguments: StatementArguments = [], _ body: (Row) throws -> Void) throws {
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: state(for: sql) + sql), arguments: arguments)
        while let row = try cursor.next() { try body(row) }
    }

    /// SQL: ` AND <column in scope>`, or nothing when every row is checked.
    private func inScope(_ table: MasterTable, _ column: String) -> String {
        scope.map { " AND " + $0.contains(table, column) } ?? ""
    }

    /// SQL: ` AND <column of a row the version changed>`, for a rule of `CheckScope.rowLocal`.
    private func changedInScope(_ table: MasterTable, _ column: String) -> String {
        scope.map { " AND " + $0.containsChanged(table, column) } ?? ""
    }

    private func openUnderClosed(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT l.line_cd, l.line_name, c.company_cd, c.company_name FROM lines l
            JOIN companies c ON c.company_cd = l.company_cd
            WHERE l.e_status <> \(Self.closed) AND c.e_status = \(Self.closed)\(inScope(.lines, "l.line_cd"))
            ORDER BY l.line_cd
            """) { row in
            let line: Int64 = row[0], company: Int64 = row[2]
            try out.found(.openUnderClosed, .lines, String(line)) { """
                open line \(name(row[1])) belongs to closed company \(company) \(name(row[3])) \
                (close the line: station-admin close lines \(line); or restore the company: station-admin restore companies \(company))
                """ }
        }
        try forEachRow(db, """
            SELECT s.station_cd, s.station_name, l.line_cd, l.line_name FROM stations s
            JOIN lines l ON l.line_cd = s.line_cd
            WHERE s.e_status <> \(Self.closed) AND l.e_status = \(Self.closed)\(inScope(.lines, "l.line_cd"))
            ORDER BY s.station_cd
            """) { row in
            let station: Int64 = row[0], line: Int64 = row[2]
            try out.found(.openUnderClosed, .stations, String(station)) { """
                open station \(name(row[1])) is on closed line \(line) \(name(row[3])) \
                (close the station: station-admin close stations \(station); move it to an open line: \
                station-admin move-stations \(station) --to-line LINE; or restore the line: station-admin restore lines \(line))
                """ }
        }
    }

    private func datesOutOfOrder(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT station_cd, station_name, open_ymd, close_ymd FROM stations
            WHERE open_ymd IS NOT NULL AND close_ymd IS NOT NULL AND open_ymd > close_ymd\(changedInScope(.stations, "station_cd"))
            ORDER BY station_cd
            """) { row in
            let station: Int64 = row[0]
            try out.found(.datesOutOfOrder, .stations, String(station)) { """
                \(name(row[1])) opens after it closes (open_ymd \(row[2] as String), close_ymd \(row[3] as String); \
                correct one: station-admin edit stations \(station) close_ymd=YYYY-MM-DD)
                """ }
        }
    }

    private func coordinatesOutsideJapan(_ db: Database, _ out: FindingOutput) throws {
        let outside = """
            lat IS NOT NULL AND lon IS NOT NULL
            AND (lat NOT BETWEEN \(JapanBounds.latitude.lowerBound) AND \(JapanBounds.latitude.upperBound)
                 OR lon NOT BETWEEN \(JapanBounds.longitude.lowerBound) AND \(JapanBounds.longitude.upperBound))
            """
        let bounds = "expected latitude 20–46 °N and longitude 122–154 °E"
        try forEachRow(db, "SELECT line_cd, line_name, lat, lon FROM lines WHERE \(outside)\(changedInScope(.lines, "line_cd")) ORDER BY line_cd") { row in
            let line: Int64 = row[0]
            try out.found(.coordinatesOutsideJapan, .lines, String(line)) { """
                the map centre of \(name(row[1])) lies outside Japan (lat \(row[2] as Double), lon \(row[3] as Double); \(bounds); \
                correct it: station-admin edit lines \(line) lat=… lon=…)
                """ }
        }
        try forEachRow(db, "SELECT station_cd, station_name, lat, lon FROM stations WHERE \(outside)\(changedInScope(.stations, "station_cd")) ORDER BY station_cd") { row in
            let station: Int64 = row[0]
            try out.found(.coordinatesOutsideJapan, .stations, String(station)) { """
                \(name(row[1])) lies outside Japan (lat \(row[2] as Double), lon \(row[3] as Double); \(bounds); \
                correct it: station-admin edit stations \(station) lat=… lon=…)
                """ }
        }
    }

    private func closedWithoutDate(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT station_cd, station_name FROM stations
            WHERE e_status = \(Self.closed) AND close_ymd IS NULL\(changedInScope(.stations, "station_cd")) ORDER BY station_cd
            """) { row in
            let station: Int64 = row[0]
            try out.found(.closedWithoutDate, .stations, String(station)) { """
                closed station \(name(row[1])) has no close_ymd (the apps show when a station closed; \
                set it: station-admin edit stations \(station) close_ymd=YYYY-MM-DD)
                """ }
        }
    }

    /// A connection of an open line with a closed end, kept from the pass of
    /// `connection-too-long` until its own rule's turn, with the names its words need (a name
    /// read again for each of tens of thousands of such findings is what this spares).
    private struct ClosedEnd {
        let line: Int64, first: Int64, second: Int64
        let firstClosed: Bool, secondClosed: Bool
        let lineName: String?, firstName: String, secondName: String
    }

    /// One pass over the connections in key order: each too long is handed to `tooLong` (when
    /// given), and those of an open line with a closed end are returned when `collectingClosedEnds`.
    private func connections(_ db: Database, tooLong: FindingOutput?, collectingClosedEnds: Bool) throws -> [ClosedEnd] {
        var closedEnds: [ClosedEnd] = []
        // In scope, the scope's keys drive (CROSS JOIN), in their own order: left to choose,
        // SQLite read every connection in key order to spare a sort and probed the scope with
        // each, more than twice the work for a 1 % import's connections.
        let (connections, order) = scope == nil
            ? ("connections c", "c")
            : ("\(CheckScope.connections) k CROSS JOIN connections c USING (line_cd, station_cd1, station_cd2)", "k")
        // Read column by column, the names only for a finding: decoding every row's thirteen values
        // as a GRDB row costs more than the join itself.
        let sql = """
            SELECT c.line_cd, c.station_cd1, c.station_cd2, l.e_status,
                   a.lat, a.lon, a.e_status, b.lat, b.lon, b.e_status,
                   l.line_name, a.station_name, b.station_name
            FROM \(connections)
            JOIN stations a ON a.station_cd = c.station_cd1
            JOIN stations b ON b.station_cd = c.station_cd2
            LEFT JOIN lines l ON l.line_cd = c.line_cd
            ORDER BY \(order).line_cd, \(order).station_cd1, \(order).station_cd2
            """
        try StatementBinding.forEachRow(try db.cachedStatement(sql: state(for: sql) + sql), db) { row in
            func real(_ column: Int32) -> Double? {
                sqlite3_column_type(row, column) == SQLITE_NULL ? nil : sqlite3_column_double(row, column)
            }
            func text(_ column: Int32) -> String? {
                guard let bytes = sqlite3_column_text(row, column) else { return nil }
                return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(row, column))), as: UTF8.self)
            }
            let line = sqlite3_column_int64(row, 0), first = sqlite3_column_int64(row, 1), second = sqlite3_column_int64(row, 2)
            if let tooLong, let a = real(4), let b = real(5), let c = real(7), let d = real(8) {
                let kilometres = Geography.metres(latitude: a, longitude: b, toLatitude: c, longitude: d) / 1000
                if kilometres > limits.connectionKilometres {
                    try tooLong.found(.connectionTooLong, .connections, "\(line)/\(first)/\(second)") { """
                        \(lineName(text(10))): \(name(text(11) ?? "")) – \(name(text(12) ?? "")) is \(String(format: "%.1f", kilometres)) km long \
                        (limit \(Self.kilometres(limits.connectionKilometres)) km; \
                        if they are not neighbours: station-admin disconnect \(line) \(first) \(second); \
                        a real long edge, such as a tunnel under a strait: waive it)
                        """ }
                }
            }
            guard collectingClosedEnds, sqlite3_column_type(row, 3) != SQLITE_NULL, sqlite3_column_int64(row, 3) != Int64(Self.closed) else { return }
            let firstClosed = sqlite3_column_int64(row, 6) == Int64(Self.closed), secondClosed = sqlite3_column_int64(row, 9) == Int64(Self.closed)
            if firstClosed || secondClosed {
                closedEnds.append(ClosedEnd(line: line, first: first, second: second, firstClosed: firstClosed, secondClosed: secondClosed,
                                            lineName: text(10), firstName: text(11) ?? "", secondName: text(12) ?? ""))
            }
        }
        return closedEnds
    }

    private func connectionsToClosedStations(_ closedEnds: [ClosedEnd], _ out: FindingOutput) throws {
        for edge in closedEnds {
            let (line, first, second) = (edge.line, edge.first, edge.second)
            try out.found(.connectionToClosedStation, .connections, "\(line)/\(first)/\(second)") {
                let ends = [(first, edge.firstName, edge.firstClosed), (second, edge.secondName, edge.secondClosed)]
                    .filter(\.2).map { "\($0.0) \(name($0.1))" }
                return """
                    open line \(lineName(edge.lineName)): \(name(edge.firstName)) – \(name(edge.secondName)) \
                    runs to closed \(ends.joined(separator: " and ")) (remove it: station-admin disconnect \(line) \(first) \(second); \
                    or restore the station)
                    """
            }
        }
    }

    private func lineName(_ text: String?) -> String { text.map { name($0) } ?? "(no such line)" }

    private struct StationMove {
        let station: Int64, name: String, from: (Double, Double), to: (Double, Double), kilometres: Double
    }

    /// The version's stations that moved more than the smaller of the two rules' limits, by code.
    private func stationMoves(_ db: Database) throws -> [StationMove] {
        guard version > 1 else { return [] }  // the first version moves nothing
        let changedInVersion = UpdateLog.changedKeys(of: .stations, in: version, kinds: [.update, .delete, .restore])
        let before = VersionedState.statesBefore(version, of: changedInVersion, in: .stations)
        let threshold = min(limits.moveKilometres, CheckLimits.implausibleMoveKilometres)
        // The version's stations drive (CROSS JOIN), then their state now: the few moved stations,
        // not the million. Sorted here, not by the query.
        var moved: [StationMove] = []
        try forEachRow(db, """
            SELECT n.station_cd, n.station_name, b.lat, b.lon, n.lat, n.lon
            FROM (\(before)) b CROSS JOIN stations n ON n.station_cd = b.station_cd
            WHERE b.lat IS NOT NULL AND b.lon IS NOT NULL AND n.lat IS NOT NULL AND n.lon IS NOT NULL
            """) { row in
            let kilometres = Geography.metres(latitude: row[2], longitude: row[3], toLatitude: row[4], longitude: row[5]) / 1000
            guard kilometres > threshold else { return }
            moved.append(StationMove(station: row[0], name: row[1], from: (row[2], row[3]), to: (row[4], row[5]), kilometres: kilometres))
        }
        return moved.sorted { $0.station < $1.station }
    }

    /// A move beyond `implausibleMoveKilometres` is `station-moved-implausibly` (an error), a
    /// shorter one beyond the limit `station-moved-far` (a warning): never both.
    private func report(_ moves: [StationMove], as rule: CheckRule, _ out: FindingOutput) throws {
        let implausible = CheckLimits.implausibleMoveKilometres
        for move in moves {
            let isImplausible = move.kilometres > implausible
            guard rule == .stationMovedImplausibly ? isImplausible : !isImplausible && move.kilometres > limits.moveKilometres else { continue }
            try out.found(rule, .stations, String(move.station)) {
                let place = """
                    \(name(move.name)) moved \(String(format: "%.1f", move.kilometres)) km in version \(version) \
                    (\(Self.degrees(move.from.0)), \(Self.degrees(move.from.1)) → \(Self.degrees(move.to.0)), \(Self.degrees(move.to.1))
                    """
                return isImplausible
                    ? place + """
                        ; no station moves more than \(Self.kilometres(implausible)) km: a typo in lat or lon? \
                        Fix it: station-admin edit stations \(move.station) lat=… lon=…; if the station really moved: waive it)
                        """
                    : place + """
                        ; limit \(Self.kilometres(limits.moveKilometres)) km; \
                        if the new place is wrong: station-admin edit stations \(move.station) lat=… lon=…; if the station really moved: waive it)
                        """
            }
        }
    }

    private func kanaNotKatakana(_ db: Database, _ out: FindingOutput) throws {
        let readings: [(MasterTable, String, String)] = [
            (.companies, "company_cd", "company_name_k"), (.lines, "line_cd", "line_name_k"), (.stations, "station_cd", "station_name_k"),
        ]
        for (table, keyColumn, column) in readings {
            try forEachRow(db, "SELECT \(keyColumn), \(column) FROM \(table.name) WHERE \(column) IS NOT NULL\(changedInScope(table, keyColumn)) ORDER BY \(keyColumn)") { row in
                let key: Int64 = row[0], reading: String = row[1]
                let strangers = Katakana.characters(notAllowedIn: reading)
                guard !strangers.isEmpty else { return }
                try out.found(.kanaNotKatakana, table, String(key)) {
                    let shown = strangers.prefix(5).map { String($0).escapingControlCharacters }.joined(separator: " ")
                    return """
                        \(column) \(name(reading)) has \(strangers.count) character\(strangers.count == 1 ? "" : "s") that \
                        \(strangers.count == 1 ? "is" : "are") not katakana (\(shown)\(strangers.count > 5 ? " …" : ""); \
                        expected katakana, ー, ・ and spaces; station-admin edit \(table.name) \(key) \(column)=…)
                        """
                }
            }
        }
    }

    private func groupsDangling(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT s.station_cd, s.station_name, s.station_g_cd FROM stations s
            WHERE s.station_g_cd IS NOT NULL AND NOT EXISTS (SELECT 1 FROM stations g WHERE g.station_cd = s.station_g_cd)\(
                scope == nil ? "" : " AND s.station_cd IN (SELECT station_cd FROM \(CheckScope.groupStations))")
            ORDER BY s.station_cd
            """) { row in
            let station: Int64 = row[0], group: Int64 = row[2]
            try out.found(.groupDangling, .stations, String(station)) { """
                \(name(row[1]))'s station_g_cd \(group) names no station (a group is named after one of its \
                stations; a station alone is its own group: station-admin edit stations \(station) station_g_cd=\(station))
                """ }
        }
    }

    /// One pass over the open stations in line order, the first of each name remembered per
    /// line (a self-join on line and name visits every station of a line once per station). Names
    /// compare as bytes, as SQLite compares text.
    /// The findings come in line order: they are held (by number and name) and listed in key order.
    private func duplicateNamesOnLines(_ db: Database, _ out: FindingOutput) throws {
        var currentLine: Int64?
        var firstOfName: [NameBytes: Int64] = [:]
        var duplicates: [(station: Int64, line: Int64, first: Int64, name: String)] = []
        // In scope, the lines in scope are read whole: a finding depends on every open station
        // of its line. Read column by column: a name's bytes are taken once, not decoded to a
        // string and copied twice.
        let sql = """
            SELECT station_cd, station_name, line_cd FROM stations
            WHERE e_status <> \(Self.closed)\(inScope(.lines, "line_cd")) ORDER BY line_cd, station_cd
            """
        try StatementBinding.forEachRow(try db.cachedStatement(sql: state(for: sql) + sql), db) { row in
            let station = sqlite3_column_int64(row, 0), line = sqlite3_column_int64(row, 2)
            if line != currentLine {
                currentLine = line
                firstOfName.removeAll(keepingCapacity: true)
            }
            let stationName = NameBytes(row, column: 1)
            guard let other = firstOfName[stationName] else {
                firstOfName[stationName] = station
                return
            }
            duplicates.append((station, line, other, String(decoding: stationName.bytes, as: UTF8.self)))
        }
        for duplicate in duplicates.sorted(by: { $0.station < $1.station }) {
            try out.found(.duplicateNameOnLine, .stations, String(duplicate.station)) { """
                \(name(duplicate.name)) is the second open station of that name on line \(duplicate.line) (the first is \(duplicate.first); \
                close the one that is wrong: station-admin close stations \(duplicate.station); or rename it)
                """ }
        }
    }

    private func linesWithoutStations(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT l.line_cd, l.line_name FROM lines l
            WHERE l.e_status <> \(Self.closed)
            AND NOT EXISTS (SELECT 1 FROM stations s WHERE s.line_cd = l.line_cd AND s.e_status <> \(Self.closed))\(inScope(.lines, "l.line_cd"))
            ORDER BY l.line_cd
            """) { row in
            let line: Int64 = row[0]
            try out.found(.lineWithoutStations, .lines, String(line)) { """
                open line \(name(row[1])) has no open station (the apps list it empty; \
                close it: station-admin close lines \(line); or add its stations)
                """ }
        }
    }

    /// Rows whose values break their column's CHECK: only rows written before the master had
    /// the constraints (the `checkDomains` migration kept them). Prefectures have no scope and
    /// are few: they are read whole, and their findings always found afresh.
    private func valuesOutsideDomain(_ db: Database, _ out: FindingOutput) throws {
        for table in MasterTable.all {
            let checked = table.columns.filter { $0.domainCheck != nil }
            let outside = checked.map { "NOT (\($0.domainCheck!))" }
            var scope = ""
            switch table {
            case .prefectures: break
            case .connections:
                scope = self.scope.map { _ in " AND (line_cd, station_cd1, station_cd2) IN (SELECT line_cd, station_cd1, station_cd2 FROM \(CheckScope.connections))" } ?? ""
            default: scope = changedInScope(table, table.keyColumns[0])
            }
            let columns = outside.enumerated().map { "(\($1)) AS outside_\($0)" } + checked.map(\.name)
            try forEachRow(db, """
                SELECT \(table.keyText()) AS key_id, \(columns.joined(separator: ", ")) FROM \(table.name)
                WHERE (\(outside.joined(separator: " OR ")))\(scope) ORDER BY \(table.keyColumns.joined(separator: ", "))
                """) { row in
                let key: String = row["key_id"]
                try out.found(.valueOutsideDomain, table, key) {
                    let outsideColumns = checked.indices.filter { row["outside_\($0)"] as Bool? == true }.map { checked[$0] }
                    let values = outsideColumns.map { column in
                        "\(column.name) \(FieldChange.text(row[column.name]).map(name) ?? "NULL") (expected \(column.domainExpectation))"
                    }
                    let mend = table == .connections
                        ? "remove it: station-admin disconnect \(key.split(separator: "/").joined(separator: " "))"
                        : "mend it: station-admin edit \(table.name) \(key) \(outsideColumns.first?.name ?? "column")=…"
                    return "\(values.joined(separator: "; ")); \(mend)"
                }
            }
        }
    }

    private func name(_ text: String) -> String { text.escapingControlCharacters }

    /// Six decimals, as ekidata writes coordinates (about 0.1 m).
    private static func degrees(_ value: Double) -> String { String(format: "%.6f", value) }

    private static func kilometres(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// Where a rule's findings go: the caller's handler, and (in debug builds) a check that they
/// come in listing order, which is what lets a caller stream them.
private final class FindingOutput {
    private let handler: FindingHandler
    #if DEBUG
    private var last: (Int, Int, [Int64])?
    private static let ranks = Dictionary(uniqueKeysWithValues: DataChecker.listingOrder.enumerated().map { ($1, $0) })
    #endif

    init(_ handler: @escaping FindingHandler) { self.handler = handler }

    func found(_ rule: CheckRule, _ table: MasterTable, _ key: String, message: () -> String) throws {
        #if DEBUG
        let order = (Self.ranks[rule]!, MasterTable.all.firstIndex(of: table)!, KeyOrder(key).parts)
        if let last {
            precondition((last.0, last.1) < (order.0, order.1)
                || ((last.0, last.1) == (order.0, order.1) && last.2.lexicographicallyPrecedes(order.2)),
                "\(rule.rawValue) \(table.name) \(key) came out of listing order")
        }
        last = order
        #endif
        try handler(FoundRow(rule: rule, table: table, key: key), message)
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

/// A text column's bytes, compared as SQLite compares text, hashed as one run of bytes: an
/// array of bytes hashes byte by byte.
private struct NameBytes: Hashable {
    let bytes: [UInt8]

    init(_ row: SQLiteStatement, column: Int32) {
        // The text first: its byte count is the text's (SQLite's rule for the two calls).
        let text = sqlite3_column_text(row, column)
        let count = Int(sqlite3_column_bytes(row, column))
        bytes = text.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
