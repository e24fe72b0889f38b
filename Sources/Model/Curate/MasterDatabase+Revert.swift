import Foundation
import GRDB
import StationSchema
import StationVersion

/// A revert the master refuses.
public enum RevertError: Error, LocalizedError, Equatable {
    /// No such version to revert.
    case noSuchVersion(Int, newest: Int)
    /// Columns later versions changed too, and nobody decided: nothing is written.
    case undecided(version: Int, conflicts: [MergeConflict])

    public var errorDescription: String? {
        switch self {
        case let .noSuchVersion(version, newest):
            return "version \(version) does not exist (expected a version from 1 to \(newest))"
        case let .undecided(version, conflicts):
            var lines = ["reverting version \(version) needs decisions: \(conflicts.count) \(conflicts.count == 1 ? "column was" : "columns were") changed again by a later version:"]
            lines += conflicts.prefix(MergeConflict.shownInRefusal).map { "  " + $0.description }
            if conflicts.count > MergeConflict.shownInRefusal { lines.append("  … and \(conflicts.count - MergeConflict.shownInRefusal) more") }
            lines.append("Nothing was written. Decide all with --prefer theirs (the value before version \(version)) or --prefer ours (the value now), "
                + "or each in a resolution file (--resolve FILE; --dry-run --json lists them).")
            return lines.joined(separator: "\n")
        }
    }
}

extension MasterDatabase {
    /// Writes a new version that puts every row `version` changed back to its state before it.
    ///
    /// A version cannot be taken back from phones that have it, so a revert is a version of its
    /// own, sent to phones like any other. Per row and column, with *before* the state before
    /// `version`, *then* the state it wrote and *now* the master's:
    /// - now is still then: before comes back;
    /// - now is already before: nothing to do;
    /// - a later version changed it to something else: a `MergeConflict` (base then, ours now,
    ///   theirs before), decided by `decisions` or refused.
    ///
    /// A row the version added is closed (a connection removed): its code stays, since records
    /// may point at it. The version's DUPLICATEs stay in the log: a phone that ran a split keeps
    /// the copies, and phones that did not run it yet still run it, so that every phone ends with
    /// the same records (docs/DOMAIN.md, "Reverting a version").
    ///
    /// - Throws: `RevertError`, or `ResolutionError` for a decision that names no conflict; the
    ///   master is unchanged then.
    @discardableResult
    public func revert(version target: Int, decisions: MergeDecisions = MergeDecisions(), memo: String? = nil, dryRun: Bool = false) throws -> ChangeReport {
        try write { db in
            let newest = try Self.dataVersion(db)
            guard (1...max(newest, 1)).contains(target), newest > 0 else { throw RevertError.noSuchVersion(target, newest: newest) }
            var batch = ChangeBatch()
            var conflicts: [MergeConflict] = []
            for table in MasterTable.all {
                for (keyText, _) in try UpdateLog.rows(of: table, in: target, db) {
                    let states = try RevertedRow(table: table, key: keyText, version: target, db)
                    conflicts += try states.revert(into: &batch, decisions: decisions, db)
                }
            }
            var decided = conflicts
            for index in decided.indices { decided[index].decision = decisions.side(of: decided[index]) }
            try decisions.checkEveryDecisionApplies(conflicts: conflicts, adoptions: [])
            let undecided = decided.filter { $0.decision == nil }
            if !undecided.isEmpty && !dryRun { throw RevertError.undecided(version: target, conflicts: undecided) }
            var report = try commit(batch, memo: memo ?? "revert version \(target)", dryRun: dryRun, in: db)
            report.conflicts = decided
            return (report, report.committed)
        }
    }
}

/// One row a version changed: its state before the version, the state the version wrote, and
/// the master's now (nil where the row did not exist, or a connection was removed).
private struct RevertedRow {
    let table: MasterTable
    let key: String
    let version: Int
    let before: Row?
    let then: Row?
    let now: Row?

    init(table: MasterTable, key: String, version: Int, _ db: Database) throws {
        self.table = table
        self.key = key
        self.version = version
        let columns = table.columnNames.joined(separator: ", ")
        // The history row a change superseded is filed under the version that superseded it.
        before = try Row.fetchOne(db, sql: "SELECT \(columns) FROM \(table.historyTable) WHERE key_id = ? AND valid_to = ?", arguments: [key, version])
        let parts = key.split(separator: "/").compactMap { Int64($0) }
        let keyCondition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        now = try Row.fetchOne(db, sql: "SELECT \(columns) FROM main.\(table.name) WHERE \(keyCondition)", arguments: StatementArguments(parts))
        then = try UpdateLog.firstChange(of: table, key: key, after: version, db).map { later in
            try Row.fetchOne(db, sql: "SELECT \(columns) FROM \(table.historyTable) WHERE key_id = ? AND valid_to = ?", arguments: [key, later])
        } ?? now
    }

    /// Puts what the revert changes into `batch`; returns the columns in conflict.
    func revert(into batch: inout ChangeBatch, decisions: MergeDecisions, _ db: Database) throws -> [MergeConflict] {
        let columns = table.columns
        guard table.closesByStatus else {
            // Connections are their key: the row comes back, or goes.
            let keyValues = table.keyColumns.map { name -> DatabaseValueConvertible in (before ?? then ?? now)![name] as DatabaseValue }
            if before != nil, now == nil {
                batch.put(table, Dictionary(uniqueKeysWithValues: columns.map { ($0.name, before![$0.name] as DatabaseValue as DatabaseValueConvertible?) }))
            } else if before == nil, now != nil {
                batch.remove(table, key: keyValues)
            }
            return []
        }
        guard let now else { return [] }
        // A row the version added has no state before it: it closes, and only its status is reverted.
        let status = "e_status"
        var target: [String: DatabaseValue] = Dictionary(uniqueKeysWithValues: columns.map { ($0.name, now[$0.name] as DatabaseValue) })
        var conflicts: [MergeConflict] = []
        let origin = try ThreeWayMerge.newestChange(table, key: key, db)
        for column in table.nonKeyColumns {
            let name = column.name
            let was: DatabaseValue = before.map { $0[name] as DatabaseValue } ?? (name == status ? MasterTable.closedStatus.databaseValue : now[name])
            let wrote: DatabaseValue = then.map { $0[name] as DatabaseValue } ?? now[name]
            let current: DatabaseValue = now[name]
            // A column the version did not change has nothing to put back, whatever came later.
            if !FieldChange.differ(was, wrote, column.kind) { continue }
            if !FieldChange.differ(current, wrote, column.kind) {
                target[name] = was
            } else if FieldChange.differ(current, was, column.kind) {
                var conflict = MergeConflict(table: table.name, key: key, column: name, base: MergeValue(wrote), ours: MergeValue(current),
                                             theirs: MergeValue(was), oursVersion: origin?.version, oursMemo: origin?.memo)
                conflict.decision = decisions.side(of: conflict)
                if conflict.decision == .theirs { target[name] = was }
                conflicts.append(conflict)
            }
        }
        let changed = table.nonKeyColumns.contains { FieldChange.differ(target[$0.name]!, now[$0.name], $0.kind) }
        if changed { batch.put(table, target.mapValues { $0 as DatabaseValueConvertible? }) }
        return conflicts
    }
}
