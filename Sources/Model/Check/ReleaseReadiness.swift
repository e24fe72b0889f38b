import GRDB
import StationSchema
import StationSupport

/// Whether `release` would publish the newest version today: what a command that wrote a
/// version says at its end, with the one next step.
public struct ReleaseReadiness: Sendable, Equatable {
    /// The newest data version (0: nothing imported).
    public let version: Int
    /// Error-level findings no waiver accepts: a release refuses the version while there are any.
    public let unwaivedErrors: Int

    /// Whether `release` would publish it: something imported and no unwaived error.
    public var isReleasable: Bool { version > 0 && unwaivedErrors == 0 }

    /// "Next: review, then release (a release would publish version 3 today).", each command as the
    /// program spells it (`CommandHint`).
    public var nextStep: String {
        if version == 0 { return "Next: \(CommandHint("import", "DIR")) (nothing has been imported yet; a release would be refused)." }
        if unwaivedErrors > 0 {
            return "Next: \(CommandHint("check")) (a release would be refused today: \(unwaivedErrors) error\(unwaivedErrors == 1 ? "" : "s") not waived; fix or waive \(unwaivedErrors == 1 ? "it" : "them"))."
        }
        return "Next: \(CommandHint("review")), then \(CommandHint("release")) (a release would publish version \(version) today)."
    }
}

extension Checker {
    /// As `release` decides it (its default limits): from the newest version's recorded
    /// findings when it has them, so that it costs no pass over a million stations.
    public func releaseReadiness() throws -> ReleaseReadiness {
        try master.readingOneState { db in
            let newest = try MasterDatabase.dataVersion(db)
            guard newest > 0 else { return ReleaseReadiness(version: 0, unwaivedErrors: 0) }
            if let tally = try VersionChecks.recordedTally(db, version: newest) {
                return ReleaseReadiness(version: newest, unwaivedErrors: tally.count(.error, waived: false))
            }
            let waived = try Waivers.identities(db)
            var unwaivedErrors = 0
            try DataChecker(version: newest, newest: newest, limits: CheckLimits(), declared: master.declared).forEachFinding(db) { found, _ in
                if found.rule.severity == .error && !Waivers.accept(found, among: waived) { unwaivedErrors += 1 }
            }
            return ReleaseReadiness(version: newest, unwaivedErrors: unwaivedErrors)
        }
    }
}
