import Foundation
import GRDB
import StationSchema

/// Weights 1–9 proposed from the network's structure (DOMAIN.md: major stations are junctions,
/// line ends, Shinkansen stops and each town's main station), for curators to review.
///
/// A station counts as major when its group (`station_g_cd`: one place, several lines) is a
/// junction, holds a line's end, or is its municipality's main station. Majors are ranked by
/// importance (lines in the group, then operators, then stations), and the weight levels are
/// handed out from the top of a hierarchy of grid cells, so that every map scale gets a spread
/// of pins: the first station of each prefecture gets 1, the first of each first-order square
/// (~80 km) 2, of each ~40 km cell 3, ~20 km 4, second-order square (~10 km) 5; the junctions of
/// three lines or more left get 6, and 7–9 stay free for curators. One station per group carries
/// the weight: the rest of a group draw at the same place.
///
/// The free ekidata lists no Shinkansen stations, so a Shinkansen stop is recognised only as
/// the junction it also is.
package struct MajorStationProposal {
    package struct Station {
        package let code: Int64, group: Int64, line: Int64, company: Int64, prefecture: Int
        package let latitude: Double, longitude: Double, municipality: String?
    }

    package struct Group {
        package var representative: Station
        package var lines: Set<Int64> = [], companies: Set<Int64> = [], stations = 0
        package var holdsLineEnd = false, isMunicipalMain = false

        package var importance: (Int, Int, Int, Int) { (lines.count, companies.count, isMunicipalMain ? 1 : 0, stations) }
        package var isJunction: Bool { lines.count >= 2 }
    }

    /// Station code → proposed weight 1–9, for the representative of every major group.
    package static func propose(_ db: Database) throws -> [Int64: Int] {
        var groups = try openGroups(db)
        markMunicipalMains(&groups)
        let majors = groups.values.filter { $0.isJunction || $0.holdsLineEnd || $0.isMunicipalMain }
            .sorted { a, b in
                a.importance != b.importance ? a.importance > b.importance : a.representative.code < b.representative.code
            }
        return weights(ofMajors: majors)
    }

    /// The open stations with a place, by group: each group's lines, companies and stations, and
    /// whether one of them ends a line.
    private static func openGroups(_ db: Database) throws -> [Int64: Group] {
        // Cursors, not `fetchAll`: at 1M stations a GRDB row each weighed hundreds of MiB.
        var degrees: [Int64: Int] = [:]
        let connected = try Row.fetchCursor(db, sql: """
            SELECT station, COUNT(*) FROM (SELECT station_cd1 AS station FROM connections UNION ALL SELECT station_cd2 FROM connections)
            GROUP BY station
            """)
        while let row = try connected.next() { degrees[row[0]] = row[1] }
        let rows = try Row.fetchCursor(db, sql: """
            SELECT s.station_cd, COALESCE(s.station_g_cd, s.station_cd), s.line_cd, l.company_cd, s.pref_cd, s.lat, s.lon, s.address
            FROM stations s JOIN lines l ON l.line_cd = s.line_cd
            WHERE s.e_status <> \(MasterTable.closedStatus) AND l.e_status <> \(MasterTable.closedStatus)
              AND s.lat IS NOT NULL AND s.lon IS NOT NULL
            ORDER BY s.station_cd
            """)
        var groups: [Int64: Group] = [:]
        while let row = try rows.next() {
            let station = Station(
                code: row[0], group: row[1], line: row[2], company: row[3], prefecture: row[4] ?? 0,
                latitude: row[5], longitude: row[6], municipality: Municipality.name(in: row[7] as String?))
            var group = groups[station.group] ?? Group(representative: station)
            // The group's own code (or its lowest) is the one that carries the weight.
            if station.code == station.group { group.representative = station }
            group.lines.insert(station.line)
            group.companies.insert(station.company)
            group.stations += 1
            if degrees[station.code] == 1 { group.holdsLineEnd = true }
            groups[station.group] = group
        }
        return groups
    }

    /// Each municipality's main station: its most important group, the lowest code of equals
    /// (in code order: a dictionary's order changes from run to run, and the seed promises the
    /// same weights).
    private static func markMunicipalMains(_ groups: inout [Int64: Group]) {
        var mains: [String: Int64] = [:]
        for (code, group) in groups.sorted(by: { $0.key < $1.key }) {
            guard let town = group.representative.municipality else { continue }
            let key = "\(group.representative.prefecture) \(town)"
            if let other = mains[key], let best = groups[other], best.importance >= group.importance { continue }
            mains[key] = code
        }
        for code in mains.values { groups[code]!.isMunicipalMain = true }
    }

    /// Weights 1–5 to the first major of each cell, coarse to fine (a prefecture, then ever
    /// smaller squares), then 6 to the big junctions left.
    private static func weights(ofMajors majors: [Group]) -> [Int64: Int] {
        var weights: [Int64: Int] = [:]
        let cells: [(Int, (Station) -> String)] = [
            (1, { "\($0.prefecture)" }),
            (2, { "\(StandardMesh.first(latitude: $0.latitude, longitude: $0.longitude))" }),
            (3, { Self.cell($0, degreesOfLatitude: 1.0 / 3, degreesOfLongitude: 0.5) }),
            (4, { Self.cell($0, degreesOfLatitude: 1.0 / 6, degreesOfLongitude: 0.25) }),
            (5, { "\(StandardMesh.second(latitude: $0.latitude, longitude: $0.longitude))" }),
        ]
        for (weight, cellOf) in cells {
            var taken = Set<String>()
            for group in majors where weights[group.representative.code] == nil {
                if taken.insert(cellOf(group.representative)).inserted { weights[group.representative.code] = weight }
            }
        }
        // The big junctions left (three lines or more); the other majors stay to the sampling,
        // which keeps 1–9 near the original service's share (1,409 of 9,571 stations).
        for group in majors where weights[group.representative.code] == nil && group.lines.count >= 3 {
            weights[group.representative.code] = 6
        }
        return weights
    }

    private static func cell(_ station: Station, degreesOfLatitude: Double, degreesOfLongitude: Double) -> String {
        "\(Int((station.latitude / degreesOfLatitude).rounded(.down))) \(Int((station.longitude / degreesOfLongitude).rounded(.down)))"
    }
}

/// The municipality in an ekidata address: `八戸市市川町` → 八戸市, `上北郡おいらせ町…` → おいらせ町,
/// `東京都千代田区丸の内` → 千代田区; a designated city's wards are one city (`横浜市港北区` → 横浜市).
package enum Municipality {
    private static let pattern = try! NSRegularExpression(
        pattern: "^(?:東京都|北海道|大阪府|京都府|.{2,3}県)?(?:[^市区町村]{1,6}郡)?([^市区町村]{1,8}?[市区町村])")

    package static func name(in address: String?) -> String? {
        guard let address, let match = pattern.firstMatch(in: address, range: NSRange(address.startIndex..., in: address)),
              let range = Range(match.range(at: 1), in: address) else { return nil }
        return String(address[range])
    }
}
