import Foundation
import StationCheck
import StationSchema

/// How much of a version the review page draws and lists one by one. Above these a page of a
/// million changes would weigh a gigabyte and open in no browser, so a large kind is drawn as
/// density and listed by its first rows, with the command that lists the rest.
public struct ReviewLimits: Sendable, Equatable {
    /// Changes of one kind (of a table, or a map kind) listed in words and drawn as markers; a
    /// kind with more lists `listedBeyond` of them, and its stations are drawn as density.
    public var changesPerKind = 2_000
    /// How many changes a kind larger than `changesPerKind` lists: its first (in key order for a
    /// station's update, else as the log recorded them, which for an import is key order too).
    public var listedBeyond = 200
    /// Open connections drawn as lines; a network with more is drawn as density.
    public var networkSegments = 50_000
    /// Findings listed one by one; above, the first `findingsPerRule` of each rule are.
    public var findingsListed = 500
    /// How many findings of each rule a long list shows.
    public var findingsPerRule = IntroducedFindings.shownPerRule
    /// Introduced findings marked on the map (one query each for its place).
    public var findingMarks = 2_000

    /// The limits of a default `review`.
    public init() {}
}

/// How many of something fall in each cell of a square grid over the map (map units, as
/// `MapProjection`): what the page draws instead of a marker per change when there are too many.
public struct DensityGrid: Sendable, Equatable {
    /// The side of a cell in map units: 5 is 0.05° of latitude, about 5.5 km.
    public static let cellSize = 5.0

    /// Cell (column, row) packed as `column << 32 | row` → how many fall in it.
    public private(set) var cells: [Int64: Int] = [:]
    /// How many were added (with a place).
    public private(set) var total = 0

    /// Creates an empty grid.
    public init() {}

    /// Counts one more at a place in degrees.
    public mutating func add(latitude: Double, longitude: Double) {
        let column = Int64((MapProjection.x(longitude) / Self.cellSize).rounded(.down))
        let row = Int64((MapProjection.y(latitude) / Self.cellSize).rounded(.down))
        cells[column << 32 | (row & 0xFFFF_FFFF), default: 0] += 1
        total += 1
    }

    /// The occupied cells' extent in map units, nil when empty.
    package var extent: (minX: Double, minY: Double, maxX: Double, maxY: Double)? {
        guard !cells.isEmpty else { return nil }
        var minX = Int64.max, minY = Int64.max, maxX = Int64.min, maxY = Int64.min
        for key in cells.keys {
            let (column, row) = Self.unpack(key)
            minX = min(minX, column); maxX = max(maxX, column); minY = min(minY, row); maxY = max(maxY, row)
        }
        return (Double(minX) * Self.cellSize, Double(minY) * Self.cellSize, Double(maxX + 1) * Self.cellSize, Double(maxY + 1) * Self.cellSize)
    }

    /// The SVG path data of the cells, one string per band of count (1, 2–9, 10–99, 100 and
    /// more): each band is one path element drawn with its own opacity, and the cells of a row
    /// that touch are one rectangle, so a million changes make a few hundred kB.
    package func bands() -> [String] {
        var byBand: [[(column: Int64, row: Int64)]] = Array(repeating: [], count: Self.bandCount)
        for (key, count) in cells {
            let (column, row) = Self.unpack(key)
            byBand[Self.band(of: count)].append((column, row))
        }
        return byBand.map { cells in
            var path = ""
            let sorted = cells.sorted { ($0.row, $0.column) < ($1.row, $1.column) }
            var index = 0
            while index < sorted.count {
                let start = sorted[index]
                var end = index
                while end + 1 < sorted.count, sorted[end + 1].row == start.row, sorted[end + 1].column == sorted[end].column + 1 { end += 1 }
                let width = Double(end - index + 1) * Self.cellSize
                path += "M\(ReviewPage.fmt(Double(start.column) * Self.cellSize)) \(ReviewPage.fmt(Double(start.row) * Self.cellSize))"
                    + "h\(ReviewPage.fmt(width))v\(ReviewPage.fmt(Self.cellSize))h-\(ReviewPage.fmt(width))z"
                index = end + 1
            }
            return path
        }
    }

    /// Opacity of each band, faint to full.
    package static let bandOpacities = [0.3, 0.5, 0.75, 1.0]
    private static let bandCount = bandOpacities.count

    private static func band(of count: Int) -> Int { count >= 100 ? 3 : count >= 10 ? 2 : count >= 2 ? 1 : 0 }

    private static func unpack(_ key: Int64) -> (Int64, Int64) {
        (key >> 32, Int64(Int32(truncatingIfNeeded: key)))
    }
}

/// The network as the page draws it: its segments, or their density once there are more than
/// `ReviewLimits.networkSegments`.
public struct NetworkDrawing: Sendable {
    /// The segments, while there are no more than the limit; empty once drawn as density.
    public private(set) var segments: [NetworkSegment] = []
    /// The segments' midpoints, counted per cell, once over the limit.
    public private(set) var density: DensityGrid?
    /// Every open connection with two places.
    public private(set) var total = 0
    private let limit: Int

    /// An empty drawing that keeps up to `limit` segments.
    public init(limit: Int) { self.limit = limit }

    /// Adds one open connection.
    public mutating func add(_ segment: NetworkSegment) {
        total += 1
        if density == nil && segments.count < limit {
            segments.append(segment)
            return
        }
        if density == nil {
            var grid = DensityGrid()
            for kept in segments { grid.addMidpoint(of: kept) }
            density = grid
            segments = []
        }
        density!.addMidpoint(of: segment)
    }
}

extension DensityGrid {
    fileprivate mutating func addMidpoint(of segment: NetworkSegment) {
        add(latitude: (segment.fromLatitude + segment.toLatitude) / 2, longitude: (segment.fromLongitude + segment.toLongitude) / 2)
    }
}

/// What the page shows of the changes, gathered as the reader streams them in key order:
/// every change up to the limits, then counts and density.
public struct ReviewChanges: Sendable {
    /// The changes listed in words: all of a kind of a table up to `changesPerKind`, the first
    /// `listedBeyond` of a larger one. In table order, then key order; splits last.
    public internal(set) var listed: [ReviewChange] = []
    /// Table → kind → changes in the version (every one, listed or not).
    public internal(set) var counts: [String: [Update.Kind: Int]] = [:]
    /// The changed stations drawn as markers, per map kind, while a kind has no more than
    /// `changesPerKind`.
    public internal(set) var markers: [ReviewChange] = []
    /// Map kind → changed stations of that kind with a place (drawn or not).
    public internal(set) var mapCounts: [ReviewChange.MapKind: Int] = [:]
    /// Map kinds drawn as density: every changed station of the kind, counted per cell.
    public internal(set) var density: [ReviewChange.MapKind: DensityGrid] = [:]

    /// Changes of a group that are not listed.
    public func unlisted(table: String, kind: Update.Kind) -> Int {
        (counts[table]?[kind] ?? 0) - listed.lazy.filter { $0.table == table && $0.kind == kind }.count
    }

    /// Every change, listed or not.
    public var total: Int { counts.values.flatMap(\.values).reduce(0, +) }
}
