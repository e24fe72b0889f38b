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
    public var network: [NetworkSegment]
    /// Every change of the version, in words, with its place on the map.
    public var changes: [ReviewChange]
    /// Findings the version brought, then the ones it inherited.
    public var introducedFindings: [CheckFinding]
    /// Findings the version kept from the one before.
    public var inheritedFindings: [CheckFinding]
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
    /// Where the map puts each introduced finding (by `FindingIdentity`), when its row has a place.
    public var findingPlaces: [FindingIdentity: MapPlace]

    /// Error-level findings no waiver accepts: a release of this version refuses while there are any.
    public var blockingFindings: [CheckFinding] {
        (introducedFindings + inheritedFindings).filter { $0.severity == .error && !$0.waived }
    }

    /// The splits of the version: each copies every phone's records of its old station to its new one.
    public var splits: [ReviewChange] { changes.filter { $0.kind == .duplicate } }
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
    public func review(version requested: Int? = nil, pins: Int = 150) throws -> ReviewReport {
        // One state from the version's number to its last pin. Not `read`: the version before
        // is rebuilt in temp tables for its findings.
        try readingOneState { db in
            let newest = try Self.dataVersion(db)
            guard newest > 0 else { throw ReviewError.noVersions }
            let version = requested ?? newest
            guard (1...newest).contains(version) else { throw ReviewError.noSuchVersion(requested: version, newest: newest) }
            let summary = try Self.versions(db).first { $0.version == version }!
            let reader = ReviewReader(version: version, newest: newest)
            let findings = try DataChecker(version: version, newest: newest, limits: CheckLimits()).report(db).findings
            let before = version > 1
                ? Set(try DataChecker(version: version - 1, newest: newest, limits: CheckLimits()).findings(db).map(\.identity)) : []
            let introduced = findings.filter { !before.contains($0.identity) }
            return ReviewReport(
                summary: summary,
                network: try reader.network(db),
                changes: try reader.changes(db),
                introducedFindings: introduced,
                inheritedFindings: findings.filter { before.contains($0.identity) },
                suggestions: try Self.suggestSplits(db, version: version),
                pinMaps: try reader.pinMaps(db, pins: pins), pinCount: pins,
                newest: newest, deltas: try reader.deltas(db), fullDatabaseRows: try reader.rowCounts(db), openStations: try reader.openStations(db),
                findingPlaces: try reader.places(of: introduced, db))
        }
    }
}

/// Reads one version's rows, changes and pins for a review.
package struct ReviewReader {
    package let version: Int
    package let newest: Int

    private func state(_ table: MasterTable, version: Int, keys: String? = nil) -> String {
        "(\(VersionedState(table: table, version: version, isNewest: version == newest).select(restrictedTo: keys)))"
    }

    package func network(_ db: Database) throws -> [NetworkSegment] {
        // A cursor, not `fetchAll`: at 1M stations a GRDB row per segment weighed hundreds of MiB.
        var segments: [NetworkSegment] = []
        let rows = try Row.fetchCursor(db, sql: """
            SELECT a.lon, a.lat, b.lon, b.lat FROM \(state(.connections, version: version)) c
            JOIN \(state(.lines, version: version)) l ON l.line_cd = c.line_cd
            JOIN \(state(.stations, version: version)) a ON a.station_cd = c.station_cd1
            JOIN \(state(.stations, version: version)) b ON b.station_cd = c.station_cd2
            WHERE l.e_status <> \(MasterTable.closedStatus)
              AND a.lon IS NOT NULL AND a.lat IS NOT NULL AND b.lon IS NOT NULL AND b.lat IS NOT NULL
            """)
        while let row = try rows.next() {
            segments.append(NetworkSegment(fromLongitude: row[0], fromLatitude: row[1], toLongitude: row[2], toLatitude: row[3]))
        }
        return segments
    }

    /// Names of lines and companies before and at the version, for words like `11415 JR北陸本線`.
    private func names(_ db: Database, _ table: MasterTable, key: String, name: String, at version: Int) throws -> [Int64: String] {
        Dictionary(try Row.fetchAll(db, sql: "SELECT \(key), \(name) FROM \(state(table, version: version))").map { ($0[0] as Int64, $0[1] as String) },
                   uniquingKeysWith: { a, _ in a })
    }

    private func lineOperators(_ db: Database, at version: Int) throws -> [Int64: Int64] {
        Dictionary(try Row.fetchAll(db, sql: "SELECT line_cd, company_cd FROM \(state(.lines, version: version))").map { ($0[0] as Int64, $0[1] as Int64) },
                   uniquingKeysWith: { a, _ in a })
    }

    package func changes(_ db: Database) throws -> [ReviewChange] {
        let lineNames = try names(db, .lines, key: "line_cd", name: "line_name", at: version)
        let companyNames = try names(db, .companies, key: "company_cd", name: "company_name", at: version)
        let lineNamesBefore = try names(db, .lines, key: "line_cd", name: "line_name", at: version - 1)
        let companyNamesBefore = try names(db, .companies, key: "company_cd", name: "company_name", at: version - 1)
        let lineCompanies = try lineOperators(db, at: version), lineCompaniesBefore = try lineOperators(db, at: version - 1)
        // Looked up as the changes name them: the names of all stations are 1M strings at scale.
        let stationNameStatement = try db.cachedStatement(sql: "SELECT station_name FROM stations WHERE station_cd = ?")
        var stationNames: [Int64: String?] = [:]
        func stationName(_ code: Int64?) throws -> String {
            guard let code else { return "?" }
            if let known = stationNames[code] { return known ?? "?" }
            let name = try String.fetchOne(stationNameStatement, arguments: [code])
            stationNames[code] = name
            return name ?? "?"
        }
        func named(_ column: String, _ value: DatabaseValue, before: Bool) throws -> String {
            guard let code = Int64.fromDatabaseValue(value) else { return Self.text(value) }
            switch column {
            case "line_cd": return "\(code) \((before ? lineNamesBefore[code] : nil) ?? lineNames[code] ?? "?")"
            case "company_cd": return "\(code) \((before ? companyNamesBefore[code] : nil) ?? companyNames[code] ?? "?")"
            case "station_g_cd", "station_cd1", "station_cd2": return "\(code) \(try stationName(code))"
            default: return Self.text(value)
            }
        }

        var changes: [ReviewChange] = []
        for table in MasterTable.all {
            let keys = "(\(UpdateLog.changedKeys(of: table, in: version)))"
            let kinds = try UpdateLog.changeKinds(db, of: table, in: version)
            if kinds.isEmpty { continue }
            let before = try rowsByKey(db, state(table, version: version - 1, keys: keys))
            let after = try rowsByKey(db, state(table, version: version, keys: keys))
            for key in kinds.keys.sorted(by: { KeyOrder($0) < KeyOrder($1) }) {
                let kind = kinds[key]!, old = before[key], new = after[key]
                let row = new ?? old!
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
                        words.append("moved \(Self.distance(moved))")
                        if change.mapKind == .updated || change.mapKind == .renamed { change.mapKind = .moved }
                    }
                }
                change.words = words.joined(separator: "; ")
                if table != .stations { change.mapKind = nil }
                changes.append(change)
            }
        }
        for split in try UpdateLog.splits(db, after: version - 1, through: version) {
            let ends = try Row.fetchAll(db, sql: """
                SELECT s.station_cd, s.station_name, s.lat, s.lon, s.line_cd FROM \(state(.stations, version: version)) s
                WHERE s.station_cd IN (?, ?)
                """, arguments: [split.old, split.new])
            let old = ends.first { $0["station_cd"] == split.old }, new = ends.first { $0["station_cd"] == split.new }
            func describe(_ row: Row?, _ code: Int64) -> String {
                guard let row else { return "\(code)" }
                return "\(code) \(row["station_name"] as String) (\(lineNames[row["line_cd"]] ?? "?"))"
            }
            changes.append(ReviewChange(
                table: "stations", key: "\(split.old) → \(split.new)", kind: .duplicate,
                title: describe(new, split.new),
                words: "DUPLICATE \(describe(old, split.old)) → \(describe(new, split.new)): visits of the old station count for the new one",
                station: split.new, mapKind: .duplicate,
                latitude: new?["lat"], longitude: new?["lon"], fromLatitude: old?["lat"], fromLongitude: old?["lon"]))
        }
        return changes
    }

    private func rowsByKey(_ db: Database, _ sql: String) throws -> [String: Row] {
        Dictionary(try Row.fetchAll(db, sql: "SELECT * FROM \(sql)").map { ($0["key_id"] as String, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The delta a phone at each older version downloads, measured by writing it (gzip bytes
    /// counted, nothing kept) as `release` writes it.
    package func deltas(_ db: Database) throws -> [ReviewDelta] {
        guard version > 1 else { return [] }
        let writer = try DeltaWriter.prepare(db, from: 1, through: version - 1, to: version, newest: newest)
        defer { try? writer.finish(db) }
        return try (1..<version).map { from in
            let written = try MasterDatabase.writeDelta(db, from: from, with: writer, gzip: false, transaction: true, into: .stream(TeeSink([])))
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
        let spreads = try MasterDatabase.mapSpread(db, MapExtent.examples, pins: pins, stations: state(.stations, version: version))
        return try MapExtent.examples.enumerated().map { index, extent in
            let (inView, top) = try MasterDatabase.pinsInView(db, extent, pins: pins, stations: state(.stations, version: version), width: PinMap.width)
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
