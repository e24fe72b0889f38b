import Foundation
import GRDB
import StationCheck
import StationDelta
import StationHistory
import StationLog
import StationManifest
import StationSchema
import StationSupport
import StationWeights

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

/// Puts one change of a version in words for the review, with its place and map kind. Which
/// columns changed is `DescribedChange`'s to say (the one description the log, diff and import
/// share); the review adds what a map reader needs beside it: the codes a change cites named
/// (lines, operators, stations, as they were before and at the version), a move in metres
/// instead of two coordinates, and the kind of mark it gets (renamed, moved, transferred).
struct ReviewChangeWords {
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
        if table == .stations {
            let name: String = row["station_name"]
            change.title = "\(name) (\(lineNames[row["line_cd"]] ?? "?"))"
            change.station = row["station_cd"]
            change.latitude = row["lat"]; change.longitude = row["lon"]
        } else if table == .connections {
            change.title = "\(lineNames[row["line_cd"]] ?? "?"): \(try stationName(row["station_cd1"])) – \(try stationName(row["station_cd2"]))"
        } else {
            change.title = table.columns.first { $0.name.hasSuffix("_name") }.flatMap { row[$0.name] } ?? key
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
            func values(_ row: Row) -> [DatabaseValue] { table.columns.map { row[$0.name] ?? .null } }
            let changed = DescribedChange(table, key: key, kind: kind, old: values(old), new: values(new)).fields.map(\.column)
            for column in changed where column != "e_status" && !(table == .stations && (column == "lat" || column == "lon")) {
                let a = old[column] as DatabaseValue, b = new[column] as DatabaseValue
                words.append("\(column) \(try named(column, a, before: true)) → \(try named(column, b, before: false))")
                if column == "station_name", change.mapKind == .updated { change.mapKind = .renamed }
                if column == "line_cd", table == .stations, change.mapKind == .updated || change.mapKind == .renamed,
                   let from = Int64.fromDatabaseValue(a), let to = Int64.fromDatabaseValue(b),
                   lineCompaniesBefore[from] != lineCompanies[to] {
                    change.mapKind = .transferred
                }
            }
            if table == .stations, changed.contains("lat") || changed.contains("lon"),
               let la: Double = old["lat"], let lo: Double = old["lon"], let na: Double = new["lat"], let no: Double = new["lon"] {
                change.fromLatitude = la; change.fromLongitude = lo
                words.append("moved \(ReviewReader.distance(Geography.metres(latitude: la, longitude: lo, toLatitude: na, longitude: no)))")
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
