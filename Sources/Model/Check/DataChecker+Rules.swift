import Foundation
import GRDB
import GRDBSQLite
import StationHistory
import StationSchema
import StationSupport

/// The rules, one method each, in the order `CheckRule` lists them: each reads its rows in key
/// order (at the checked version, within the scope) and hands every finding to `out`.
extension DataChecker {
    func openUnderClosed(_ db: Database, _ out: FindingOutput) throws {
        // An open line of a closed company, then an open station of a closed line: one query
        // shape, the child's key and name first, its parent's after.
        let levels: [(child: MasterTable, childKey: String, childName: String, parent: String, parentKey: String, parentName: String)] = [
            (.lines, "line_cd", "line_name", "companies", "company_cd", "company_name"),
            (.stations, "station_cd", "station_name", "lines", "line_cd", "line_name"),
        ]
        for level in levels {
            try forEachRow(db, """
                SELECT c.\(level.childKey), c.\(level.childName), p.\(level.parentKey), p.\(level.parentName)
                FROM \(level.child.name) c JOIN \(level.parent) p ON p.\(level.parentKey) = c.\(level.parentKey)
                WHERE c.e_status <> \(Self.closed) AND p.e_status = \(Self.closed)\(inScope(.lines, level.child == .lines ? "c.line_cd" : "p.line_cd"))
                ORDER BY c.\(level.childKey)
                """) { row in
                let child: Int64 = row[0], parent: Int64 = row[2]
                try out.found(.openUnderClosed, level.child, String(child)) {
                    level.child == .lines
                        ? """
                            open line \(name(row[1])) belongs to closed company \(parent) \(name(row[3])) \
                            (close the line: \(CommandHint("close", "lines", "\(child)")); \
                            or restore the company: \(CommandHint("restore", "companies", "\(parent)")))
                            """
                        : """
                            open station \(name(row[1])) is on closed line \(parent) \(name(row[3])) \
                            (close the station: \(CommandHint("close", "stations", "\(child)")); move it to an open line: \
                            \(CommandHint("move-stations", "\(child)", "--to-line", "LINE")); \
                            or restore the line: \(CommandHint("restore", "lines", "\(parent)")))
                            """
                }
            }
        }
    }

    func datesOutOfOrder(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT station_cd, station_name, open_ymd, close_ymd FROM stations
            WHERE open_ymd IS NOT NULL AND close_ymd IS NOT NULL AND open_ymd > close_ymd\(changedInScope(.stations, "station_cd"))
            ORDER BY station_cd
            """) { row in
            let station: Int64 = row[0]
            try out.found(.datesOutOfOrder, .stations, String(station)) { """
                \(name(row[1])) opens after it closes (open_ymd \(row[2] as String), close_ymd \(row[3] as String); \
                correct one: \(CommandHint("edit", "stations", "\(station)", "close_ymd=YYYY-MM-DD")))
                """ }
        }
    }

    func coordinatesOutsideJapan(_ db: Database, _ out: FindingOutput) throws {
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
                correct it: \(CommandHint("edit", "lines", "\(line)", "lat=…", "lon=…")))
                """ }
        }
        try forEachRow(db, "SELECT station_cd, station_name, lat, lon FROM stations WHERE \(outside)\(changedInScope(.stations, "station_cd")) ORDER BY station_cd") { row in
            let station: Int64 = row[0]
            try out.found(.coordinatesOutsideJapan, .stations, String(station)) { """
                \(name(row[1])) lies outside Japan (lat \(row[2] as Double), lon \(row[3] as Double); \(bounds); \
                correct it: \(CommandHint("edit", "stations", "\(station)", "lat=…", "lon=…")))
                """ }
        }
    }

    func closedWithoutDate(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT station_cd, station_name FROM stations
            WHERE e_status = \(Self.closed) AND close_ymd IS NULL\(changedInScope(.stations, "station_cd")) ORDER BY station_cd
            """) { row in
            let station: Int64 = row[0]
            try out.found(.closedWithoutDate, .stations, String(station)) { """
                closed station \(name(row[1])) has no close_ymd (the apps show when a station closed; \
                set it: \(CommandHint("edit", "stations", "\(station)", "close_ymd=YYYY-MM-DD")))
                """ }
        }
    }

    /// A connection of an open line with a closed end or an end on another line, kept from the
    /// pass of `connection-too-long` until its rules' turn, with the names their words need (a
    /// name read again for each of tens of thousands of such findings is what this spares).
    struct OddEnds {
        let line: Int64, first: Int64, second: Int64
        let firstClosed: Bool, secondClosed: Bool
        /// The end's own line, where it is not the connection's.
        let firstLine: Int64?, secondLine: Int64?
        let lineName: String?, firstName: String, secondName: String
    }

    /// One pass over the connections in key order: each too long is handed to `tooLong` (when
    /// given), and those of an open line with a closed end or an end on another line are
    /// returned when `collectingOddEnds`.
    func connections(_ db: Database, tooLong: FindingOutput?, collectingOddEnds: Bool) throws -> [OddEnds] {
        var oddEnds: [OddEnds] = []
        // In scope, the scope's keys drive (CROSS JOIN), in their own order: left to choose,
        // SQLite reads every connection in key order to spare a sort and probes the scope with
        // each, reading the whole table for a small import's few connections.
        let (connections, order) = scope == nil
            ? ("connections c", "c")
            : ("\(CheckScope.connections) k CROSS JOIN connections c USING (line_cd, station_cd1, station_cd2)", "k")
        // Read column by column, the names only for a finding: decoding every row's thirteen values
        // as a GRDB row costs more than the join itself.
        let sql = """
            SELECT c.line_cd, c.station_cd1, c.station_cd2, l.e_status,
                   a.lat, a.lon, a.e_status, b.lat, b.lon, b.e_status,
                   l.line_name, a.station_name, b.station_name, a.line_cd, b.line_cd
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
                        \(lineName(text(10))): \(name(text(11) ?? "")) – \(name(text(12) ?? "")) is \(Self.kilometres(kilometres, over: limits.connectionKilometres)) km long \
                        (limit \(Self.kilometres(limits.connectionKilometres)) km; \
                        if they are not neighbours: \(CommandHint("disconnect", "\(line)", "\(first)", "\(second)")); \
                        a real long edge, such as a tunnel under a strait: waive it)
                        """ }
                }
            }
            guard collectingOddEnds, sqlite3_column_type(row, 3) != SQLITE_NULL, sqlite3_column_int64(row, 3) != Int64(Self.closed) else { return }
            let firstClosed = sqlite3_column_int64(row, 6) == Int64(Self.closed), secondClosed = sqlite3_column_int64(row, 9) == Int64(Self.closed)
            func otherLine(_ column: Int32) -> Int64? {
                let own = sqlite3_column_int64(row, column)
                return sqlite3_column_type(row, column) == SQLITE_NULL || own == line ? nil : own
            }
            let firstLine = otherLine(13), secondLine = otherLine(14)
            if firstClosed || secondClosed || firstLine != nil || secondLine != nil {
                oddEnds.append(OddEnds(line: line, first: first, second: second, firstClosed: firstClosed, secondClosed: secondClosed,
                                       firstLine: firstLine, secondLine: secondLine,
                                       lineName: text(10), firstName: text(11) ?? "", secondName: text(12) ?? ""))
            }
        }
        return oddEnds
    }

    /// A connection of an open line whose end the master puts on another line: the apps draw
    /// the line through a station that is not on it (a plan that moved stations and not the
    /// connections between them, or a revert that put back only one of the two).
    func connectionsOffTheirLines(_ oddEnds: [OddEnds], _ out: FindingOutput) throws {
        for edge in oddEnds where edge.firstLine != nil || edge.secondLine != nil {
            let (line, first, second) = (edge.line, edge.first, edge.second)
            try out.found(.connectionOffItsLine, .connections, "\(line)/\(first)/\(second)") {
                let ends = [(first, edge.firstName, edge.firstLine), (second, edge.secondName, edge.secondLine)]
                    .compactMap { code, name, other in other.map { "\(code) \(self.name(name)) is on line \($0)" } }
                return """
                    line \(line) \(lineName(edge.lineName)): \(name(edge.firstName)) – \(name(edge.secondName)), but \(ends.joined(separator: " and ")) \
                    (remove it: \(CommandHint("disconnect", "\(line)", "\(first)", "\(second)")); or move the station onto the line)
                    """
            }
        }
    }

    func connectionsToClosedStations(_ oddEnds: [OddEnds], _ out: FindingOutput) throws {
        for edge in oddEnds where edge.firstClosed || edge.secondClosed {
            let (line, first, second) = (edge.line, edge.first, edge.second)
            try out.found(.connectionToClosedStation, .connections, "\(line)/\(first)/\(second)") {
                let ends = [(first, edge.firstName, edge.firstClosed), (second, edge.secondName, edge.secondClosed)]
                    .filter(\.2).map { "\($0.0) \(name($0.1))" }
                return """
                    open line \(lineName(edge.lineName)): \(name(edge.firstName)) – \(name(edge.secondName)) \
                    runs to closed \(ends.joined(separator: " and ")) (remove it: \(CommandHint("disconnect", "\(line)", "\(first)", "\(second)")); \
                    or restore the station)
                    """
            }
        }
    }

    func lineName(_ text: String?) -> String { text.map { name($0) } ?? "(no such line)" }

    struct StationMove {
        let station: Int64, name: String, from: (Double, Double), to: (Double, Double), kilometres: Double
    }

    /// The version's stations that moved more than the smaller of the two rules' limits, by code.
    func stationMoves(_ db: Database) throws -> [StationMove] {
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
    func report(_ moves: [StationMove], as rule: CheckRule, _ out: FindingOutput) throws {
        let implausible = CheckLimits.implausibleMoveKilometres
        for move in moves {
            let isImplausible = move.kilometres > implausible
            guard rule == .stationMovedImplausibly ? isImplausible : !isImplausible && move.kilometres > limits.moveKilometres else { continue }
            try out.found(rule, .stations, String(move.station)) {
                let place = """
                    \(name(move.name)) moved \(Self.kilometres(move.kilometres, over: isImplausible ? implausible : limits.moveKilometres)) km in version \(version) \
                    (\(Self.degrees(move.from.0)), \(Self.degrees(move.from.1)) → \(Self.degrees(move.to.0)), \(Self.degrees(move.to.1))
                    """
                return isImplausible
                    ? place + """
                        ; no station moves more than \(Self.kilometres(implausible)) km: a typo in lat or lon? \
                        Fix it: \(CommandHint("edit", "stations", "\(move.station)", "lat=…", "lon=…")); if the station really moved: waive it)
                        """
                    : place + """
                        ; limit \(Self.kilometres(limits.moveKilometres)) km; \
                        if the new place is wrong: \(CommandHint("edit", "stations", "\(move.station)", "lat=…", "lon=…")); if the station really moved: waive it)
                        """
            }
        }
    }

    func kanaNotKatakana(_ db: Database, _ out: FindingOutput) throws {
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
                        expected katakana, ー, ・ and spaces; \(CommandHint("edit", table.name, "\(key)", "\(column)=…")))
                        """
                }
            }
        }
    }

    func groupsDangling(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT s.station_cd, s.station_name, s.station_g_cd FROM stations s
            WHERE s.station_g_cd IS NOT NULL AND NOT EXISTS (SELECT 1 FROM stations g WHERE g.station_cd = s.station_g_cd)\(
                scope == nil ? "" : " AND s.station_cd IN (SELECT station_cd FROM \(CheckScope.groupStations))")
            ORDER BY s.station_cd
            """) { row in
            let station: Int64 = row[0], group: Int64 = row[2]
            try out.found(.groupDangling, .stations, String(station)) { """
                \(name(row[1]))'s station_g_cd \(group) names no station (a group is named after one of its \
                stations; a station alone is its own group: \(CommandHint("edit", "stations", "\(station)", "station_g_cd=\(station)")))
                """ }
        }
    }

    /// One pass over the open stations in line order, the first of each name remembered per
    /// line (a self-join on line and name visits every station of a line once per station). Names
    /// compare as bytes, as SQLite compares text.
    /// The findings come in line order: they are held (by number and name) and listed in key order.
    func duplicateNamesOnLines(_ db: Database, _ out: FindingOutput) throws {
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
                close the one that is wrong: \(CommandHint("close", "stations", "\(duplicate.station)")); or rename it)
                """ }
        }
    }

    /// Each row where a source and the primary both have a value and differ, one finding per
    /// row naming every such column, but a column where the master now has the source's value
    /// (a curator took it). The newest version only: the sources' last imports are the master's now.
    func sourcesDisagreeing(_ db: Database, _ out: FindingOutput) throws {
        guard version == newest, try db.tableExists("source_disagreements") else { return }
        let order = MasterTable.all.enumerated().map { "WHEN '\($1.name)' THEN \($0)" }.joined(separator: " ")
        let found = try Row.fetchAll(db, sql: """
            SELECT table_name, key_id, column_name, source, primary_value, source_value FROM main.source_disagreements
            ORDER BY CASE table_name \(order) END, CAST(key_id AS INTEGER), column_name, source
            """)
        var index = 0
        while index < found.count {
            let tableName: String = found[index][0], key: String = found[index][1]
            var end = index
            while end < found.count, found[end][0] as String == tableName, found[end][1] as String == key { end += 1 }
            defer { index = end }
            guard let table = declared.table(named: tableName), table.keyColumns.count == 1 else { continue }
            var parts: [String] = []
            for row in found[index..<end] {
                let column: String = row[2], source: String = row[3]
                guard table.column(named: column) != nil else { continue }
                let now = try DatabaseValue.fetchOne(db, sql: "SELECT \(column) FROM main.\(table.name) WHERE \(table.keyColumns[0]) = ?",
                                                     arguments: [Int64(key)]) ?? .null
                if now == row[5] as DatabaseValue { continue }
                parts.append("\(column) is \(name((row[4] as DatabaseValue).description)) as the primary has it, \(source) has \(name((row[5] as DatabaseValue).description))")
            }
            guard !parts.isEmpty else { continue }
            try out.found(.sourceDisagrees, table, key) { """
                \(parts.joined(separator: "; ")) (the primary's stands; to take the other: \(CommandHint("edit", table.name, key, "COLUMN=VALUE")); \
                or waive it)
                """ }
        }
    }

    func linesWithoutStations(_ db: Database, _ out: FindingOutput) throws {
        try forEachRow(db, """
            SELECT l.line_cd, l.line_name FROM lines l
            WHERE l.e_status <> \(Self.closed)
            AND NOT EXISTS (SELECT 1 FROM stations s WHERE s.line_cd = l.line_cd AND s.e_status <> \(Self.closed))\(inScope(.lines, "l.line_cd"))
            ORDER BY l.line_cd
            """) { row in
            let line: Int64 = row[0]
            try out.found(.lineWithoutStations, .lines, String(line)) { """
                open line \(name(row[1])) has no open station (the apps list it empty; \
                close it: \(CommandHint("close", "lines", "\(line)")); or add its stations)
                """ }
        }
    }

    /// Rows whose values break their column's CHECK: only rows written before the master had
    /// the constraints (the `checkDomains` migration kept them). Prefectures have no scope and
    /// are few: they are read whole, and their findings always found afresh.
    ///
    /// In scope, a station, line or company is read only if the version changed it, and the
    /// version wrote every row it changed whole, under those CHECKs (`VersionWriter`): none can
    /// be outside, and those tables are not read (as a first version's check spares the rule).
    /// A connection in scope may be one the version did not write (it touches a changed station).
    func valuesOutsideDomain(_ db: Database, _ out: FindingOutput) throws {
        for table in declared.tables where scope == nil || table == .connections || table == .prefectures {
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
                        ? "remove it: \(CommandHint("disconnect", arguments: key.split(separator: "/").map(String.init)))"
                        : "mend it: \(CommandHint("edit", table.name, key, "\(outsideColumns.first?.name ?? "column")=…"))"
                    return "\(values.joined(separator: "; ")); \(mend)"
                }
            }
        }
    }
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
