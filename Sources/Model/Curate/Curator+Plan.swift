import GRDB
import StationSchema
import StationSupport
import StationVersion

extension Curator {
    /// Applies curated operations (a plan, or one command's operation) as one new version,
    /// all or nothing.
    ///
    /// - Parameters:
    ///   - operations: the operations, each with the plan line (or command) it came from.
    ///   - memo: the version's memo, shown by `versions` and `log`.
    ///   - dryRun: report what would be written (updates rows, rows before → after)
    ///     and write nothing.
    /// - Throws: `InputError` naming the plan's line, `CurationError`, `MasterDatabaseError`.
    @discardableResult
    public func apply(_ operations: [LocatedOperation], memo: String? = nil, dryRun: Bool = false) throws -> ChangeReport {
        defer { Progress.finish() }
        return try master.write { db in
            let state = WorkingState(db: db, master.declared)
            var applier = PlanApplier(state: state)
            Progress.phase("applying operations", total: operations.count)
            for (index, operation) in operations.enumerated() {
                try applier.apply(operation)
                Progress.update(index + 1)
            }
            Progress.phase("writing and checking the version")
            var report = try commit(state.batch, memo: memo, dryRun: dryRun, in: db)
            report.warnings += applier.notes
            return (report, report.committed)
        }
    }

    /// Applies a plan file: its memo unless `memo` is given.
    @discardableResult
    public func apply(planAt path: String, memo: String? = nil, dryRun: Bool = false) throws -> ChangeReport {
        let plan = try PlanFile.load(path)
        return try apply(plan.operations, memo: memo ?? plan.memo ?? plan.title, dryRun: dryRun)
    }
}
