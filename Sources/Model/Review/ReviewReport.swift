import Foundation
import GRDB
import StationCheck
import StationDelta
import StationHistory
import StationLog
import StationSchema
import StationSupport
import StationWeights

/// Everything a curator reviews about one version before publishing it: what the review
/// page and its Markdown show (`ReviewPage`, `ReviewMarkdown`).
public struct ReviewReport: Sendable {
    /// The version: number, date, author, memo, changes.
    public var summary: VersionSummary
    /// Open connections at the version: the railways draw Japan.
    public var network: NetworkDrawing
    /// The version's changes: counted, listed and drawn within `limits`.
    public var overview: ReviewChanges
    /// The limits the page was gathered with.
    public var limits: ReviewLimits
    /// Findings the version brought.
    public var introducedFindings: ReviewFindings
    /// Findings the version kept from the one before.
    public var inheritedFindings: ReviewFindings
    /// Splits the version seems to call for and does not record.
    public var suggestions: [SplitSuggestion]
    /// What the version decided beside its rows: an import's merge, a revert's decisions.
    public var merge: ReviewMerge
    /// What a phone shows at three extents: the top pins by weight, then distance.
    public var pinMaps: [PinMap]
    /// The most pins a phone draws (the apps' default).
    public var pinCount: Int
    /// The newest version of the master: a release publishes it unless told another.
    public var newest: Int
    /// What a phone at each older version downloads to reach this one.
    public var deltas: [ReviewDelta]
    /// Rows of the full database (a new install or an app update), per table, closed ones included.
    public var fullDatabaseRows: [String: Int]
    /// Of which open stations.
    public var openStations: Int
    /// Where the map puts each introduced finding (by `FindingIdentity`), when its row has a
    /// place: the first `ReviewLimits.findingMarks` of them (`ReviewFindings.leading`).
    public var findingPlaces: [FindingIdentity: MapPlace]

    /// The changes listed in words (every one, unless a group is larger than the limits).
    public var changes: [ReviewChange] { overview.listed }

    /// How many error-level findings no waiver accepts: a release of this version refuses while there are any.
    public var blockingCount: Int { introducedFindings.blockingCount + inheritedFindings.blockingCount }

    /// The first of them, introduced ones first (`ReviewFindings.firstBlockingKept` of each list).
    public var firstBlocking: [CheckFinding] { introducedFindings.firstBlocking + inheritedFindings.firstBlocking }

    /// The splits of the version listed: each copies every phone's records of its old station to its new one.
    public var splits: [ReviewChange] { changes.filter { $0.kind == .duplicate } }

    /// How many splits the version records, listed or not.
    public var splitCount: Int { overview.counts[MasterTable.stations.name]?[.duplicate] ?? 0 }
}

/// A delta as the review measures it: what a phone at `from` downloads.
public struct ReviewDelta: Sendable, Equatable {
    /// The data version the phone is at.
    public var from: Int
    /// What it downloads, in bytes.
    public var gzipBytes: Int
    /// Statements the phone runs.
    public var statements: Int
}

/// A place on the map.
public struct MapPlace: Sendable, Equatable, Hashable {
    /// Degrees.
    public var latitude: Double, longitude: Double
}

/// One change of the version in words, with what the map needs to mark it.
public struct ReviewChange: Sendable, Equatable {
    /// How the map marks a changed station.
    public enum MapKind: String, Sendable, CaseIterable {
        /// `transferred`: the station passed to a line of another operator (its code kept).
        case new, closed, restored, moved, renamed, transferred, updated, duplicate
    }

    /// The master table of the row.
    public var table: String
    /// The row's key as in `updates.key_id`.
    public var key: String
    /// What the version did to it.
    public var kind: Update.Kind
    /// `八戸 (JR八戸線)`: the row's name, with its line for a station.
    public var title: String
    /// `line_cd 11415 JR北陸本線 → 99426 IRいしかわ鉄道線; moved 1.2 km`.
    public var words: String
    /// For a station (or a split's new station): its code, map kind and place.
    public var station: Int64?
    /// How the map marks it; nil for a row that is not drawn.
    public var mapKind: MapKind?
    /// Where the map marks it.
    public var latitude: Double?, longitude: Double?
    /// Where a moved station was, or a split's old station is.
    public var fromLatitude: Double?, fromLongitude: Double?
}

/// One open connection on the map, from station to station.
public struct NetworkSegment: Sendable, Equatable {
    /// The two ends, in degrees.
    public var fromLongitude: Double, fromLatitude: Double, toLongitude: Double, toLatitude: Double
}

/// The pins a phone shows at one extent, with the weights of the version.
public struct PinMap: Sendable {
    /// How wide a pin map is drawn, in pixels (its height follows the extent).
    public static let width = 300.0

    /// The extent drawn.
    public var extent: MapExtent
    /// How the top pins spread over it.
    public var spread: MapSpread
    /// Open stations in view `[lat, lon]`, one per pixel of the map, and the top pins
    /// `[lat, lon, weight]` in the client's order.
    public var stations: [[Double]]
    /// The top pins, `[lat, lon, weight]`, in the client's order.
    public var pins: [[Double]]
}

/// A master `review` cannot show (a version it does not have is `NoSuchVersion`).
public enum ReviewError: Error, LocalizedError, Equatable {
    case noVersions

    public var errorDescription: String? {
        switch self {
        case .noVersions:
            return "the master has no version to review yet (import or apply something first)"
        }
    }
}

extension MasterDatabase {
    /// Reads what `review` shows of `version` (default: the newest), in one read.
    public func review(version requested: Int? = nil, pins: Int = 150, limits: ReviewLimits = ReviewLimits()) throws -> ReviewReport {
        // One state from the version's number to its last pin, on two connections: the newest
        // version's network, then its rules a pass at a time on a twin, on the second core, while
        // this one reads the counts, the changes, the suggestions and the pins, then takes the
        // passes still left. Not `read`: a past version's findings rebuild the version before in
        // temp tables, which only this connection may write.
        let checks = ReviewCheckQueue()
        return try readingOneState(alongside: { db -> TwinReading? in
            let newest = try Self.dataVersion(db)
            let version = requested ?? newest
            guard newest > 0, version == newest else { return nil }
            let network = try ReviewReader(version: version, newest: newest, declared: self.declared).network(db, limit: limits.networkSegments)
            guard try version == 1 || RecordedFindings.isRecordedBefore(version - 1, db) else { return TwinReading(findings: nil, network: network) }
            let findings = try Self.reviewFindings(db, self.declared, version: version, newest: newest, limits: limits) { checks.next() }
            return TwinReading(findings: findings, network: network)
        }, handing: { db, twin in
            let newest = try Self.dataVersion(db)
            guard newest > 0 else { throw ReviewError.noVersions }
            let version = requested ?? newest
            try NoSuchVersion.require(version, newest: newest)
            let summary = try VersionSummary.all(db, only: version).first!
            let reader = ReviewReader(version: version, newest: newest, declared: declared)
            let overview = try reader.changes(db, counts: summary.counts, limits: limits)
            let suggestions = try SplitFinder.suggest(db, version: version)
            let merge = try ReviewMerge.read(version: version, memo: summary.memo, db)
            let pinMaps = try reader.pinMaps(db, pins: pins)
            let openStations = try reader.openStations(db), fullDatabaseRows = try reader.rowCounts(db)
            let deltas = try reader.deltas(db)
            // With a twin at work on the rules, the passes it has not taken yet one at a time;
            // alone, all of them in one pass (an older version's state is rebuilt for each).
            var findings = try Self.reviewFindings(db, declared, version: version, newest: newest, limits: limits,
                                                   nextPass: twin == nil || version != newest ? { checks.rest() } : { checks.next() })
            let twinReading = try twin?.wait()
            let network = try twinReading?.network ?? reader.network(db, limit: limits.networkSegments)
            if let twinFindings = twinReading?.findings {
                findings.merge(twinFindings)
            } else {
                // The twin checked nothing: whatever it left untaken is this connection's.
                findings.merge(try Self.reviewFindings(db, declared, version: version, newest: newest, limits: limits) { checks.rest() })
            }
            let (introduced, inherited) = findings.joined(limits: limits)
            return ReviewReport(
                summary: summary, network: network, overview: overview, limits: limits,
                introducedFindings: introduced,
                inheritedFindings: inherited,
                suggestions: suggestions,
                merge: merge,
                pinMaps: pinMaps, pinCount: pins,
                newest: newest, deltas: deltas, fullDatabaseRows: fullDatabaseRows, openStations: openStations,
                findingPlaces: try reader.places(of: introduced.leading, db))
        })
    }

    /// What the twin connection reads of the newest version: its network, and its findings when
    /// the version before's are kept (else they need temp tables, which only the main connection
    /// may write).
    private struct TwinReading: Sendable {
        var findings: ReviewFindingParts?
        var network: NetworkDrawing
    }

    /// The version's findings of the passes `nextPass` hands out until it is empty, as they
    /// stream from the rules, told into those it brought and those the version before had: for
    /// the newest version, as the import recorded them; else gathered in a temp table first,
    /// from the version before rebuilt.
    private static func reviewFindings(_ db: Database, _ declared: DeclaredSchema, version: Int, newest: Int, limits: ReviewLimits,
                                       nextPass: () -> Set<CheckRule>?) throws -> ReviewFindingParts {
        guard var pass = nextPass() else { return ReviewFindingParts() }
        let waived = try Waivers.identities(db)
        let before: FindingIdentityTable?
        if version > 1, version == newest, try RecordedFindings.isRecordedBefore(version - 1, db) {
            before = try FindingIdentityTable.recordedBefore(db)
        } else {
            before = version > 1
                ? try FindingIdentityTable.gathered(db, name: "review_findings_before", from: DataChecker(version: version - 1, newest: newest, limits: CheckLimits(), declared: declared))
                : nil
        }
        defer { try? before?.drop() }
        var parts = ReviewFindingParts()
        let checker = DataChecker(version: version, newest: newest, limits: CheckLimits(), declared: declared)
        while true {
            try checker.forEachFinding(db, rules: pass) { row, message in
                let isWaived = Waivers.accept(row, among: waived)
                if try before?.contains(row) == true {
                    parts.inherited[row.rule, default: ReviewFindings(limits: limits)].add(row, waived: isWaived, message: message)
                } else {
                    parts.introduced[row.rule, default: ReviewFindings(limits: limits)].add(row, waived: isWaived, message: message)
                }
            }
            guard let next = nextPass() else { return parts }
            pass = next
        }
    }
}
