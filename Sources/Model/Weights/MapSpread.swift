import Foundation
import GRDB
import StationSchema

/// A map extent a client may show.
public struct MapExtent: Codable, Sendable {
    /// What a curator calls it (`Kanto`).
    public var name: String
    /// Its bounds, in degrees.
    public var south: Double, west: Double, north: Double, east: Double

    /// An extent from its bounds.
    public init(name: String, south: Double, west: Double, north: Double, east: Double) {
        self.name = name
        self.south = south; self.west = west; self.north = north; self.east = east
    }

    /// The height in pixels of a map of this extent `width` pixels wide (equirectangular at its middle latitude).
    public func pixelHeight(width: Double) -> Double {
        let lonFactor = cos((south + north) / 2 * Double.pi / 180)
        return (width * (north - south) / ((east - west) * lonFactor)).rounded()
    }

    /// Where a place falls on a map of this extent `width` pixels wide, in pixels from its top-left corner.
    public func pixel(latitude: Double, longitude: Double, width: Double) -> (x: Double, y: Double) {
        ((longitude - west) / (east - west) * width, (north - latitude) / (north - south) * pixelHeight(width: width))
    }

    /// The extents `weights` and the review measure: all Japan, Kanto, Tokyo's 23 wards.
    public static let examples = [
        MapExtent(name: "all Japan", south: 24.0, west: 122.9, north: 45.6, east: 146.0),
        MapExtent(name: "Kanto", south: 34.9, west: 138.4, north: 37.2, east: 140.9),
        MapExtent(name: "Tokyo 23 wards", south: 35.52, west: 139.56, north: 35.82, east: 139.92),
    ]
}

/// How the pins a client shows spread over an extent: the extent is cut into an 8 × 8
/// grid, and `covered` counts the cells (among those holding any open station) that get
/// at least one of the top `pins` stations.
public struct MapSpread: Codable, Sendable {
    /// The extent's name.
    public var extent: String
    /// Open stations in the extent.
    public var stationsInView: Int
    /// Cells of the 8 × 8 grid that hold an open station.
    public var cellsWithStations: Int
    /// Cells reached by the top pins ordered by weight, then distance from the centre.
    public var coveredByWeight: Int
    /// Cells reached if every station had the same weight (distance from the centre only).
    public var coveredWithoutWeights: Int
}

extension Weigher {
    /// The client's map query (DOMAIN.md): open stations inside the extent, by weight, then by
    /// squared distance from the centre, up to `pins`; and how they spread.
    public func mapSpread(_ extents: [MapExtent] = MapExtent.examples, pins: Int = 150, grid: Int = 8) throws -> [MapSpread] {
        try master.read { db in try MapGeometry.spread(db, extents, pins: pins, grid: grid) }
    }
}

/// An open station's place and weight, as the client's map query reads it.
package struct MapPoint {
    package let latitude: Double, longitude: Double, weight: Int
}

/// The client's map query in memory: the open stations in view of an extent, the pins it shows
/// and how they spread over its grid (`MapSpread`).
package enum MapGeometry {
    /// The same over `stations` (SQL of a table or a past version's rows).
    package static func spread(_ db: Database, _ extents: [MapExtent], pins: Int = 150, grid: Int = 8, stations: String = "stations") throws -> [MapSpread] {
        spread(of: try openPlaces(db, stations: stations), extents, pins: pins, grid: grid)
    }

    /// The open stations with a place, in the table's order: read once for every extent.
    package static func openPlaces(_ db: Database, stations: String = "stations") throws -> [MapPoint] {
        // A cursor, not `fetchAll`: a million GRDB rows would outweigh the points tenfold.
        var open: [MapPoint] = []
        let rows = try Row.fetchCursor(db, sql: """
            SELECT lat, lon, weight FROM \(stations) WHERE e_status <> \(MasterTable.closedStatus) AND lat IS NOT NULL AND lon IS NOT NULL
            """)
        while let row = try rows.next() { open.append(MapPoint(latitude: row[0], longitude: row[1], weight: row[2])) }
        return open
    }

    /// The open stations in view of `extent`, with their squared distance from its centre (the
    /// client's second order), in the order of `open`.
    private static func candidates(in extent: MapExtent, of open: [MapPoint]) -> [PinCandidate] {
        let centreLat = (extent.south + extent.north) / 2, centreLon = (extent.west + extent.east) / 2
        return open.filter {
            (extent.south...extent.north).contains($0.latitude) && (extent.west...extent.east).contains($0.longitude)
        }.map {
            PinCandidate(latitude: $0.latitude, longitude: $0.longitude, weight: $0.weight,
                         distance: ($0.latitude - centreLat) * ($0.latitude - centreLat) + ($0.longitude - centreLon) * ($0.longitude - centreLon))
        }
    }

    /// The same over open stations in memory (weights not committed yet).
    package static func spread(of open: [MapPoint], _ extents: [MapExtent] = MapExtent.examples, pins: Int = 150, grid: Int = 8) -> [MapSpread] {
        extents.map { extent in
            let rows = candidates(in: extent, of: open)
            func cell(_ station: PinCandidate) -> Int {
                let y = min(grid - 1, Int((station.latitude - extent.south) / (extent.north - extent.south) * Double(grid)))
                let x = min(grid - 1, Int((station.longitude - extent.west) / (extent.east - extent.west) * Double(grid)))
                return y * grid + x
            }
            let byWeight = rows.sorted { ($0.weight, $0.distance) < ($1.weight, $1.distance) }.prefix(pins)
            let byDistance = rows.sorted { $0.distance < $1.distance }.prefix(pins)
            return MapSpread(
                extent: extent.name, stationsInView: rows.count, cellsWithStations: Set(rows.map(cell)).count,
                coveredByWeight: Set(byWeight.map(cell)).count, coveredWithoutWeights: Set(byDistance.map(cell)).count)
        }
    }

    /// Open stations in view `[lat, lon]`, thinned to the first in each cell of the pixel grid of a
    /// map `width` pixels wide (a map draws no more dots than it has pixels; all Japan at 1M stations
    /// would be a million), and the top `pins` in the client's order `[lat, lon, weight]`, from the
    /// open stations `openPlaces` read (one read for every map, not a scan of the master each).
    package static func pinsInView(of open: [MapPoint], _ extent: MapExtent, pins: Int, width: Double) -> ([[Double]], [[Double]]) {
        let rows = candidates(in: extent, of: open)
        var occupied = Set<Int>(), dots: [[Double]] = []
        for row in rows {
            let (x, y) = extent.pixel(latitude: row.latitude, longitude: row.longitude, width: width)
            if occupied.insert(Int(y) * (Int(width) + 1) + Int(x)).inserted { dots.append([row.latitude, row.longitude]) }
        }
        let top = rows.sorted { ($0.weight, $0.distance) < ($1.weight, $1.distance) }.prefix(pins)
        return (dots, top.map { [$0.latitude, $0.longitude, Double($0.weight)] })
    }

    private struct PinCandidate {
        package let latitude: Double, longitude: Double, weight: Int, distance: Double
    }
}
