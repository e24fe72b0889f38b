import Foundation
import GRDB

/// What `weights` decided.
public struct WeightReport: Codable, Sendable {
    public var seed: UInt64
    /// Weight → open stations with it, after the assignment.
    public var stationsByWeight: [Int: Int]
    public var firstOrderSquares: Int
    public var secondOrderSquares: Int
    public var change: ChangeReport
}

extension MasterDatabase {
    /// Assigns map weights (DOMAIN.md): hand weights 1–9 stay; in every first-order standard
    /// grid square (~80 km) one open station, chosen at random, gets 11; in every second-order
    /// square (~10 km) without one, one more gets 12; every other station gets 13.
    ///
    /// The choice in a square depends only on the seed and the square's code, so the same
    /// seed gives the same weights, and a new station elsewhere moves nothing. Committed as
    /// one version like any change (only stations whose weight changes are logged).
    @discardableResult
    public func assignWeights(seed: UInt64 = 1, memo: String? = nil, dryRun: Bool = false) throws -> WeightReport {
        let stations = try read { db in
            try Row.fetchAll(db, sql: "SELECT station_cd, lat, lon, weight, e_status FROM stations ORDER BY station_cd")
        }
        var weights: [Int64: Int] = [:]
        var first: [Int: [Int64]] = [:], second: [Int: [Int64]] = [:]
        for row in stations {
            let code: Int64 = row[0], weight: Int = row[3]
            if MapWeight.handAssigned.contains(weight) { weights[code] = weight; continue }
            weights[code] = MapWeight.unsampled
            guard row[4] as Int != MasterTable.closedStatus, let lat = row[1] as Double?, let lon = row[2] as Double? else { continue }
            first[StandardMesh.first(latitude: lat, longitude: lon), default: []].append(code)
            second[StandardMesh.second(latitude: lat, longitude: lon), default: []].append(code)
        }
        var chosenSquares = Set<Int>()
        for (square, codes) in first {
            let code = codes[Self.pick(seed: seed, square: square, count: codes.count)]
            weights[code] = MapWeight.firstOrderSample
            chosenSquares.insert(square)
        }
        for (square, codes) in second where !codes.contains(where: { weights[$0] == 11 }) {
            weights[codes[Self.pick(seed: seed, square: square, count: codes.count)]] = MapWeight.secondOrderSample
        }
        var operations: [LocatedOperation] = []
        for row in stations {
            let code: Int64 = row[0], weight: Int = row[3]
            if weights[code] != weight {
                operations.append(LocatedOperation(.edit(table: .stations, key: [String(code)], values: ["weight": String(weights[code]!)])))
            }
        }
        let change = try apply(operations, memo: memo ?? "map weights, seed \(seed)", dryRun: dryRun)
        var byWeight: [Int: Int] = [:]
        for row in stations where row[4] as Int != MasterTable.closedStatus { byWeight[weights[row[0]]!, default: 0] += 1 }
        return WeightReport(seed: seed, stationsByWeight: byWeight, firstOrderSquares: first.count, secondOrderSquares: second.count, change: change)
    }

    /// A deterministic index in 0..<count from the seed and the square alone.
    static func pick(seed: UInt64, square: Int, count: Int) -> Int {
        Int(SplitMix64.hash(seed, Int64(square)) % UInt64(count))
    }
}
