import Foundation
import GRDB
import StationCheck
import StationDelta
import StationHistory
import StationLog
import StationSchema
import StationSupport
import StationWeights

/// Reviews one version of a master: what it changed, its findings, the map of its changes.
///
/// A capability over the thin `MasterDatabase` handle, as GRDB's `DatabaseMigrator` takes a
/// writer: `try Reviewer(master).…`.
public struct Reviewer: Sendable {
    /// The master it reviews.
    public let master: MasterDatabase

    /// A reviewer of `master`'s versions.
    public init(_ master: MasterDatabase) {
        self.master = master
    }
}

extension Reviewer {
    /// Reads what `review` shows of `version` (default: the newest), in one read.
    public func review(version requested: Int? = nil, pins: Int = 150, limits: ReviewLimits = ReviewLimits()) throws -> ReviewReport {
        // One state from the version's number to its last pin, on two connections: the newest
        // version's network, then its rules a pass at a time on a twin, on the second core, while
        // this one reads the counts, the changes, the suggestions and the pins, then takes the
        // passes still left. Not `read`: a past version's findings rebuild the version before in
        // temp tables, which only this connection may write.
        let checks = ReviewCheckQueue()
        return try master.readingOneState(alongside: { db -> TwinReading? in
            let newest = try MasterDatabase.dataVersion(db)
            let version = requested ?? newest
            guard newest > 0, version == newest else { return nil }
            let network = try ReviewReader(version: version, newest: newest, declared: master.declared).network(db, limit: limits.networkSegments)
            guard try version == 1 || RecordedFindings.isRecordedBefore(version - 1, db) else { return TwinReading(findings: nil, network: network) }
            let findings = try Self.reviewFindings(db, master.declared, version: version, newest: newest, limits: limits) { checks.next() }
            return TwinReading(findings: findings, network: network)
        }, handing: { db, twin in
            let newest = try MasterDatabase.dataVersion(db)
            guard newest > 0 else { throw ReviewError.noVersions }
            let version = requested ?? newest
            try NoSuchVersion.require(version, newest: newest)
            let summary = try VersionSummary.all(db, only: version).first!
            let reader = ReviewReader(version: version, newest: newest, declared: master.declared)
            let overview = try reader.changes(db, counts: summary.counts, limits: limits)
            let suggestions = try SplitFinder.suggest(db, version: version)
            let merge = try ReviewMerge.read(version: version, memo: summary.memo, db)
            let pinMaps = try reader.pinMaps(db, pins: pins)
            let openStations = try reader.openStations(db), fullDatabaseRows = try reader.rowCounts(db)
            let deltas = try reader.deltas(db)
            // With a twin at work on the rules, the passes it has not taken yet one at a time;
            // alone, all of them in one pass (an older version's state is rebuilt for each).
            var findings = try Self.reviewFindings(db, master.declared, version: version, newest: newest, limits: limits,
                                                   nextPass: twin == nil || version != newest ? { checks.rest() } : { checks.next() })
            let twinReading = try twin?.wait()
            let network = try twinReading?.network ?? reader.network(db, limit: limits.networkSegments)
            if let twinFindings = twinReading?.findings {
                findings.merge(twinFindings)
            } else {
                // The twin checked nothing: whatever it left untaken is this connection's.
                findings.merge(try Self.reviewFindings(db, master.declared, version: version, newest: newest, limits: limits) { checks.rest() })
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
