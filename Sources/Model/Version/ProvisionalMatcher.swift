import Foundation
import GRDB
import StationCheck
import StationSchema

/// Pairs the rows curators or plans added provisionally with the rows an import brings for the
/// same real event under upstream's codes (DOMAIN.md, "Provisional rows").
///
/// A provisional row is open in the master, lacking from upstream's last file and absent from the
/// new one; an upstream row is new to both the master and the last file (an INSERT the import
/// staged, or a row of the merge that base and master lack). Stations pair by name
/// within `radius` (the split suggestions' rule of a station that stays where it was); lines by
/// the stations they hold (a provisional line whose stations, kept codes or paired ones, upstream
/// puts on one new line), else by name; operators by the lines they run, else by name. For the
/// Hokuriku plan and an upstream snapshot that records 2024-03-16: ハピラインふくい 301 → upstream's
/// operator, line 99440 → upstream's line, 敦賀 9944001 → 9942801, 大聖寺 9944019 → upstream's.
package struct ProvisionalMatcher {
    /// The tables the import merges three ways: only those can hold pairs.
    package let merged: Set<MasterTable>
    package var radius = SplitSuggestion.defaultRadius

    private struct Candidate {
        let code: Int64, name: String, parent: Int64?, latitude: Double?, longitude: Double?
    }

    package func pairs(_ db: Database) throws -> [Adoption] {
        var found: [Adoption] = []
        let stationPairs = merged.contains(.stations) ? try pairStations(into: &found, db) : []
        let linePairs = merged.contains(.lines) ? try pairLines(byStations: stationPairs, into: &found, db) : []
        if merged.contains(.companies) { try pairCompanies(byLines: linePairs, into: &found, db) }
        func order(_ adoption: Adoption) -> (Int, Int, Int64) {
            (adoption.version ?? 0, MasterTable.all.firstIndex { $0.name == adoption.table } ?? 0, adoption.provisional)
        }
        return found.sorted { order($0) < order($1) }
    }

    private typealias Pair = (provisional: Candidate, upstream: Candidate)

    /// Stations by name within the radius, the nearest first.
    private func pairStations(into found: inout [Adoption], _ db: Database) throws -> [Pair] {
        var pairs: [Pair] = []
        var upstream = try candidates(.stations, provisional: false, parent: "line_cd", db)
        let provisional = upstream.isEmpty ? [] : try candidates(.stations, provisional: true, parent: "line_cd", db)
        for station in provisional {
            let near = upstream.enumerated()
                .filter { $0.element.name == station.name }
                .compactMap { index, other -> (Int, Double)? in
                    guard let metres = distance(station, other) else { return nil }
                    return metres <= radius ? (index, metres) : nil
                }
                .min { $0.1 < $1.1 }
            guard let (index, metres) = near else { continue }
            let other = upstream.remove(at: index)
            pairs.append((station, other))
            found.append(try adoption(.stations, station, other, reason: "the same name \(other.name), \(Int(metres.rounded())) m apart", db))
        }
        return pairs
    }

    /// Lines by where upstream puts the stations the master has on the provisional line (the
    /// stations paired, and those the file moves), else by name.
    private func pairLines(byStations stationPairs: [Pair], into found: inout [Adoption], _ db: Database) throws -> [Pair] {
        var pairs: [Pair] = []
        var upstream = try candidates(.lines, provisional: false, parent: "company_cd", db)
        let provisional = upstream.isEmpty ? [] : try candidates(.lines, provisional: true, parent: "company_cd", db)
        for line in provisional {
            var votes: [Int64: Int] = [:]
            for pair in stationPairs where pair.provisional.parent == line.code {
                if let target = pair.upstream.parent { votes[target, default: 0] += 1 }
            }
            if merged.contains(.stations) {
                let moved = try Int64.fetchAll(db, sql: """
                    SELECT t.line_cd FROM \(StagingTables.theirsTable(.stations)) t CROSS JOIN main.stations m ON m.station_cd = t.station_cd
                    WHERE m.line_cd = ?
                    """, arguments: [line.code])
                for target in moved { votes[target, default: 0] += 1 }
            }
            let byStations = votes.filter { target, _ in upstream.contains { $0.code == target } }.max { ($0.value, -$0.key) < ($1.value, -$1.key) }
            let index = byStations.flatMap { best in upstream.firstIndex { $0.code == best.key } }
                ?? upstream.firstIndex { $0.name == line.name }
            guard let index else { continue }
            let other = upstream.remove(at: index)
            pairs.append((line, other))
            let reason = byStations.map { "upstream puts \($0.value) of its stations on \(other.name)" } ?? "the same name \(other.name)"
            found.append(try adoption(.lines, line, other, reason: reason, db))
        }
        return pairs
    }

    /// Companies by the line paired under them, else by name.
    private func pairCompanies(byLines linePairs: [Pair], into found: inout [Adoption], _ db: Database) throws {
        var upstream = try candidates(.companies, provisional: false, parent: nil, db)
        let provisional = upstream.isEmpty ? [] : try candidates(.companies, provisional: true, parent: nil, db)
        for company in provisional {
            let byLine = linePairs.first { $0.provisional.parent == company.code }.flatMap { pair in
                upstream.firstIndex { $0.code == pair.upstream.parent }
            }
            guard let index = byLine ?? upstream.firstIndex(where: { $0.name == company.name }) else { continue }
            let other = upstream.remove(at: index)
            found.append(try adoption(.companies, company, other, reason: byLine != nil ? "upstream runs the adopted line under it" : "the same name \(other.name)", db))
        }
    }

    /// The provisional rows of `table` (open, unknown to upstream, not in the file), or the rows
    /// the file brings that neither the master nor upstream's last file has.
    private func candidates(_ table: MasterTable, provisional: Bool, parent: String?, _ db: Database) throws -> [Candidate] {
        let key = table.keyColumns[0]
        let name = table.columnNames.first { $0.hasSuffix("_name") }!
        let hasPlace = table.column(named: "lat") != nil
        let columns = "r.\(key), r.\(name), \(parent.map { "r." + $0 } ?? "NULL"), \(hasPlace ? "r.lat, r.lon" : "NULL, NULL")"
        // The rows upstream lacks are held apart as such: a few, looked up in the master (CROSS JOIN
        // keeps SQLite from reading every row of the master to find them).
        let sql = provisional
            ? """
                SELECT \(columns) FROM main.\(table.upstreamTable) o CROSS JOIN main.\(table.name) r ON r.\(key) = o.\(key)
                WHERE o.upstream_lacks AND r.e_status <> \(MasterTable.closedStatus)
                  AND NOT EXISTS (SELECT 1 FROM \(StagingTables.theirsTable(table)) t WHERE t.\(key) = r.\(key))
                ORDER BY r.\(key)
                """
            : """
                SELECT \(columns) FROM \(StagingTables.stagedTable(table)) r WHERE r.kind = \(Update.Kind.insert.sql) AND r.source_line IS NOT NULL
                UNION ALL
                SELECT \(columns) FROM \(StagingTables.theirsTable(table)) r
                WHERE NOT EXISTS (SELECT 1 FROM \(StagingTables.baseTable(table)) b WHERE b.\(key) = r.\(key))
                  AND NOT EXISTS (SELECT 1 FROM main.\(table.name) m WHERE m.\(key) = r.\(key))
                ORDER BY 1
                """
        return try Row.fetchAll(db, sql: sql).map { Candidate(code: $0[0], name: $0[1], parent: $0[2], latitude: $0[3], longitude: $0[4]) }
    }

    private func distance(_ a: Candidate, _ b: Candidate) -> Double? {
        guard let lat1 = a.latitude, let lon1 = a.longitude, let lat2 = b.latitude, let lon2 = b.longitude else { return nil }
        return Geography.metres(latitude: lat1, longitude: lon1, toLatitude: lat2, longitude: lon2)
    }

    private func adoption(_ table: MasterTable, _ provisional: Candidate, _ upstream: Candidate, reason: String, _ db: Database) throws -> Adoption {
        let event = try UpdateLog.newestChange(of: table, key: String(provisional.code), kind: .insert, db)
        return Adoption(table: table.name, provisional: provisional.code, provisionalName: provisional.name,
                        upstream: upstream.code, upstreamName: upstream.name, version: event?.version, memo: event?.memo, reason: reason)
    }
}
