import Foundation
import GRDB
import StationCurate
import StationSchema
import StationSupport
import StationVersion

/// What `weights` decided.
public struct WeightReport: Codable, Sendable {
    /// The seed: the same seed gives the same weights.
    public var seed: UInt64
    /// Weight → open stations with it, after the assignment.
    public var stationsByWeight: [Int: Int]
    /// First-order mesh squares (~80 km) that hold open stations: each gets one 11.
    public var firstOrderSquares: Int
    /// Sampling cells (~5 km) that hold open stations.
    public var sampleCells: Int
    /// Stations that get a proposed 1–9 (`proposeMajor`), and hand weights 1–9 kept as they were.
    public var proposedMajors: Int
    /// Hand weights 1–9 kept as they were.
    public var keptHandWeights: Int
    /// How the top pins spread over the example extents with the weights before and after.
    public var spreadBefore: [MapSpread]
    /// The same with the new weights.
    public var spreadAfter: [MapSpread]
    /// The version written (or that would be, for a dry run).
    public var change: ChangeReport

    package enum CodingKeys: String, CodingKey {
        case seed, change
        case stationsByWeight = "stations_by_weight", firstOrderSquares = "first_order_squares", sampleCells = "sample_cells"
        case proposedMajors = "proposed_majors", keptHandWeights = "kept_hand_weights"
        case spreadBefore = "spread_before", spreadAfter = "spread_after"
    }
}

extension Weigher {
    /// Assigns map weights (DOMAIN.md): hand weights 1–9 stay; with `proposeMajor`, the major
    /// stations without one get 1–9 from the network's structure (`MajorStationProposal`);
    /// in every first-order standard grid square (~80 km) one open station, chosen at random,
    /// gets 11; in every ~5 km cell (a quarter of a second-order square) without an 11, one more
    /// station (not a major one) gets 12; every other station gets 13. That gives 11–12 to about 3,000 of
    /// the real data's 9,000 open stations, the proportion of the original service.
    ///
    /// The choice in a cell depends only on the seed and the cell, so the same seed gives the
    /// same weights, and a new station elsewhere moves nothing. Committed as one version like
    /// any change (only stations whose weight changes are logged).
    @discardableResult
    public func assignWeights(seed: UInt64 = 1, proposeMajor: Bool = false, memo: String? = nil, dryRun: Bool = false) throws -> WeightReport {
        Progress.phase(proposeMajor ? "reading stations, proposing major stations" : "reading stations")
        let (stations, proposals) = try master.read { db in
            (try WeightedStation.all(db), proposeMajor ? try MajorStationProposal.propose(db) : [:])
        }
        var weights: [Int64: Int] = [:]
        var first: [Int: [Int64]] = [:], cells: [Int: [Int64]] = [:]
        var proposed = 0, kept = 0
        for station in stations {
            let code = station.code, weight = station.weight, isOpen = station.isOpen
            if MapWeight.handAssigned.contains(weight) {
                weights[code] = weight
                if isOpen { kept += 1 }
                continue
            }
            if let major = proposals[code] {
                weights[code] = major
                proposed += 1
                continue
            }
            weights[code] = MapWeight.unsampled
            guard isOpen, let lat = station.latitude, let lon = station.longitude else { continue }
            first[StandardMesh.first(latitude: lat, longitude: lon), default: []].append(code)
            cells[StandardMesh.quarterOfSecond(latitude: lat, longitude: lon), default: []].append(code)
        }
        MapWeight.sample(into: &weights, firstOrderSquares: first, cells: cells, of: stations, seed: seed)
        var operations: [LocatedOperation] = []
        for station in stations {
            let code = station.code
            if weights[code] != station.weight {
                operations.append(LocatedOperation(.edit(table: .stations, key: [String(code)], values: ["weight": String(weights[code]!)])))
            }
        }
        let change = try Curator(master).apply(operations, memo: memo ?? "map weights, seed \(seed)" + (proposeMajor ? ", major stations proposed" : ""), dryRun: dryRun)
        var byWeight: [Int: Int] = [:]
        var before: [MapPoint] = [], after: [MapPoint] = []
        for station in stations where station.isOpen {
            let code = station.code
            byWeight[weights[code]!, default: 0] += 1
            guard let lat = station.latitude, let lon = station.longitude else { continue }
            before.append(MapPoint(latitude: lat, longitude: lon, weight: station.weight))
            after.append(MapPoint(latitude: lat, longitude: lon, weight: weights[code]!))
        }
        return WeightReport(
            seed: seed, stationsByWeight: byWeight, firstOrderSquares: first.count, sampleCells: cells.count,
            proposedMajors: proposed, keptHandWeights: kept,
            spreadBefore: MapGeometry.spread(of: before), spreadAfter: MapGeometry.spread(of: after), change: change)
    }
}

extension MapWeight {
    /// One station of each first-order square gets 11, then one of each cell without an 11 gets 12.
    fileprivate static func sample(into weights: inout [Int64: Int], firstOrderSquares first: [Int: [Int64]], cells: [Int: [Int64]],
                                   of stations: [WeightedStation], seed: UInt64) {
        for (square, codes) in first {
            weights[codes[SplitMix64.pick(seed: seed, square: square, count: codes.count)]] = firstOrderSample
        }
        // A cell that already shows an 11 needs no 12.
        var shown = Set<Int>()
        for station in stations where station.isOpen {
            guard let weight = weights[station.code], weight == firstOrderSample,
                  let lat = station.latitude, let lon = station.longitude else { continue }
            shown.insert(StandardMesh.quarterOfSecond(latitude: lat, longitude: lon))
        }
        for (cell, codes) in cells where !shown.contains(cell) {
            weights[codes[SplitMix64.pick(seed: seed, square: cell, count: codes.count)]] = secondOrderSample
        }
    }
}

/// What weighting reads of a station: 1M of these are 40 MB, 1M GRDB rows were hundreds.
package struct WeightedStation {
    package let code: Int64, latitude: Double?, longitude: Double?, weight: Int, isOpen: Bool

    package static func all(_ db: Database) throws -> [WeightedStation] {
        var stations: [WeightedStation] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT station_cd, lat, lon, weight, e_status FROM stations ORDER BY station_cd")
        while let row = try rows.next() {
            stations.append(WeightedStation(code: row[0], latitude: row[1], longitude: row[2], weight: row[3],
                                            isOpen: row[4] as Int != MasterTable.closedStatus))
        }
        return stations
    }
}
