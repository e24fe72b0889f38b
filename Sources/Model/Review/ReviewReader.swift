import Foundation
import GRDB
import StationCheck
import StationDelta
import StationHistory
import StationLog
import StationSchema
import StationSupport
import StationWeights

/// Reads one version's rows, changes and pins for a review.
package struct ReviewReader {
    package let version: Int
    package let newest: Int
    /// The tables whose columns the changes are read with.
    package let declared: DeclaredSchema

    func state(_ table: MasterTable, version: Int, keys: String? = nil) -> String {
        "(\(VersionedState(table: declared[table], version: version, isNewest: version == newest).select(restrictedTo: keys)))"
    }

    package func network(_ db: Database, limit: Int) throws -> NetworkDrawing {
        var drawing = NetworkDrawing(limit: limit)
        // A past version's states are unions over the history: joined as subqueries they are
        // scanned once per connection (minutes at 1M), so their places are keyed temp tables.
        var places = state(.stations, version: version), lines = state(.lines, version: version)
        if version != newest {
            try db.execute(sql: """
                DROP TABLE IF EXISTS temp.review_places; DROP TABLE IF EXISTS temp.review_lines;
                CREATE TEMP TABLE review_places (station_cd INTEGER PRIMARY KEY, lat REAL, lon REAL);
                INSERT INTO temp.review_places SELECT station_cd, lat, lon FROM \(places);
                CREATE TEMP TABLE review_lines (line_cd INTEGER PRIMARY KEY, e_status INTEGER);
                INSERT INTO temp.review_lines SELECT line_cd, e_status FROM \(lines);
                """)
            places = "temp.review_places"; lines = "temp.review_lines"
        }
        defer { try? db.execute(sql: "DROP TABLE IF EXISTS temp.review_places; DROP TABLE IF EXISTS temp.review_lines") }
        let rows = try Row.fetchCursor(db, sql: """
            SELECT a.lon, a.lat, b.lon, b.lat FROM \(state(.connections, version: version)) c
            JOIN \(lines) l ON l.line_cd = c.line_cd
            JOIN \(places) a ON a.station_cd = c.station_cd1
            JOIN \(places) b ON b.station_cd = c.station_cd2
            WHERE l.e_status <> \(MasterTable.closedStatus)
              AND a.lon IS NOT NULL AND a.lat IS NOT NULL AND b.lon IS NOT NULL AND b.lat IS NOT NULL
            """)
        while let row = try rows.next() {
            drawing.add(NetworkSegment(fromLongitude: row[0], fromLatitude: row[1], toLongitude: row[2], toLatitude: row[3]))
        }
        return drawing
    }

    /// Names of lines and companies before and at the version, for words like `11415 JR北陸本線`.
    func names(_ db: Database, _ table: MasterTable, key: String, name: String, at version: Int) throws -> [Int64: String] {
        Dictionary(try Row.fetchAll(db, sql: "SELECT \(key), \(name) FROM \(state(table, version: version))").map { ($0[0] as Int64, $0[1] as String) },
                   uniquingKeysWith: { a, _ in a })
    }

    func lineOperators(_ db: Database, at version: Int) throws -> [Int64: Int64] {
        Dictionary(try Row.fetchAll(db, sql: "SELECT line_cd, company_cd FROM \(state(.lines, version: version))").map { ($0[0] as Int64, $0[1] as Int64) },
                   uniquingKeysWith: { a, _ in a })
    }

    /// The version's changes, kind by kind, never a table of them in memory: each kind is
    /// counted (the summary's counts); a kind of no more than `changesPerKind` is described
    /// whole, in key order, listed and marked; a larger one lists its first `listedBeyond` as the
    /// log recorded them, and a station's is drawn as density from its place alone. A station's
    /// update is always described, streamed in key order: what it changed decides its map kind.
    package func changes(_ db: Database, counts: [String: [String: Int]], limits: ReviewLimits) throws -> ReviewChanges {
        let describer = try ReviewChangeWords(reader: self, db)
        var gathering = ChangeGathering(limits: limits)
        for (tableIndex, table) in declared.tables.enumerated() {
            for kind in Update.Kind.allCases where kind != .duplicate {
                let count = counts[table.name]?[kind.rawValue] ?? 0
                guard count > 0 else { continue }
                gathering.changes.counts[table.name, default: [:]][kind] = count
                let whole = count <= limits.changesPerKind
                let listing = whole ? count : limits.listedBeyond
                if whole || (table == .stations && kind == .update) {
                    // Whole, the count bounds the log's walk: it stops at the last one, not at the
                    // version's end (2M rows for the 1,470 companies of a 1M initial version).
                    try streamChanges(of: table, kind: kind, first: whole ? count : nil, db) { key, old, new in
                        let change = try describer.describe(table, key: key, kind: kind, old: old, new: new)
                        gathering.take(change, table: tableIndex, listing: gathering.listedCount(table.name, kind) < listing)
                    }
                    continue
                }
                try streamChanges(of: table, kind: kind, first: listing, db) { key, old, new in
                    gathering.list(try describer.describe(table, key: key, kind: kind, old: old, new: new), table: tableIndex)
                }
                // The rest of a large kind of stations is a place in the density of its map kind.
                if table == .stations, let mapKind = ReviewChange.MapKind(plainKind: kind) {
                    let grid = try density(ofStations: kind, db)
                    gathering.changes.mapCounts[mapKind, default: 0] += grid.total
                    gathering.changes.density[mapKind] = grid
                }
            }
        }
        let splits = try UpdateLog.splits(db, after: version - 1, through: version)
        if !splits.isEmpty { gathering.changes.counts[MasterTable.stations.name, default: [:]][.duplicate] = splits.count }
        let stationsIndex = MasterTable.all.firstIndex(of: .stations)!
        for split in splits {
            let change = try describer.describe(split, at: version, db)
            gathering.take(change, table: stationsIndex, listing: gathering.listedCount(MasterTable.stations.name, .duplicate)
                < (splits.count <= limits.changesPerKind ? splits.count : limits.listedBeyond))
        }
        return gathering.finished()
    }

    /// The places of the version's stations of `kind` (where they were before a closure), as a
    /// density grid.
    private func density(ofStations kind: Update.Kind, _ db: Database) throws -> DensityGrid {
        var grid = DensityGrid()
        let keys = UpdateLog.changedKeys(of: .stations, in: version, kinds: [kind])
        // The newest version's inserted or updated stations are the master's rows: each
        // log row (one a key and version) looks its station up, cheaper than matching the
        // master against the keys gathered in a temp index.
        let places = try Row.fetchCursor(db, sql: version == newest && kind != .delete ? """
            SELECT m.lat, m.lon FROM (\(keys)) k CROSS JOIN main.stations m ON m.station_cd = CAST(k.key_id AS INTEGER)
            WHERE m.lat IS NOT NULL AND m.lon IS NOT NULL
            """ : """
            SELECT lat, lon FROM \(state(.stations, version: kind == .delete ? version - 1 : version, keys: "(\(keys))"))
            WHERE lat IS NOT NULL AND lon IS NOT NULL
            """)
        while let row = try places.next() { grid.add(latitude: row[0], longitude: row[1]) }
        return grid
    }

    /// Hands `body` each change of `kind` to `table` in the version (its first `first` as the log
    /// recorded them, or all), in key order, with its rows before and at the version: two
    /// cursors over the states, merged by key.
    private func streamChanges(of table: MasterTable, kind: Update.Kind, first: Int?, _ db: Database,
                               _ body: (_ key: String, _ old: Row?, _ new: Row?) throws -> Void) throws {
        try db.execute(sql: """
            DROP TABLE IF EXISTS temp.review_keys;
            CREATE TEMP TABLE review_keys (key_id TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT OR IGNORE INTO temp.review_keys \(UpdateLog.keys(of: table, in: version, kind: kind, first: first));
            """)
        defer { try? db.execute(sql: "DROP TABLE IF EXISTS temp.review_keys") }
        func statement(at version: Int) throws -> Statement {
            try db.makeStatement(sql: "SELECT * FROM \(state(table, version: version, keys: "temp.review_keys")) ORDER BY \(table.keyOrder)")
        }
        let afterStatement = try statement(at: version)
        // Before version 1 there is nothing: no need to ask the history.
        let before = version > 1 ? try Row.fetchCursor(try statement(at: version - 1)) : nil
        let after = try Row.fetchCursor(afterStatement)
        let keyIndexes = table.keyColumns.map { afterStatement.columnNames.firstIndex(of: $0)! }
        func key(_ row: Row) -> [Int64] { keyIndexes.map { row[$0] as Int64 } }
        var old = try before?.next()?.copy(), new = try after.next()?.copy()
        while old != nil || new != nil {
            var pair: (old: Row?, new: Row?)
            if let o = old, let n = new, key(o) == key(n) {
                pair = (o, n)
            } else if let o = old, new == nil || key(o).lexicographicallyPrecedes(key(new!)) {
                pair = (o, nil)
            } else {
                pair = (nil, new)
            }
            if pair.old != nil { old = try before?.next()?.copy() }
            if pair.new != nil { new = try after.next()?.copy() }
            try body((pair.new ?? pair.old)!["key_id"], pair.old, pair.new)
        }
    }

    /// The delta a phone at each older version downloads, measured by writing it (gzip bytes
    /// counted, nothing kept) as `release` writes it: without `BEGIN`/`COMMIT`, which the app
    /// runs around it, so that the page's sizes are the published files'.
    package func deltas(_ db: Database) throws -> [ReviewDelta] {
        guard version > 1 else { return [] }
        let writer = try DeltaWriter.prepare(db, declared, froms: Array(1..<version), to: version, newest: newest)
        defer { try? writer.finish(db) }
        return try (1..<version).map { from in
            let written = try writer.write(db, from: from, gzip: false, transaction: false, into: .stream(TeeSink([])))
            return ReviewDelta(from: from, gzipBytes: written.gzipBytes, statements: written.summary.totalStatements)
        }
    }

    /// The client tables' rows at the version, as the release's manifest counts them.
    package func rowCounts(_ db: Database) throws -> [String: Int] {
        Dictionary(uniqueKeysWithValues: try MasterTable.all.map { table in
            (table.name, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(state(table, version: version))") ?? 0)
        })
    }

    package func openStations(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(state(.stations, version: version)) WHERE e_status <> \(MasterTable.closedStatus)") ?? 0
    }

    /// Where each finding's row is: a station's place, a connection's first station, a line's centre.
    package func places(of findings: [CheckFinding], _ db: Database) throws -> [FindingIdentity: MapPlace] {
        var places: [FindingIdentity: MapPlace] = [:]
        let station = try db.makeStatement(sql: "SELECT lat, lon FROM \(state(.stations, version: version)) WHERE station_cd = ?")
        let line = try db.makeStatement(sql: "SELECT lat, lon FROM \(state(.lines, version: version)) WHERE line_cd = ?")
        for finding in findings {
            let parts = finding.key.split(separator: "/").compactMap { Int64($0) }
            let row: Row?
            switch finding.table {
            case MasterTable.stations.name: row = try parts.first.flatMap { try Row.fetchOne(station, arguments: [$0]) }
            case MasterTable.connections.name: row = parts.count == 3 ? try Row.fetchOne(station, arguments: [parts[1]]) : nil
            case MasterTable.lines.name: row = try parts.first.flatMap { try Row.fetchOne(line, arguments: [$0]) }
            default: row = nil
            }
            if let row, let latitude = row[0] as Double?, let longitude = row[1] as Double? {
                places[finding.identity] = MapPlace(latitude: latitude, longitude: longitude)
            }
        }
        return places
    }

    package func pinMaps(_ db: Database, pins: Int) throws -> [PinMap] {
        let open = try MapGeometry.openPlaces(db, stations: state(.stations, version: version))
        let spreads = MapGeometry.spread(of: open, MapExtent.examples, pins: pins)
        return MapExtent.examples.enumerated().map { index, extent in
            let (inView, top) = MapGeometry.pinsInView(of: open, extent, pins: pins, width: PinMap.width)
            return PinMap(extent: extent, spread: spreads[index], stations: inView, pins: top)
        }
    }

    package static func text(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let number): return String(number)
        case .double(let number): return String(number)
        case .string(let text): return text
        case .blob(let data): return "\(data.count) bytes"
        }
    }

    package static func distance(_ metres: Double) -> String {
        metres < 1000 ? "\(Int(metres.rounded())) m" : String(format: "%.1f km", metres / 1000)
    }
}

/// The review's changes as they are gathered: each listed (up to its kind's share) and drawn, as
/// a marker while its map kind has few, else as a place in that kind's density grid.
private struct ChangeGathering {
    let limits: ReviewLimits
    var changes = ReviewChanges()
    private var listed: [(table: Int, key: KeyOrder, change: ReviewChange)] = []
    private var listedInGroup: [String: Int] = [:]
    private var markersByKind: [ReviewChange.MapKind: [ReviewChange]] = [:]

    init(limits: ReviewLimits) {
        self.limits = limits
    }

    func listedCount(_ table: String, _ kind: Update.Kind) -> Int { listedInGroup["\(table)/\(kind.rawValue)", default: 0] }

    mutating func list(_ change: ReviewChange, table: Int) {
        listed.append((table, KeyOrder(change.key), change))
        listedInGroup["\(change.table)/\(change.kind.rawValue)", default: 0] += 1
    }

    mutating func take(_ change: ReviewChange, table: Int, listing: Bool) {
        if listing { list(change, table: table) }
        draw(change)
    }

    private mutating func draw(_ change: ReviewChange) {
        guard let kind = change.mapKind, let latitude = change.latitude, let longitude = change.longitude else { return }
        changes.mapCounts[kind, default: 0] += 1
        if changes.density[kind] != nil {
            changes.density[kind]!.add(latitude: latitude, longitude: longitude)
        } else if markersByKind[kind, default: []].count < limits.changesPerKind {
            markersByKind[kind, default: []].append(change)
        } else {
            var grid = DensityGrid()
            for marker in markersByKind[kind]! { grid.add(latitude: marker.latitude!, longitude: marker.longitude!) }
            grid.add(latitude: latitude, longitude: longitude)
            changes.density[kind] = grid
            markersByKind[kind] = []
        }
    }

    /// The changes, listed tables in their order, each in key order, a table's splits after its
    /// rows; a split's new station marked as the split (it is new too, which its words say).
    func finished() -> ReviewChanges {
        var changes = changes
        changes.listed = listed.enumerated().sorted { a, b in
            let x = a.element, y = b.element
            let xSplit = x.change.kind == .duplicate, ySplit = y.change.kind == .duplicate
            if x.table != y.table { return x.table < y.table }
            if xSplit != ySplit { return !xSplit }
            if xSplit { return a.offset < b.offset }
            return x.key < y.key
        }.map(\.element.change)
        changes.markers = (markersByKind[.duplicate] ?? []) + ReviewChange.MapKind.allCases.filter { $0 != .duplicate }.flatMap { markersByKind[$0] ?? [] }
        return changes
    }
}
