import Foundation
import GRDB
import GRDBSQLite
import StationHistory
import StationSchema
import StationSupport

/// A version's checks as an import, a plan and a release run them: the findings a version
/// introduces (checked in its scope where the version before's are recorded), and the verdict
/// a release goes by.
package enum VersionChecks {
    /// The findings that `version` (the newest, maybe not committed yet) brings that the
    /// version before did not have, waivers applied: what an import or a plan ends its report
    /// with. The version's findings are recorded (`RecordedFindings`) as they stream by, and only
    /// the counts and the first of each rule are kept: a version of a million findings takes the
    /// memory of a few hundred.
    ///
    /// When the version before's findings are recorded (under these rules), only the rows in the
    /// version's `CheckScope` are checked and the record carried forward: at a million stations a
    /// 1 % import's checks take a fraction of a full pass.
    ///
    /// `touchingBefore`: see `CheckScope.build`. `checkedAhead`: a first version's rules, started
    /// on a copy before its log was written (`FirstVersionCheck`); what they found is recorded here.
    package static func introducedFindings(_ db: Database, _ declared: DeclaredSchema, version: Int, touchingBefore: [CheckScope.ConnectionKey]? = nil,
                                           checkedAhead: FirstVersionCheck? = nil) throws -> IntroducedFindings {
        if let checkedAhead {
            precondition(version == 1, "only a first version is checked ahead")
            let outcome = try checkedAhead.wait()
            let recording = try FindingIdentityTable.temporary(db, name: "findings_now", appended: true)
            defer { try? recording.drop() }
            try outcome.found.forEach { try recording.add($0) }
            try RecordedFindings.replaceAll(version: version, with: recording, before: nil, db)
            return outcome.introduced
        }
        let waived = try Waivers.identities(db)
        var introduced = IntroducedFindings()
        let add = { (found: FoundRow, message: () -> String) in
            introduced.add(found, waived: Waivers.accept(found, among: waived), message: message)
        }
        if version > 1, try RecordedFindings.isRecorded(version - 1, db) {
            let scope = try CheckScope.build(db, version: version, touchingBefore: touchingBefore)
            defer { try? CheckScope.drop(db) }
            let found = try FindingIdentityTable.temporary(db, name: "found_findings", appended: true)
            defer { try? found.drop() }
            let recorded = try FindingIdentityTable.recorded(db)
            try DataChecker(version: version, newest: version, limits: CheckLimits(), scope: scope, declared: declared).forEachFinding(db) { row, message in
                try found.add(row)
                if try !recorded.contains(row) { add(row, message) }
            }
            try RecordedFindings.carryForward(to: version, replacingScopeWith: found, db)
            return introduced
        }
        // No record to start from: the version before is checked from the history, for its
        // identities alone, and this version checked whole.
        let before = version > 1
            ? try FindingIdentityTable.gathered(db, name: "findings_before", from: DataChecker(version: version - 1, newest: version, limits: CheckLimits(), declared: declared))
            : nil
        defer { try? before?.drop() }
        let recording = try FindingIdentityTable.temporary(db, name: "findings_now", appended: true)
        defer { try? recording.drop() }
        // Every row of a first version was written under the master's CHECKs, so none can be
        // outside its domain: that rule's scan of every column is spared.
        var rules = Set(CheckRule.allCases)
        if version == 1 { rules.remove(.valueOutsideDomain) }
        try DataChecker(version: version, newest: version, limits: CheckLimits(), declared: declared).forEachFinding(db, rules: rules) { row, message in
            try recording.add(row)
            if try before?.contains(row) != true { add(row, message) }
        }
        try RecordedFindings.replaceAll(version: version, with: recording, before: before, db)
        return introduced
    }

    /// The checks a release makes of `version`: their tally, and every error-level finding no
    /// waiver accepts (a release with any is refused).
    ///
    /// The newest version's recorded findings (made at its commit, under these rules and the
    /// default limits, and equal to a full pass: `IncrementalCheckTests`) stand for the pass
    /// when none of them blocks: the pass is a large share of a release.
    /// Anything else, and a version with a blocking finding (to name it), is checked whole.
    package static func releaseChecks(_ db: Database, _ declared: DeclaredSchema, version: Int, newest: Int, limits: CheckLimits) throws -> (tally: CheckTally, blocking: [CheckFinding]) {
        if version == newest, limits == CheckLimits(), let tally = try recordedTally(db, version: version),
           tally.count(.error, waived: false) == 0 {
            return (tally, [])
        }
        // Streamed: only the blocking findings are put in words and kept.
        let waived = try Waivers.identities(db)
        var tally = CheckTally(version: version)
        var blocking: [CheckFinding] = []
        try DataChecker(version: version, newest: newest, limits: limits, declared: declared).forEachFinding(db) { found, message in
            let isWaived = Waivers.accept(found, among: waived)
            if found.rule.severity == .error && !isWaived {
                blocking.append(found.finding(message()))
                tally.add(blocking.last!)
            } else {
                tally.add(severity: found.rule.severity, waived: isWaived)
            }
        }
        return (tally, blocking)
    }

    /// The tally of the findings recorded at `version`'s commit (the newest version's, under the
    /// default limits), today's waivers applied; nil when none are recorded or a recorded rule
    /// is one this binary does not have.
    package static func recordedTally(_ db: Database, version: Int) throws -> CheckTally? {
        guard let counts = try RecordedFindings.counts(db, version: version) else { return nil }
        return CheckTally(version: version, counts: counts)
    }
}
