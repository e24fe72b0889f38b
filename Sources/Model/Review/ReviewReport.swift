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
