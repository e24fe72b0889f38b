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
        try read { db in
            let version = try version ?? Self.dataVersion(db)
            let changed = """
                SELECT s.station_cd, s.station_g_cd, s.station_name, s.lat, s.lon FROM stations s
                JOIN updates u ON u.table_name = 'stations' AND u.key_id = CAST(s.station_cd AS TEXT)
                WHERE u.user_version = ? AND u.type = ?
                """
            let closed = try Row.fetchAll(db, sql: changed, arguments: [version, Update.Kind.delete.rawValue])
            let added = try Row.fetchAll(db, sql: changed, arguments: [version, Update.Kind.insert.rawValue])
            let recorded = Set(try Row.fetchAll(db, sql: "SELECT table_name, key_id FROM updates WHERE type = 'DUPLICATE'")
                .map { "\($0[0] as String)→\($0[1] as String)" })
            var suggestions: [SplitSuggestion] = []
            for old in closed {
                for new in added where !recorded.contains("\(old[0] as Int64)→\(new[0] as Int64)") {
                    var reasons: [String] = []
                    let oldName: String = old[2], newName: String = new[2]
                    if oldName == newName { reasons.append("same name") }
                    let oldCode: Int64 = old[0], oldGroup: Int64? = old[1], newGroup: Int64? = new[1]
                    if let newGroup, newGroup == oldGroup || newGroup == oldCode { reasons.append("same group") }
                    var metres: Int?
                    if let a = Double.fromDatabaseValue(old[3]), let b = Double.fromDatabaseValue(old[4]),
                       let c = Double.fromDatabaseValue(new[3]), let d = Double.fromDatabaseValue(new[4]) {
                        let distance = Geography.metres(latitude: a, longitude: b, toLatitude: c, longitude: d)
                        if distance <= radius {
                            metres = Int(distance.rounded())
                            reasons.append("\(metres!) m apart")
                        }
                    }
                    guard !reasons.isEmpty else { continue }
                    let newCode: Int64 = new[0]
                    suggestions.append(SplitSuggestion(
                        version: version, closed: oldCode, closedName: oldName, added: newCode, addedName: newName,
                        reasons: reasons, metres: metres,
                        planLine: "{\"op\": \"record_split\", \"old\": \(oldCode), \"new\": \(newCode)}"))
                }
            }
            // Handovers to an operator that already had the station.
            let handovers = try Row.fetchAll(db, sql: """
                SELECT c.station_cd, c.station_name, o.station_cd, o.station_name FROM stations c
                JOIN updates u ON u.table_name = 'stations' AND u.key_id = CAST(c.station_cd AS TEXT)
                    AND u.user_version = ? AND u.type = 'DELETE'
                JOIN lines cl ON cl.line_cd = c.line_cd
                JOIN stations o ON o.station_name = c.station_name AND o.e_status <> 2 AND o.station_cd <> c.station_cd
                    AND (o.station_g_cd = c.station_g_cd OR o.station_g_cd = c.station_cd)
                JOIN lines ol ON ol.line_cd = o.line_cd AND ol.company_cd <> cl.company_cd
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
