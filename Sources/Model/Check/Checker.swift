import Foundation
import GRDB
import GRDBSQLite
import StationHistory
import StationSchema
import StationSupport

/// Checks a master's data by every rule (`DataChecker` runs them), records waivers, tells whether
/// the newest version may be released, and suggests likely station splits.
///
/// A capability over the thin `MasterDatabase` handle, as GRDB's `DatabaseMigrator` takes a
/// writer: `try Checker(master).…`.
public struct Checker: Sendable {
    /// The master it checks.
    public let master: MasterDatabase

    /// A checker of `master`.
    public init(_ master: MasterDatabase) {
        self.master = master
    }
}

extension Checker {
    /// Every rule over the master at `version` (default: the newest), errors first, each
    /// finding marked waived when a curator accepted it. Holds every finding: at any size,
    /// `check(version:limits:rules:each:)` streams them.
    ///
    /// - Throws: `NoSuchVersion` for a version the master does not have.
    public func check(version: Int? = nil, limits: CheckLimits = CheckLimits()) throws -> CheckReport {
        var findings: [CheckFinding] = []
        let outcome = try check(version: version, limits: limits) { findings.append($0) }
        return CheckReport(version: outcome.tally.version, findings: findings)
    }

    /// The rules of `rules` over the master at `version` (default: the newest): each finding,
    /// waived or not, handed to `body` as it is found, errors first, then by rule, table and key.
    /// A million findings stream in the memory of one.
    ///
    /// - Returns: how many there were, and which waivers' findings went by.
    /// - Throws: `NoSuchVersion` for a version the master does not have.
    public func check(version: Int? = nil, limits: CheckLimits = CheckLimits(), rules: Set<CheckRule> = Set(CheckRule.allCases),
                      each body: (CheckFinding) throws -> Void) throws -> CheckOutcome {
        // Not `read`: an older version is rebuilt in temp tables.
        try master.readingOneState { db in
            let newest = try MasterDatabase.dataVersion(db)
            let version = version ?? newest
            try NoSuchVersion.require(version, newest: newest)
            let waivers = try Waivers.identities(db)
            var outcome = CheckOutcome(tally: CheckTally(version: version), rules: rules)
            try DataChecker(version: version, newest: newest, limits: limits, declared: master.declared).forEachFinding(db, rules: rules) { found, message in
                var finding = found.finding(message())
                finding.waived = Waivers.accept(found, among: waivers)
                if finding.waived { outcome.waiversMet.insert(found.identity) }
                outcome.tally.add(finding)
                try body(finding)
            }
            return outcome
        }
    }
}
