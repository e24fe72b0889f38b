import Foundation

/// Equirectangular at Japan's middle latitude: a degree of longitude is cos 36° of a degree of
/// latitude; 100 map units to a degree of latitude.
package enum MapProjection {
    package static let scale = 100.0, lonFactor = cos(36 * Double.pi / 180)
    package static func x(_ lon: Double) -> Double { ((lon - 122) * lonFactor * scale * 10).rounded() / 10 }
    package static func y(_ lat: Double) -> Double { ((46 - lat) * scale * 10).rounded() / 10 }
    /// Below this width of view (map units, 1.5° of latitude) station names are drawn.
    package static let labelWidth = 150.0
}

/// The review page's map: the network, every changed station marked by kind with a colour and
/// a shape of its own, a split as an arrow old → new, the findings the version introduced, and
/// a legend whose counts are what is drawn. It opens on the extent of the changes. A kind with
/// more changes than `ReviewLimits.changesPerKind`, and a network larger than its limit, are
/// drawn as density (`DensityGrid`): a few paths, however many changes.
package struct ChangeMap {
    package let svg: String
    package let legend: String
    /// The view it opens on: the changes' extent with a margin (`x y width height`).
    package let home: (x: Double, y: Double, width: Double, height: Double)

    package static let colours: [ReviewChange.MapKind: String] = [
        .new: "#1b8a3a", .closed: "#c62828", .restored: "#00838f", .moved: "#ef6c00",
        .renamed: "#6a1b9a", .transferred: "#1565c0", .updated: "#546e7a", .duplicate: "#d81b60",
    ]

    /// Each kind's shape, within the unit square around (0, 0): a colour alone is not enough
    /// for one reader in twelve.
    package static let shapes: [ReviewChange.MapKind: String] = [
        .new: "M1 0A1 1 0 1 1 -1 0A1 1 0 1 1 1 0Z",
        .closed: "M-0.85 -0.85H0.85V0.85H-0.85Z",
        .restored: "M-0.35 -1H0.35V-0.35H1V0.35H0.35V1H-0.35V0.35H-1V-0.35H-0.35Z",
        .moved: "M0 -1.1L1.1 0L0 1.1L-1.1 0Z",
        .renamed: "M0 -1.1L1 0.8H-1Z",
        .transferred: "M0 1.1L1 -0.8H-1Z",
        .updated: "M-1 -0.45H1V0.45H-1Z",
        .duplicate: "M0 -1.15L0.3 -0.35L1.1 -0.35L0.45 0.15L0.7 1L0 0.5L-0.7 1L-0.45 0.15L-1.1 -0.35L-0.3 -0.35Z",
    ]
    package static let findingShape = "M0 -1.5A1.5 1.5 0 1 1 0 1.5A1.5 1.5 0 1 1 0 -1.5Z"

    package init(_ report: ReviewReport) {
        var all = Extent(), changed = Extent()
        let networkLayer = Self.networkLayer(report, extent: &all)
        let densityLayers = Self.densityLayers(report, extent: &changed)
        let marks = Self.markerLayers(report, extent: &changed)
        let findings = Self.findingLayer(report, extent: &changed)
        // The changes' extent; a version that changed no station with a place opens on the network.
        let view = changed.isEmpty ? (all.isEmpty ? Extent(minX: 0, minY: 0, maxX: 2600, maxY: 2200) : all) : changed
        let pad = max(15, 0.08 * max(view.maxX - view.minX, view.maxY - view.minY))
        home = (view.minX - pad, view.minY - pad, view.maxX - view.minX + 2 * pad, view.maxY - view.minY + 2 * pad)
        let box = [home.x, home.y, home.width, home.height].map(Self.fmt).joined(separator: " ")
        let arrows = ReviewChange.MapKind.allCases.map { kind in
            "<marker id=\"arrow-\(kind.rawValue)\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
                + "<path d=\"M0 0L10 5L0 10Z\" fill=\"\(Self.colours[kind]!)\"/></marker>"
        }.joined()
        svg = """
            <svg id="change-map" viewBox="\(box)" data-home="\(box)" data-label-width="\(Self.fmt(MapProjection.labelWidth))" preserveAspectRatio="xMidYMid meet" role="img" aria-label="The network and the changed stations">
            <defs>\(arrows)</defs>
            \(networkLayer)
            <g class="density-layers">\(densityLayers)</g>
            <g class="links">\(marks.links)</g>
            <g class="findings-marks">\(findings.layer)</g>
            <g class="markers">\(marks.markers)</g>
            <g class="labels">\(marks.labels)</g>
            </svg>
            """
        legend = Self.legend(report, drawn: marks.drawn, findingsDrawn: findings.drawn)
    }

    /// The network's segments as one path, or, larger than a browser draws quickly, its density.
    private static func networkLayer(_ report: ReviewReport, extent all: inout Extent) -> String {
        var network = ""
        network.reserveCapacity(report.network.segments.count * 30)
        for segment in report.network.segments {
            all.include(segment.fromLongitude, segment.fromLatitude); all.include(segment.toLongitude, segment.toLatitude)
            network += "M\(fmt(MapProjection.x(segment.fromLongitude))) \(fmt(MapProjection.y(segment.fromLatitude)))"
                + "L\(fmt(MapProjection.x(segment.toLongitude))) \(fmt(MapProjection.y(segment.toLatitude)))"
        }
        guard let density = report.network.density else { return "<path class=\"network\" d=\"\(network)\"/>" }
        all.include(density)
        return densityLayer(density, class: "network-density", kind: nil, fill: "#9fb3c8")
    }

    /// Kinds with too many changes for markers: every change counted in cells of the map.
    private static func densityLayers(_ report: ReviewReport, extent changed: inout Extent) -> String {
        var layers = ""
        for kind in ReviewChange.MapKind.allCases {
            guard let density = report.overview.density[kind] else { continue }
            changed.include(density)
            layers += densityLayer(density, class: "density", kind: kind, fill: colours[kind]!)
        }
        return layers
    }

    /// Each marked change: its marker and label, and a split's or a move's arrow; how many of
    /// each kind are drawn (a station once, a split's new station as the split).
    private static func markerLayers(_ report: ReviewReport, extent changed: inout Extent)
        -> (links: String, markers: String, labels: String, drawn: [ReviewChange.MapKind: Int]) {
        var links = "", markers = "", labels = ""
        var drawn: [ReviewChange.MapKind: Int] = [:]
        var marked = Set<Int64>()
        for change in report.overview.markers {
            guard let code = change.station, let kind = change.mapKind, let lat = change.latitude, let lon = change.longitude else { continue }
            changed.include(lon, lat)
            let x = fmt(MapProjection.x(lon)), y = fmt(MapProjection.y(lat))
            if let fromLat = change.fromLatitude, let fromLon = change.fromLongitude {
                changed.include(fromLon, fromLat)
                // A split points from the old station to the new; a move from where the station was.
                links += "<line class=\"link \(kind.rawValue)\" data-link=\"\(kind.rawValue)\" x1=\"\(fmt(MapProjection.x(fromLon)))\" "
                    + "y1=\"\(fmt(MapProjection.y(fromLat)))\" x2=\"\(x)\" y2=\"\(y)\" stroke=\"\(colours[kind]!)\" marker-end=\"url(#arrow-\(kind.rawValue))\"/>"
            }
            guard marked.insert(code).inserted else { continue }
            drawn[kind, default: 0] += 1
            let text = "\(change.title): \(change.words)"
            markers += "<path class=\"marker\" data-station=\"\(code)\" data-kind=\"\(kind.rawValue)\" data-text=\"\(ReviewPage.escape(text))\" "
                + "data-x=\"\(x)\" data-y=\"\(y)\" transform=\"translate(\(x) \(y)) scale(5)\" d=\"\(shapes[kind]!)\" fill=\"\(colours[kind]!)\">"
                + "<title>\(ReviewPage.escape(text))</title></path>"
            var name = change.title.components(separatedBy: " (")[0]
            // A split's title names the new station by its code first: the label is its name.
            if change.kind == .duplicate, let space = name.firstIndex(of: " ") { name = String(name[name.index(after: space)...]) }
            labels += "<text class=\"label\" data-station=\"\(code)\" x=\"\(x)\" y=\"\(y)\">\(ReviewPage.escape(name))</text>"
        }
        return (links, markers, labels, drawn)
    }

    /// The leading findings the version introduced, where they have a place.
    private static func findingLayer(_ report: ReviewReport, extent changed: inout Extent) -> (layer: String, drawn: Int) {
        var findings = "", drawn = 0
        for finding in report.introducedFindings.leading {
            guard let place = report.findingPlaces[finding.identity] else { continue }
            changed.include(place.longitude, place.latitude)
            let x = fmt(MapProjection.x(place.longitude)), y = fmt(MapProjection.y(place.latitude))
            findings += "<path class=\"finding-mark \(finding.severity.rawValue)\" data-kind=\"finding\" data-rule=\"\(finding.rule.rawValue)\" "
                + "data-x=\"\(x)\" data-y=\"\(y)\" transform=\"translate(\(x) \(y)) scale(5)\" d=\"\(findingShape)\">"
                + "<title>\(ReviewPage.escape("\(finding.table) \(finding.key): \(finding.rule.rawValue): \(finding.message)"))</title></path>"
            drawn += 1
        }
        return (findings, drawn)
    }

    /// The legend: each kind's shape and what is drawn of it (markers, or a count as density),
    /// the findings' mark and how many of them.
    private static func legend(_ report: ReviewReport, drawn: [ReviewChange.MapKind: Int], findingsDrawn: Int) -> String {
        "<div class=\"legend\" id=\"legend\">" + ReviewChange.MapKind.allCases.map { kind in
            "<label><input type=\"checkbox\" data-legend=\"\(kind.rawValue)\" checked>"
                + "<svg class=\"swatch\" viewBox=\"-1.3 -1.3 2.6 2.6\"><path d=\"\(shapes[kind]!)\" fill=\"\(colours[kind]!)\"/></svg>"
                + "\(kind.rawValue) " + (report.overview.density[kind] != nil
                    ? "<small data-density=\"\(kind.rawValue)\">\(report.overview.mapCounts[kind] ?? 0) as density</small></label>"
                    : "<small data-count=\"\(kind.rawValue)\">\(drawn[kind] ?? 0)</small></label>")
        }.joined()
            + "<label><input type=\"checkbox\" data-legend=\"finding\" checked><svg class=\"swatch\" viewBox=\"-1.8 -1.8 3.6 3.6\"><path class=\"finding-mark error\" d=\"\(findingShape)\"/></svg>"
            + "finding <small data-count=\"finding\">\(findingsDrawn)</small>"
            + (report.introducedFindings.total > report.limits.findingMarks
                ? " <small>(the first \(findingsDrawn) of \(report.introducedFindings.total))</small>" : "")
            + "</label></div>"
    }

    private struct Extent {
        package var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        package var isEmpty: Bool { minX > maxX }

        package mutating func include(_ grid: DensityGrid) {
            guard let extent = grid.extent else { return }
            minX = min(minX, extent.minX); maxX = max(maxX, extent.maxX)
            minY = min(minY, extent.minY); maxY = max(maxY, extent.maxY)
        }

        package mutating func include(_ lon: Double, _ lat: Double) {
            minX = min(minX, MapProjection.x(lon)); maxX = max(maxX, MapProjection.x(lon))
            minY = min(minY, MapProjection.y(lat)); maxY = max(maxY, MapProjection.y(lat))
        }
    }

    private static func fmt(_ value: Double) -> String { ReviewPage.fmt((value * 10).rounded() / 10) }

    /// One path per band of count, fainter where fewer: the legend's checkbox of `kind` hides it.
    private static func densityLayer(_ grid: DensityGrid, class name: String, kind: ReviewChange.MapKind?, fill: String) -> String {
        zip(grid.bands(), DensityGrid.bandOpacities).compactMap { path, opacity in
            path.isEmpty ? nil : "<path class=\"\(name)\"" + (kind.map { " data-kind=\"\($0.rawValue)\"" } ?? "")
                + " fill=\"\(fill)\" fill-opacity=\"\(opacity)\" d=\"\(path)\"/>"
        }.joined()
    }
}
