import Foundation
import GRDB
import StationCheck
import StationDelta
import StationHistory
import StationLog
import StationSchema
import StationSupport
import StationWeights

/// Everything a curator reviews about one version before publishing it: what the review
/// page and its Markdown show (`ReviewPage`, `ReviewMarkdown`).
public struct ReviewReport: Sendable {
    /// The version: number, date, author, memo, changes.
    public var summary: VersionSummary
    /// Open connections at the version: the railways draw Japan.
    public var network: NetworkDrawing
    /// The version's changes: counted, listed and drawn within `limits`.
    public var overview: ReviewChanges
    /// The limits the page was gathered with.
    public var limits: ReviewLimits
    /// Findings the version brought.
    public var introducedFindings: ReviewFindings
    /// Findings the version kept from the one before.
    public var inheritedFindings: ReviewFindings
    /// Splits the version seems to call for and does not record.
    public var suggestions: [SplitSuggestion]
    /// What a phone shows at three extents: the top pins by weight, then distance.
    public var pinMaps: [PinMap]
    /// The most pins a phone draws (the apps' default).
    public var pinCount: Int
    /// The newest version of the master: a release publishes it unless told another.
    public var newest: Int
    /// What a phone at each older version downloads to reach this one.
    public var deltas: [ReviewDelta]
    /// Rows of the full database (a new install or an app update), per table, closed ones included.
    public var fullDatabaseRows: [String: Int]
    /// Of which open stations.
    public var openStations: Int
    /// Where the map puts each introduced finding (by `FindingIdentity`), when its row has a
    /// place: the first `ReviewLimits.findingMarks` of them (`ReviewFindings.leading`).
    public var findingPlaces: [FindingIdentity: MapPlace]

    /// The changes listed in words (every one, unless a group is larger than the limits).
    public var changes: [ReviewChange] { overview.listed }

    /// How many error-level findings no waiver accepts: a release of this version refuses while there are any.
    public var blockingCount: Int { introducedFindings.blockingCount + inheritedFindings.blockingCount }

    /// The first of them, introduced ones first (`ReviewFindings.firstBlockingKept` of each list).
    public var firstBlocking: [CheckFinding] { introducedFindings.firstBlocking + inheritedFindings.firstBlocking }

    /// The splits of the version listed: each copies every phone's records of its old station to its new one.
    public var splits: [ReviewChange] { changes.filter { $0.kind == .duplicate } }

    /// How many splits the version records, listed or not.
    public var splitCount: Int { overview.counts[MasterTable.stations.name]?[.duplicate] ?? 0 }
}

/// A delta as the review measures it: what a phone at `from` downloads.
public struct ReviewDelta: Sendable, Equatable {
    /// The data version the phone is at.
    public var from: Int
    /// What it downloads, in bytes.
    public var gzipBytes: Int
    /// Statements the phone runs.
    public var statements: Int
}

/// A place on the map.
public struct MapPlace: Sendable, Equatable, Hashable {
    /// Degrees.
    public var latitude: Double, longitude: Double
}

/// One change of the version in words, with what the map needs to mark it.
public struct ReviewChange: Sendable, Equatable {
    /// How the map marks a changed station.
    public enum MapKind: String, Sendable, CaseIterable {
        /// `transferred`: the station passed to a line of another operator (its code kept).
        case new, closed, restored, moved, renamed, transferred, updated, duplicate
    }

    /// The master table of the row.
    public var table: String
    /// The row's key as in `updates.key_id`.
    public var key: String
    /// What the version did to it.
    public var kind: Update.Kind
    /// `八戸 (JR八戸線)`: the row's name, with its line for a station.
    public var title: String
    /// `line_cd 11415 JR北陸本線 → 99426 IRいしかわ鉄道線; moved 1.2 km`.
    public var words: String
    /// For a station (or a split's new station): its code, map kind and place.
    public var station: Int64?
    /// How the map marks it; nil for a row that is not drawn.
    public var mapKind: MapKind?
    /// Where the map marks it.
    public var latitude: Double?, longitude: Double?
    /// Where a moved station was, or a split's old station is.
    public var fromLatitude: Double?, fromLongitude: Double?
}

/// One open connection on the map, from station to station.
public struct NetworkSegment: Sendable, Equatable {
    /// The two ends, in degrees.
    public var fromLongitude: Double, fromLatitude: Double, toLongitude: Double, toLatitude: Double
}

/// The pins a phone shows at one extent, with the weights of the version.
public struct PinMap: Sendable {
    /// How wide a pin map is drawn, in pixels (its height follows the extent).
    public static let width = 300.0

    /// The extent drawn.
    public var extent: MapExtent
    /// How the top pins spread over it.
    public var spread: MapSpread
    /// Open stations in view `[lat, lon]`, one per pixel of the map, and the top pins
    /// `[lat, lon, weight]` in the client's order.
    public var stations: [[Double]]
    /// The top pins, `[lat, lon, weight]`, in the client's order.
    public var pins: [[Double]]
}

/// A version `review` cannot show.
public enum ReviewError: Error, LocalizedError, Equatable {
    case noVersions
    case noSuchVersion(requested: Int, newest: Int)

    public var errorDescription: String? {
        switch self {
        case .noVersions:
            return "the master has no version to review yet (import or apply something first)"
        case let .noSuchVersion(requested, newest):
            return MissingVersion.message(requested: requested, newest: newest)
        }
    }
}

extension MasterDatabase {
    /// Reads what `review` shows of `version` (default: the newest), in one read.
    public func review(version requested: Int? = nil, pins: Int = 150, limits: ReviewLimits = ReviewLimits()) throws -> ReviewReport {
        // One state from the version's number to its last pin, on two connections: the newest
        // version's network, then its rules a pass at a time on a twin, on the second core, while
        // this one reads the counts, the changes, the suggestions and the pins, then takes the
        // passes still left. Not `read`: a past version's findings rebuild the version before in
        // temp tables, which only this connection may write.
        let checks = ReviewCheckQueue()
        return try readingOneState(alongside: { db -> TwinReading? in
            let newest = try Self.dataVersion(db)
            let version = requested ?? newest
            guard newest > 0, version == newest else { return nil }
            let network = try ReviewReader(version: version, newest: newest).network(db, limit: limits.networkSegments)
            guard try version == 1 || RecordedFindings.isRecordedBefore(version - 1, db) else { return TwinReading(findings: nil, network: network) }
            let findings = try Self.reviewFindings(db, version: version, newest: newest, limits: limits) { checks.next() }
            return TwinReading(findings: findings, network: network)
        }, handing: { db, twin in
            let newest = try Self.dataVersion(db)
            guard newest > 0 else { throw ReviewError.noVersions }
            let version = requested ?? newest
            guard (1...newest).contains(version) else { throw ReviewError.noSuchVersion(requested: version, newest: newest) }
            let summary = try Self.versions(db, only: version).first!
            let reader = ReviewReader(version: version, newest: newest)
            let overview = try reader.changes(db, counts: summary.counts, limits: limits)
            let suggestions = try Self.suggestSplits(db, version: version)
            let pinMaps = try reader.pinMaps(db, pins: pins)
            let openStations = try reader.openStations(db), fullDatabaseRows = try reader.rowCounts(db)
            let deltas = try reader.deltas(db)
            // With a twin at work on the rules, the passes it has not taken yet one at a time;
            // alone, all of them in one pass (an older version's state is rebuilt for each).
            var findings = try Self.reviewFindings(db, version: version, newest: newest, limits: limits,
                                                   nextPass: twin == nil || version != newest ? { checks.rest() } : { checks.next() })
            let twinReading = try twin?.wait()
            let network = try twinReading?.network ?? reader.network(db, limit: limits.networkSegments)
            if let twinFindings = twinReading?.findings {
                findings.merge(twinFindings)
            } else {
                // The twin checked nothing: whatever it left untaken is this connection's.
                findings.merge(try Self.reviewFindings(db, version: version, newest: newest, limits: limits) { checks.rest() })
            }
            let (introduced, inherited) = findings.joined(limits: limits)
            return ReviewReport(
                summary: summary, network: network, overview: overview, limits: limits,
                introducedFindings: introduced,
                inheritedFindings: inherited,
                suggestions: suggestions,
                pinMaps: pinMaps, pinCount: pins,
                newest: newest, deltas: deltas, fullDatabaseRows: fullDatabaseRows, openStations: openStations,
                findingPlaces: try reader.places(of: introduced.leading, db))
        })
    }

    /// What the twin connection reads of the newest version: its network, and its findings when
    /// the version before's are kept (else they need temp tables, which only the main connection
    /// may write).
    private struct TwinReading: Sendable {
        var findings: ReviewFindingParts?
        var network: NetworkDrawing
    }

    /// The version's findings of the passes `nextPass` hands out until it is empty, as they
    /// stream from the rules, told into those it brought and those the version before had: for
    /// the newest version, as the import recorded them; else gathered in a temp table first,
    /// from the version before rebuilt.
    private static func reviewFindings(_ db: Database, version: Int, newest: Int, limits: ReviewLimits,
                                       nextPass: () -> Set<CheckRule>?) throws -> ReviewFindingParts {
        guard var pass = nextPass() else { return ReviewFindingParts() }
        let waived = try Waivers.identities(db)
        let before: FindingIdentityTable?
        if version > 1, version == newest, try RecordedFindings.isRecordedBefore(version - 1, db) {
            before = try FindingIdentityTable.recordedBefore(db)
        } else {
            before = version > 1
                ? try FindingIdentityTable.gathered(db, name: "review_findings_before", from: DataChecker(version: version - 1, newest: newest, limits: CheckLimits()))
                : nil
        }
        defer { try? before?.drop() }
        var parts = ReviewFindingParts()
        let checker = DataChecker(version: version, newest: newest, limits: CheckLimits())
        while true {
            try checker.forEachFinding(db, rules: pass) { row, message in
                let isWaived = Waivers.accept(row, among: waived)
                if try before?.contains(row) == true {
                    parts.inherited[row.rule, default: ReviewFindings(limits: limits)].add(row, waived: isWaived, message: message)
                } else {
                    parts.introduced[row.rule, default: ReviewFindings(limits: limits)].add(row, waived: isWaived, message: message)
                }
            }
            guard let next = nextPass() else { return parts }
            pass = next
        }
    }
}

/// Reads one version's rows, changes and pins for a review.
package struct ReviewReader {
    package let version: Int
    package let newest: Int

    fileprivate func state(_ table: MasterTable, version: Int, keys: String? = nil) -> String {
        "(\(VersionedState(table: table, version: version, isNewest: version == newest).select(restrictedTo: keys)))"
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
    fileprivate func names(_ db: Database, _ table: MasterTable, key: String, name: String, at version: Int) throws -> [Int64: String] {
        Dictionary(try Row.fetchAll(db, sql: "SELECT \(key), \(name) FROM \(state(table, version: version))").map { ($0[0] as Int64, $0[1] as String) },
                   uniquingKeysWith: { a, _ in a })
    }

    fileprivate func lineOperators(_ db: Database, at version: Int) throws -> [Int64: Int64] {
        Dictionary(try Row.fetchAll(db, sql: "SELECT line_cd, company_cd FROM \(state(.lines, version: version))").map { ($0[0] as Int64, $0[1] as Int64) },
                   uniquingKeysWith: { a, _ in a })
    }

    /// The version's changes, kind by kind, never a table of them in memory: each kind is
    /// counted (the summary's counts); a kind of no more than `changesPerKind` is described
    /// whole, in key order, listed and marked; a larger one lists its first `listedBeyond` as the
    /// log recorded them, and a station's is drawn as density from its place alone. A station's
    /// update is always described, streamed in key order: what it changed decides its map kind.
    package func changes(_ db: Database, counts: [String: [String: Int]], limits: ReviewLimits) throws -> ReviewChanges {
        let describer = try ChangeWords(reader: self, db)
        var gathered = ReviewChanges()
        var listed: [(table: Int, key: KeyOrder, change: ReviewChange)] = []
        var listedInGroup: [String: Int] = [:]
        var markersByKind: [ReviewChange.MapKind: [ReviewChange]] = [:]

        func draw(_ change: ReviewChange) {
            guard let kind = change.mapKind, let latitude = change.latitude, let longitude = change.longitude else { return }
            gathered.mapCounts[kind, default: 0] += 1
            if gathered.density[kind] != nil {
                gathered.density[kind]!.add(latitude: latitude, longitude: longitude)
            } else if markersByKind[kind, default: []].count < limits.changesPerKind {
                markersByKind[kind, default: []].append(change)
            } else {
                var grid = DensityGrid()
                for marker in markersByKind[kind]! { grid.add(latitude: marker.latitude!, longitude: marker.longitude!) }
                grid.add(latitude: latitude, longitude: longitude)
                gathered.density[kind] = grid
                markersByKind[kind] = []
            }
        }
        func list(_ change: ReviewChange, table: Int) {
            listed.append((table, KeyOrder(change.key), change))
            listedInGroup["\(change.table)/\(change.kind.rawValue)", default: 0] += 1
        }
        func take(_ change: ReviewChange, table: Int, listing: Bool) {
            if listing { list(change, table: table) }
            draw(change)
        }

        for (tableIndex, table) in MasterTable.all.enumerated() {
            for kind in Update.Kind.allCases where kind != .duplicate {
                let count = counts[table.name]?[kind.rawValue] ?? 0
                guard count > 0 else { continue }
                gathered.counts[table.name, default: [:]][kind] = count
                let whole = count <= limits.changesPerKind
                let listing = whole ? count : limits.listedBeyond
                if whole || (table == .stations && kind == .update) {
                    // Whole, the count bounds the log's walk: it stops at the last one, not at the
                    // version's end (2M rows for the 1,470 companies of a 1M initial version).
                    try streamChanges(of: table, kind: kind, first: whole ? count : nil, db) { key, old, new in
                        let change = try describer.describe(table, key: key, kind: kind, old: old, new: new)
                        let listsIt = listedInGroup["\(table.name)/\(kind.rawValue)", default: 0] < listing
                        take(change, table: tableIndex, listing: listsIt)
                    }
                    continue
                }
                try streamChanges(of: table, kind: kind, first: listing, db) { key, old, new in
                    list(try describer.describe(table, key: key, kind: kind, old: old, new: new), table: tableIndex)
                }
                // The rest of a large kind of stations is a place in the density of its map kind.
                if table == .stations, let mapKind = ReviewChange.MapKind(plainKind: kind) {
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
                    gathered.mapCounts[mapKind, default: 0] += grid.total
                    gathered.density[mapKind] = grid
                }
            }
        }
        let splits = try UpdateLog.splits(db, after: version - 1, through: version)
        if !splits.isEmpty { gathered.counts[MasterTable.stations.name, default: [:]][.duplicate] = splits.count }
        let stationsIndex = MasterTable.all.firstIndex(of: .stations)!
        for split in splits {
            let change = try describer.describe(split, at: version, db)
            take(change, table: stationsIndex, listing: listedInGroup["stations/\(Update.Kind.duplicate.rawValue)", default: 0]
                < (splits.count <= limits.changesPerKind ? splits.count : limits.listedBeyond))
        }
        // Tables in their order, each in key order; a table's splits after its rows.
        gathered.listed = listed.enumerated().sorted { a, b in
            let x = a.element, y = b.element
            let xSplit = x.change.kind == .duplicate, ySplit = y.change.kind == .duplicate
            if x.table != y.table { return x.table < y.table }
            if xSplit != ySplit { return !xSplit }
            if xSplit { return a.offset < b.offset }
            return x.key < y.key
        }.map(\.element.change)
        // A split's new station is marked as the split (it is new too, which its words say).
        gathered.markers = (markersByKind[.duplicate] ?? []) + ReviewChange.MapKind.allCases.filter { $0 != .duplicate }.flatMap { markersByKind[$0] ?? [] }
        return gathered
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
        let writer = try DeltaWriter.prepare(db, froms: Array(1..<version), to: version, newest: newest)
        defer { try? writer.finish(db) }
        return try (1..<version).map { from in
            let written = try MasterDatabase.writeDelta(db, from: from, with: writer, gzip: false, transaction: false, into: .stream(TeeSink([])))
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
        let open = try MasterDatabase.openPlaces(db, stations: state(.stations, version: version))
        let spreads = MasterDatabase.mapSpread(of: open, MapExtent.examples, pins: pins)
        return MapExtent.examples.enumerated().map { index, extent in
            let (inView, top) = MasterDatabase.pinsInView(of: open, extent, pins: pins, width: PinMap.width)
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

extension ReviewChange.MapKind {
    /// The map kind an insert, removal or restore always has; nil for an update, whose kind
    /// depends on what it changed.
    init?(plainKind kind: Update.Kind) {
        switch kind {
        case .insert: self = .new
        case .delete: self = .closed
        case .restore: self = .restored
        default: return nil
        }
    }
}

/// Puts one change of a version in words for the review, with its place and map kind; the
/// names it cites (lines, operators, stations) as they were before and at the version.
struct ChangeWords {
    private let reader: ReviewReader
    private let lineNames: [Int64: String], companyNames: [Int64: String]
    private let lineNamesBefore: [Int64: String], companyNamesBefore: [Int64: String]
    private let lineCompanies: [Int64: Int64], lineCompaniesBefore: [Int64: Int64]
    private let stationNameStatement: Statement
    /// Looked up as the changes name them: the names of all stations are 1M strings at scale.
    private final class StationNames { var known: [Int64: String?] = [:] }
    private let stationNames = StationNames()

    init(reader: ReviewReader, _ db: Database) throws {
        self.reader = reader
        lineNames = try reader.names(db, .lines, key: "line_cd", name: "line_name", at: reader.version)
        companyNames = try reader.names(db, .companies, key: "company_cd", name: "company_name", at: reader.version)
        lineNamesBefore = try reader.names(db, .lines, key: "line_cd", name: "line_name", at: reader.version - 1)
        companyNamesBefore = try reader.names(db, .companies, key: "company_cd", name: "company_name", at: reader.version - 1)
        lineCompanies = try reader.lineOperators(db, at: reader.version)
        lineCompaniesBefore = try reader.lineOperators(db, at: reader.version - 1)
        stationNameStatement = try db.makeStatement(sql: "SELECT station_name FROM stations WHERE station_cd = ?")
    }

    private func stationName(_ code: Int64?) throws -> String {
        guard let code else { return "?" }
        if let known = stationNames.known[code] { return known ?? "?" }
        let name = try String.fetchOne(stationNameStatement, arguments: [code])
        stationNames.known[code] = name
        return name ?? "?"
    }

    private func named(_ column: String, _ value: DatabaseValue, before: Bool) throws -> String {
        guard let code = Int64.fromDatabaseValue(value) else { return ReviewReader.text(value) }
        switch column {
        case "line_cd": return "\(code) \((before ? lineNamesBefore[code] : nil) ?? lineNames[code] ?? "?")"
        case "company_cd": return "\(code) \((before ? companyNamesBefore[code] : nil) ?? companyNames[code] ?? "?")"
        case "station_g_cd", "station_cd1", "station_cd2": return "\(code) \(try stationName(code))"
        default: return ReviewReader.text(value)
        }
    }

    /// One row's change: `old` its state before the version, `new` at it (nil where it has none).
    func describe(_ table: MasterTable, key: String, kind: Update.Kind, old: Row?, new: Row?) throws -> ReviewChange {
        let row = (new ?? old)!
        var change = ReviewChange(table: table.name, key: key, kind: kind, title: "", words: "")
        switch table.name {
        case "stations":
            let name: String = row["station_name"]
            change.title = "\(name) (\(lineNames[row["line_cd"]] ?? "?"))"
            change.station = row["station_cd"]
            change.latitude = row["lat"]; change.longitude = row["lon"]
        case "lines": change.title = row["line_name"]
        case "companies": change.title = row["company_name"]
        case "prefectures": change.title = row["pref_name"]
        default:
            change.title = "\(lineNames[row["line_cd"]] ?? "?"): \(try stationName(row["station_cd1"])) – \(try stationName(row["station_cd2"]))"
        }
        var words: [String] = []
        switch kind {
        case .insert:
            words.append(table == .connections ? "connected" : "new")
            change.mapKind = .new
        case .delete:
            words.append(table == .connections ? "disconnected" : "closed")
            change.mapKind = .closed
        case .restore:
            words.append("restored")
            change.mapKind = .restored
        default:
            change.mapKind = .updated
        }
        if let old, let new, kind != .insert {
            var moved: Double?
            for column in table.nonKeyColumns.map(\.name) where column != "e_status" {
                let a = old[column] as DatabaseValue, b = new[column] as DatabaseValue
                if column == "lat" || column == "lon" {
                    if let x = Double.fromDatabaseValue(a), let y = Double.fromDatabaseValue(b),
                       MasterTable.isSameCoordinate(x, y) { continue }
                }
                if a == b { continue }
                if (column == "lat" || column == "lon") && table == .stations {
                    if let la: Double = old["lat"], let lo: Double = old["lon"], let na: Double = new["lat"], let no: Double = new["lon"] {
                        moved = Geography.metres(latitude: la, longitude: lo, toLatitude: na, longitude: no)
                        change.fromLatitude = la; change.fromLongitude = lo
                    }
                    continue
                }
                words.append("\(column) \(try named(column, a, before: true)) → \(try named(column, b, before: false))")
                if column == "station_name", change.mapKind == .updated { change.mapKind = .renamed }
                if column == "line_cd", table == .stations, change.mapKind == .updated || change.mapKind == .renamed,
                   let from = Int64.fromDatabaseValue(a), let to = Int64.fromDatabaseValue(b),
                   lineCompaniesBefore[from] != lineCompanies[to] {
                    change.mapKind = .transferred
                }
            }
            if let moved {
                words.append("moved \(ReviewReader.distance(moved))")
                if change.mapKind == .updated || change.mapKind == .renamed { change.mapKind = .moved }
            }
        }
        change.words = words.joined(separator: "; ")
        if table != .stations { change.mapKind = nil }
        return change
    }

    /// A split the version recorded: drawn at its new station, with an arrow from the old.
    func describe(_ split: StationSplit, at version: Int, _ db: Database) throws -> ReviewChange {
        let ends = try Row.fetchAll(db, sql: """
            SELECT s.station_cd, s.station_name, s.lat, s.lon, s.line_cd FROM \(reader.state(.stations, version: version)) s
            WHERE s.station_cd IN (?, ?)
            """, arguments: [split.old, split.new])
        let old = ends.first { $0["station_cd"] == split.old }, new = ends.first { $0["station_cd"] == split.new }
        func describe(_ row: Row?, _ code: Int64) -> String {
            guard let row else { return "\(code)" }
            return "\(code) \(row["station_name"] as String) (\(lineNames[row["line_cd"]] ?? "?"))"
        }
        return ReviewChange(
            table: "stations", key: "\(split.old) → \(split.new)", kind: .duplicate,
            title: describe(new, split.new),
            words: "DUPLICATE \(describe(old, split.old)) → \(describe(new, split.new)): visits of the old station count for the new one",
            station: split.new, mapKind: .duplicate,
            latitude: new?["lat"], longitude: new?["lon"], fromLatitude: old?["lat"], fromLongitude: old?["lon"])
    }
}
