import StationSchema

/// A version's added stations, found by name, by group or by place, so that each closed station
/// is compared with the few that can make a pair with it rather than with every one: at a 1 %
/// import of a million stations, comparing every pair (1,478 closed by 992 added) was 1.5 million
/// distances, and it grows with the square of the import.
///
/// By place: the added stations are kept in bands of latitude as wide as the radius, and a
/// closed station looks in its own band and the two beside it. That misses no pair within the
/// radius: a great-circle distance is never shorter than its north-south part (the haversine's
/// `a` is at least sin²(Δφ/2)), so two stations within the radius are at most a band apart.
package struct AddedStations {
    package let stations: [SplitFinder.Station]
    private let byName: [String: [Int]]
    private let byGroup: [Int64: [Int]]
    private let byBand: [Int: [Int]]
    /// Those with a latitude no band holds (beyond ±90°, written before the master's CHECKs):
    /// compared with every closed station, as before there were bands.
    private let unbanded: [Int]
    private let bandDegrees: Double

    /// Metres of latitude in a degree, on the sphere of `Geography.metres`.
    private static let metresPerDegree = Geography.earthRadiusMetres * Double.pi / 180

    package init(_ stations: [SplitFinder.Station], radius: Double) {
        self.stations = stations
        // At least a metre wide (a radius of 0 still pairs stations at one place), and a little
        // wider than the radius, so that rounding never puts a pair two bands apart; a band can
        // be wider than needed, each pair's distance is measured.
        bandDegrees = max(radius.isFinite ? radius : 1e9, 1) * 1.001 / Self.metresPerDegree
        var byName: [String: [Int]] = [:], byGroup: [Int64: [Int]] = [:], byBand: [Int: [Int]] = [:], unbanded: [Int] = []
        for (index, station) in stations.enumerated() {
            byName[station.name, default: []].append(index)
            byGroup[station.group, default: []].append(index)
            switch Self.place(station, bandDegrees: bandDegrees) {
            case .band(let band): byBand[band, default: []].append(index)
            case .unbanded: unbanded.append(index)
            case .none: break
            }
        }
        (self.byName, self.byGroup, self.byBand, self.unbanded) = (byName, byGroup, byBand, unbanded)
    }

    private enum Place { case band(Int), unbanded }

    /// Nil without coordinates: never near anything.
    private static func place(_ station: SplitFinder.Station, bandDegrees: Double) -> Place? {
        guard let latitude = station.latitude, station.longitude != nil else { return nil }
        guard latitude.magnitude <= 90 else { return .unbanded }
        return .band(Int((latitude / bandDegrees).rounded(.down)))
    }

    /// The added stations that share `station`'s name or group, or lie in its band of latitude or
    /// one beside it, in the order they were given (each once).
    package func candidates(for station: SplitFinder.Station) -> [SplitFinder.Station] {
        var indices = Set(byName[station.name] ?? [])
        indices.formUnion(byGroup[station.group] ?? [])
        switch Self.place(station, bandDegrees: bandDegrees) {
        case .band(let band):
            for nearby in band - 1...band + 1 { indices.formUnion(byBand[nearby] ?? []) }
            indices.formUnion(unbanded)
        case .unbanded:
            indices.formUnion(byBand.values.joined())
            indices.formUnion(unbanded)
        case .none: break
        }
        return indices.sorted().map { stations[$0] }
    }

    /// The added stations of `name`, in the order they were given.
    package func named(_ name: String) -> [SplitFinder.Station] {
        (byName[name] ?? []).map { stations[$0] }
    }
}
