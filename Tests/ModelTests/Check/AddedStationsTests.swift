import GRDB
import StationCheck
import StationSchema
import StationSupport
import Testing

/// The split suggestions compare each closed station only with the added stations
/// `AddedStations` hands it: it must hand every one that shares the name or the group, or lies
/// within the radius, as comparing every pair did.
struct AddedStationsTests {
    /// A station at `latitude`, `longitude` (nil: none), of a name and group drawn from few.
    private func station(_ code: Int64, _ random: inout SplitMix64, latitude: Double?, longitude: Double?) -> SplitFinder.Station {
        SplitFinder.Station(Row([
            "station_cd": code, "station_g_cd": Int64(1 + random.below(30)), "station_name": "駅\(random.below(20))",
            "lat": latitude, "lon": longitude, "line_cd": Int64(1), "company_cd": Int64(1 + random.below(3)),
            "company_name": "鉄道", "e_status": 0,
        ]))
    }

    /// Random stations crowded into a few kilometres (many pairs within the radius, many just
    /// outside), some without coordinates, one beyond ±90° as a row from before the CHECKs can
    /// be, near the poles and across the equator; radii from none to everything.
    @Test(arguments: [0.0, 1, 500, 3_000, 2e7, .infinity, -1])
    func everyPairThatCanBeOneIsACandidate(radius: Double) {
        var random = SplitMix64(seed: UInt64(radius.isFinite ? radius.magnitude : 99) + 7)
        func place(_ random: inout SplitMix64) -> (Double?, Double?) {
            switch random.below(20) {
            case 0: return (nil, nil)
            case 1: return (95.5, 140)
            case 2: return (89.99 + random.unit() / 100, random.unit() * 360 - 180)
            case 3: return (random.unit() / 100 - 0.005, 140)
            default: return (35.68 + random.unit() * 0.05, 139.76 + random.unit() * 0.05)
            }
        }
        let added = (0..<300).map { code in
            let (latitude, longitude) = place(&random)
            return station(Int64(10_000 + code), &random, latitude: latitude, longitude: longitude)
        }
        let closed = (0..<300).map { code in
            let (latitude, longitude) = place(&random)
            return station(Int64(20_000 + code), &random, latitude: latitude, longitude: longitude)
        }
        let index = AddedStations(added, radius: radius)
        var pairs = 0
        for old in closed {
            let candidates = index.candidates(for: old).map(\.code)
            #expect(candidates == candidates.sorted(), "in the order given, each once")
            #expect(Set(candidates).count == candidates.count)
            for new in added where new.name == old.name || new.group == old.group || (old.metres(to: new).map { $0 <= radius } ?? false) {
                pairs += 1
                #expect(candidates.contains(new.code), "\(old.code) → \(new.code) at \(old.metres(to: new) ?? -1) m, radius \(radius)")
            }
            #expect(index.named(old.name).map(\.code) == added.filter { $0.name == old.name }.map(\.code))
        }
        #expect(pairs > 0)
    }
}
