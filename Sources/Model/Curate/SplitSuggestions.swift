import Foundation
import GRDB

/// A station that closed and a station that opened in the same version, which look like
/// one station changing hands or splitting: users who visited the old one should be
/// credited with the new one.
public struct SplitSuggestion: Codable, Sendable, Equatable {
    public var version: Int
    public var closed: Int64
    public var closedName: String
    public var added: Int64
    public var addedName: String
    /// Why they look related: `same name`, `same group`, `NNN m apart`.
    public var reasons: [String]
    public var metres: Int?
    /// A plan line that records the split.
    public var planLine: String
}

extension MasterDatabase {
    /// Pairs of a station closed in `version` (default: the newest) and either
    /// - a station added in the same version that shares its name or group code
    ///   (`station_g_cd`), or lies within `radius` metres; or
    /// - an open station of another operator with the same name and group (a handover
    ///   to a company that already had a station there, like JR 海部 → 阿佐海岸鉄道 海部).
    public func suggestSplits(version: Int? = nil, radius: Double = 500) throws -> [SplitSuggestion] {
        try read { db in try Self.suggestSplits(db, version: version ?? Self.dataVersion(db), radius: radius) }
    }

    /// The same, inside a transaction that may not be committed yet (an import's report).
    static func suggestSplits(_ db: Database, version: Int, radius: Double = 500) throws -> [SplitSuggestion] {
        do {
            // Driven by the version's updates rows (indexed by version), then stations by code.
            let changed = """
                SELECT s.station_cd, s.station_g_cd, s.station_name, s.lat, s.lon FROM updates u
                JOIN stations s ON s.station_cd = CAST(u.key_id AS INTEGER)
                WHERE u.user_version = ? AND u.table_name = 'stations' AND u.type = ?
                """
            struct Station {
                let code: Int64, group: Int64?, name: String, latitude: Double?, longitude: Double?
                init(_ row: Row) {
                    code = row[0]; group = row[1]; name = row[2]
                    latitude = Double.fromDatabaseValue(row[3]); longitude = Double.fromDatabaseValue(row[4])
                }
            }
            let closed = try Row.fetchAll(db, sql: changed, arguments: [version, Update.Kind.delete.rawValue]).map(Station.init)
            if closed.isEmpty { return [] }
            let added = try Row.fetchAll(db, sql: changed, arguments: [version, Update.Kind.insert.rawValue]).map(Station.init)
            let recorded = Set(try UpdateLog.splits(db).map { "\($0.old)→\($0.new)" })
            var suggestions: [SplitSuggestion] = []
            // A cheap box before the great-circle distance: a degree of latitude is over 110 km,
            // a degree of longitude at least a fifth of that in Japan.
            let latitudeBox = radius / 100_000, longitudeBox = radius / 20_000
            for old in closed {
                for new in added {
                    var reasons: [String] = []
                    if old.name == new.name { reasons.append("same name") }
                    if let group = new.group, group == old.group || group == old.code { reasons.append("same group") }
                    var metres: Int?
                    if let a = old.latitude, let b = old.longitude, let c = new.latitude, let d = new.longitude,
                       abs(a - c) <= latitudeBox, abs(b - d) <= longitudeBox {
                        let distance = Geography.metres(latitude: a, longitude: b, toLatitude: c, longitude: d)
                        if distance <= radius {
                            metres = Int(distance.rounded())
                            reasons.append("\(metres!) m apart")
                        }
                    }
                    guard !reasons.isEmpty, !recorded.contains("\(old.code)→\(new.code)") else { continue }
                    suggestions.append(SplitSuggestion(
                        version: version, closed: old.code, closedName: old.name, added: new.code, addedName: new.name,
                        reasons: reasons, metres: metres,
                        planLine: "{\"op\": \"record_split\", \"old\": \(old.code), \"new\": \(new.code)}"))
                }
            }
            // Handovers to an operator that already had the station.
            // One pass over the stations against the (few) closed ones, looked up by name
            // (CROSS JOIN keeps that order: the other way round scans every station per closure).
            let handovers = try Row.fetchAll(db, sql: """
                WITH closed AS MATERIALIZED (
                    SELECT c.station_cd, c.station_g_cd, c.station_name, cl.company_cd FROM updates u
                    JOIN stations c ON c.station_cd = CAST(u.key_id AS INTEGER)
                    JOIN lines cl ON cl.line_cd = c.line_cd
                    WHERE u.user_version = ? AND u.table_name = 'stations' AND u.type = 'DELETE')
                SELECT c.station_cd, c.station_name, o.station_cd, o.station_name FROM stations o
                CROSS JOIN closed c
                JOIN lines ol ON ol.line_cd = o.line_cd
                WHERE c.station_name = o.station_name AND o.e_status <> \(MasterTable.closedStatus) AND o.station_cd <> c.station_cd
                  AND ol.company_cd <> c.company_cd
                  AND (o.station_g_cd = c.station_g_cd OR o.station_g_cd = c.station_cd)
                ORDER BY c.station_cd, o.station_cd
                """, arguments: [version])
            for row in handovers {
                let old: Int64 = row[0], new: Int64 = row[2]
                if recorded.contains("\(old)→\(new)") || suggestions.contains(where: { $0.closed == old && $0.added == new }) { continue }
                suggestions.append(SplitSuggestion(
                    version: version, closed: old, closedName: row[1], added: new, addedName: row[3],
                    reasons: ["same name and group, another operator's open station"], metres: nil,
                    planLine: "{\"op\": \"record_split\", \"old\": \(old), \"new\": \(new)}"))
            }
            return suggestions.sorted { ($0.reasons.count, $1.closed) > ($1.reasons.count, $0.closed) }
        }
    }
}

enum Geography {
    /// Great-circle distance (haversine, mean Earth radius).
    static func metres(latitude: Double, longitude: Double, toLatitude: Double, longitude toLongitude: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (toLatitude - latitude) * radians, dLon = (toLongitude - longitude) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(latitude * radians) * cos(toLatitude * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 6_371_008.8 * 2 * atan2(sqrt(a), sqrt(1 - a))
    }
}
