import Foundation
import GRDB
import StationSchema
import StationVersion

/// A revert the master refuses.
public enum RevertError: Error, LocalizedError, Equatable {
    /// Columns later versions changed too, or upstream now holds, and nobody decided: nothing is written.
    case undecided(version: Int, conflicts: [MergeConflict])
    /// The revert, as decided, would leave rows that break a rule the same rows would break if
    /// new (an open station with a close date): nothing is written.
    case breaksRules(version: Int, rows: [String])

    public var errorDescription: String? {
        switch self {
        case let .undecided(version, conflicts):
            var lines = ["reverting version \(version) needs decisions: \(conflicts.count) \(conflicts.count == 1 ? "column was" : "columns were") changed again by a later version, or upstream now holds what the revert would undo:"]
            lines += conflicts.prefix(MergeConflict.shownInRefusal).map { "  " + $0.description }
            if conflicts.count > MergeConflict.shownInRefusal { lines.append("  … and \(conflicts.count - MergeConflict.shownInRefusal) more") }
            lines.append("Nothing was written. Decide all with --prefer theirs (the value before version \(version)) or --prefer ours (the value now), "
                + "or each in a resolution file (--resolve FILE; --conflicts writes its skeleton).")
            return lines.joined(separator: "\n")
        case let .breaksRules(version, rows):
            return "reverting version \(version) as decided would leave \(rows.count) \(rows.count == 1 ? "row" : "rows") breaking a rule: "
                + rows.prefix(MergeConflict.shownInRefusal).joined(separator: "; ")
                + ". Nothing was written. Decide the related columns alike (a row's e_status and close_ymd both theirs, or both ours)."
        }
    }
}

extension Curator {
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
    /// - Throws: `RevertError`, or `InputError` for a decision that names no conflict; the
    ///   master is unchanged then.
    @discardableResult
    public func revert(version target: Int, decisions: MergeDecisions = MergeDecisions(), memo: String? = nil, dryRun: Bool = false) throws -> ChangeReport {
        try master.write { db in
            let newest = try MasterDatabase.dataVersion(db)
            try NoSuchVersion.require(target, newest: newest)
            var batch = ChangeBatch(master.declared)
            var conflicts: [MergeConflict] = []
            for table in master.declared.tables {
                let upstreamWeighs = try RevertedRow.upstreamWeighs(table, version: target, db)
                let upstreamGave = upstreamWeighs ? Set(try UpstreamImport.newest(of: table, db)?.columns ?? []) : []
                for (keyText, _) in try UpdateLog.rows(of: table, in: target, db) {
                    let states = try RevertedRow(table: table, key: keyText, version: target, upstreamWeighs: upstreamWeighs,
                                                 upstreamGave: upstreamGave, db)
                    conflicts += try states.revert(into: &batch, decisions: decisions, db)
                }
            }
            var decided = conflicts
            for index in decided.indices { decided[index].decision = decisions.side(of: decided[index]) }
            try decisions.checkEveryDecisionApplies(conflicts: conflicts, adoptions: [])
            let undecided = decided.filter { $0.decision == nil }
            if !undecided.isEmpty && !dryRun { throw RevertError.undecided(version: target, conflicts: undecided) }
            try Self.removeConnectionsLeftBehind(&batch, db)
            try Self.refuseBrokenRows(batch, version: target, db)
            var report = try commit(batch, memo: RevertMark.memo(reverting: target, curatorMemo: memo), dryRun: dryRun, in: db)
            report.conflicts = decided
            // What the revert decided is kept beside the rows, as an import's merge is: `log --key` and the review show it.
            report.mergeNotes = decided.compactMap { conflict in
                conflict.decision.map { side in
                    MergeNote(version: report.version, table: conflict.table, key: conflict.key, column: conflict.column,
                              outcome: side == .ours ? .ours : .theirs, base: conflict.base, ours: conflict.ours, theirs: conflict.theirs,
                              oursVersion: conflict.oursVersion)
                }
            }
            if report.committed { try ThreeWayMerge.record(report.mergeNotes, db) }
            return (report, report.committed)
        }
    }
}

extension Curator {
    /// Refuses a revert whose rows, as it would write them, break a rule the same rows would break
    /// if new: an open (or not yet open) row with a close date; a connection of an open line with
    /// an end the revert leaves on another line or closed (a connection put back, or one whose
    /// station the revert moves off its line).
    fileprivate static func refuseBrokenRows(_ batch: ChangeBatch, version: Int, _ db: Database) throws {
        var broken: [String] = []
        for table in batch.declared.tables {
            guard table.closesByStatus, let rows = batch.changes(for: table)?.rows,
                  let status = table.columnNames.firstIndex(of: "e_status"), let close = table.columnNames.firstIndex(of: "close_ymd") else { continue }
            let keys = table.keyColumns.compactMap { table.columnNames.firstIndex(of: $0) }
            for row in rows where !row[close].isNull && Int.fromDatabaseValue(row[status]) != MasterTable.closedStatus {
                let key = keys.map { "\(row[$0])" }.joined(separator: "/")
                broken.append("\(table.name) \(key) would be open (e_status \(row[status])) with close_ymd \(row[close])")
            }
        }
        broken += try connectionsOffTheirLines(batch, db)
        if !broken.isEmpty { throw RevertError.breaksRules(version: version, rows: broken) }
    }

    /// A station the revert moves back to its line takes its connections on the line it leaves
    /// with it, as a move does; one the revert closes, all of them: they were only true while it
    /// was there (a later version's connection to a station the reverted version moved). The
    /// connections the revert itself puts back stay, and `refuseBrokenRows` judges them.
    fileprivate static func removeConnectionsLeftBehind(_ batch: inout ChangeBatch, _ db: Database) throws {
        let stations = batch.declared.stations, connections = batch.declared.connections
        let column = { (name: String) in stations.columnNames.firstIndex(of: name)! }
        // Station → the line it leaves (nil: every line, as it closes).
        var leaving: [Int64: Int64?] = [:]
        let current = try db.cachedStatement(sql: "SELECT line_cd, e_status FROM main.stations WHERE station_cd = ?")
        for row in batch.changes(for: stations)?.rows ?? [] {
            guard let code = Int64.fromDatabaseValue(row[column("station_cd")]),
                  let now = try Row.fetchOne(current, arguments: [code]),
                  (now[1] as Int?) != MasterTable.closedStatus else { continue }
            let closes = Int.fromDatabaseValue(row[column("e_status")]) == MasterTable.closedStatus
            let line: Int64? = now[0]
            if closes { leaving[code] = .some(nil) } else if Int64.fromDatabaseValue(row[column("line_cd")]) != line { leaving[code] = .some(line) }
        }
        guard !leaving.isEmpty else { return }
        let putBack = Set((batch.changes(for: connections)?.rows ?? []).map { Array($0.prefix(3)) })
        var leftBehind: [[DatabaseValue]] = []
        // No index reads connections by station: one scan, each end looked up in memory.
        let all = try Row.fetchCursor(db, sql: "SELECT line_cd, station_cd1, station_cd2 FROM main.connections")
        while let row = try all.next() {
            let line: Int64 = row[0], ends: [Int64] = [row[1], row[2]]
            let key: [DatabaseValue] = [row[0], row[1], row[2]]
            guard !putBack.contains(key), ends.contains(where: { end in leaving[end].map { $0 == nil || $0 == line } ?? false }) else { continue }
            leftBehind.append(key)
        }
        for key in leftBehind { batch.remove(connections, key: key) }
    }

    /// The connections of open lines the batch would leave with an end on another line or closed:
    /// those it puts back, and the master's that touch a station whose line or status it changes.
    private static func connectionsOffTheirLines(_ batch: ChangeBatch, _ db: Database) throws -> [String] {
        let stations = batch.declared.stations, connections = batch.declared.connections
        let column = { (table: MasterTable, name: String) in table.columnNames.firstIndex(of: name)! }
        // Each station the batch changes, as it would leave it: line and status.
        var changedStations: [Int64: (line: Int64?, open: Bool)] = [:]
        for row in batch.changes(for: stations)?.rows ?? [] {
            guard let code = Int64.fromDatabaseValue(row[column(stations, "station_cd")]) else { continue }
            changedStations[code] = (Int64.fromDatabaseValue(row[column(stations, "line_cd")]),
                                     Int.fromDatabaseValue(row[column(stations, "e_status")]) != MasterTable.closedStatus)
        }
        let removed = Set(batch.changes(for: connections)?.removals ?? [])
        var candidates: [[DatabaseValue]] = batch.changes(for: connections)?.rows ?? []
        if !changedStations.isEmpty {
            // No index reads connections by station: one scan, each end looked up in memory.
            let all = try Row.fetchCursor(db, sql: "SELECT line_cd, station_cd1, station_cd2 FROM main.connections")
            while let row = try all.next() {
                let key: [DatabaseValue] = [row[0], row[1], row[2]]
                guard !removed.contains(key), changedStations[row[1]] != nil || changedStations[row[2]] != nil else { continue }
                candidates.append(key)
            }
        }
        guard !candidates.isEmpty else { return [] }
        // Each line as the batch would leave it: a few tens of thousands, read once.
        var openLines: [Int64: Bool] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT line_cd, e_status FROM main.lines") {
            openLines[row[0]] = (row[1] as Int?) != MasterTable.closedStatus
        }
        for row in batch.changes(for: .lines)?.rows ?? [] {
            if let line = Int64.fromDatabaseValue(row[column(.lines, "line_cd")]) {
                openLines[line] = Int.fromDatabaseValue(row[column(.lines, "e_status")]) != MasterTable.closedStatus
            }
        }
        let unchangedStation = try db.cachedStatement(sql: "SELECT line_cd, e_status FROM main.stations WHERE station_cd = ?")
        var broken: [String] = []
        var checked = Set<[DatabaseValue]>()
        for key in candidates where checked.insert(key).inserted {
            guard let line = Int64.fromDatabaseValue(key[0]), let first = Int64.fromDatabaseValue(key[1]), let second = Int64.fromDatabaseValue(key[2]),
                  openLines[line] == true else { continue }
            var ends: [String] = []
            for station in [first, second] {
                let state = try changedStations[station] ?? Row.fetchOne(unchangedStation, arguments: [station])
                    .map { (line: $0[0] as Int64?, open: ($0[1] as Int?) != MasterTable.closedStatus) }
                guard let state else { continue }
                if !state.open { ends.append("\(station) closed") } else if state.line != line { ends.append("\(station) on line \(state.line.map(String.init) ?? "NULL")") }
            }
            if !ends.isEmpty {
                broken.append("connections \(line)/\(first)/\(second) of open line \(line) would run to \(ends.joined(separator: " and "))")
            }
        }
        return broken
    }
}

/// One row a version changed: its state before the version, the state the version wrote, the
/// master's now (nil where the row did not exist, or a connection was removed), and upstream's
/// now where that weighs on the revert.
private struct RevertedRow {
    let table: MasterTable
    let key: String
    let version: Int
    let before: Row?
    let then: Row?
    let now: Row?
    /// Upstream's row now: the one `<table>_upstream` holds apart, else the master's own (where
    /// nothing is held apart, the base is the master). Nil where it does not weigh: upstream lacks
    /// the row, no import of the table came after the version (upstream cannot have come to agree
    /// with it since: a revert of a revert puts a plan back), or the version is an import of the
    /// table (reverting it is the curators overruling upstream, on purpose).
    let upstream: Row?
    /// Whether upstream weighs at all (`upstreamWeighs(_:version:_:)`): for a connection, a nil
    /// `upstream` then says upstream lacks it.
    let upstreamWeighs: Bool
    /// The columns upstream's newest file of the table gave: upstream holds no value of another
    /// (`weight`, a column only curators fill), so undoing one never goes against upstream.
    let upstreamGave: Set<String>

    /// Whether upstream's row weighs on reverting `version` in `table`: an import of the table came
    /// after it, and the version is not itself one (see `upstream`).
    static func upstreamWeighs(_ table: MasterTable, version: Int, _ db: Database) throws -> Bool {
        let imports = try Row.fetchOne(db, sql: """
            SELECT count(CASE WHEN version > ? THEN 1 END) AS later, count(CASE WHEN version = ? AND made_version THEN 1 END) AS this
            FROM upstream_imports WHERE table_name = ?
            """, arguments: [version, version, table.name])
        guard let imports else { return false }
        return (imports["later"] as Int) > 0 && (imports["this"] as Int) == 0
    }

    init(table: MasterTable, key: String, version: Int, upstreamWeighs: Bool, upstreamGave: Set<String>, _ db: Database) throws {
        self.table = table
        self.upstreamGave = upstreamGave
        self.key = key
        self.version = version
        self.upstreamWeighs = upstreamWeighs
        let columns = table.columnNames.joined(separator: ", ")
        // The history row a change superseded is filed under the version that superseded it.
        before = try Row.fetchOne(db, sql: "SELECT \(columns) FROM \(table.historyTable) WHERE key_id = ? AND valid_to = ?", arguments: [key, version])
        let parts = key.split(separator: "/").compactMap { Int64($0) }
        let keyCondition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        now = try Row.fetchOne(db, sql: "SELECT \(columns) FROM main.\(table.name) WHERE \(keyCondition)", arguments: StatementArguments(parts))
        then = try UpdateLog.firstChange(of: table, key: key, after: version, db).map { later in
            try Row.fetchOne(db, sql: "SELECT \(columns) FROM \(table.historyTable) WHERE key_id = ? AND valid_to = ?", arguments: [key, later])
        } ?? now
        if upstreamWeighs {
            let held = try Row.fetchOne(db, sql: "SELECT \(columns), upstream_lacks FROM main.\(table.upstreamTable) WHERE \(keyCondition)",
                                        arguments: StatementArguments(parts))
            upstream = held.map { $0["upstream_lacks"] as Bool ? nil : $0 } ?? now
        } else {
            upstream = nil
        }
    }

    /// Puts what the revert changes into `batch`; returns the columns in conflict.
    func revert(into batch: inout ChangeBatch, decisions: MergeDecisions, _ db: Database) throws -> [MergeConflict] {
        let columns = table.columns
        // Where the master's value came from (the version that wrote the column), read only for a
        // conflict: a revert of a large import weighs a million rows, nearly all without one.
        func conflict(_ column: String, _ values: ThreeWayColumn.Values) throws -> MergeConflict {
            let origin = try UpdateLog.columnOrigin(of: table, key: key, column: column, value: values.ours, db)
            var conflict = MergeConflict(table: table.name, key: key, column: column, base: MergeValue(values.base), ours: MergeValue(values.ours),
                                         theirs: MergeValue(values.theirs), oursVersion: origin?.version, oursMemo: origin?.memo)
            conflict.decision = decisions.side(of: conflict)
            return conflict
        }
        guard table.closesByStatus else {
            // Connections are their key: the row comes back, or goes, by the rule a column follows.
            let (base, ours, theirs) = (ConnectionExistence(then), ConnectionExistence(now), ConnectionExistence(before))
            let values = ThreeWayColumn.Values(base: base.databaseValue, ours: ours.databaseValue, theirs: theirs.databaseValue,
                                               oursHeldByUpstream: upstreamWeighs && ConnectionExistence(upstream) == base)
            var outcome = ThreeWayColumn(kind: .text).decide(values)
            var conflicts: [MergeConflict] = []
            if outcome == .conflict {
                conflicts.append(try conflict(ConnectionExistence.conflictColumn, values))
                outcome = conflicts[0].decision == .theirs ? .takeTheirs : .keepOurs
            }
            guard outcome == .takeTheirs, (before == nil) != (now == nil) else { return conflicts }
            if let before {
                batch.put(table, Dictionary(uniqueKeysWithValues: columns.map { ($0.name, before[$0.name] as DatabaseValue as DatabaseValueConvertible?) }))
            } else {
                batch.remove(table, key: table.keyColumns.map { name -> DatabaseValueConvertible in now![name] as DatabaseValue })
            }
            return conflicts
        }
        guard let now else { return [] }
        // A row the version added has no state before it: it closes, and only its status is reverted.
        let status = "e_status"
        var target: [String: DatabaseValue] = Dictionary(uniqueKeysWithValues: columns.map { ($0.name, now[$0.name] as DatabaseValue) })
        var conflicts: [MergeConflict] = []
        for column in table.nonKeyColumns {
            let name = column.name
            let was: DatabaseValue = before.map { $0[name] as DatabaseValue } ?? (name == status ? MasterTable.closedStatus.databaseValue : now[name])
            let wrote: DatabaseValue = then.map { $0[name] as DatabaseValue } ?? now[name]
            let values = ThreeWayColumn.Values(base: wrote, ours: now[name], theirs: was,
                                               oursHeldByUpstream: upstreamGave.contains(name)
                                                   && upstream.map { !FieldChange.differ($0[name] as DatabaseValue, wrote, column.kind) } ?? false)
            switch ThreeWayColumn(kind: column.kind).decide(values) {
            case .keepOurs: continue
            case .takeTheirs: target[name] = was
            case .conflict:
                let found = try conflict(name, values)
                if found.decision == .theirs { target[name] = was }
                conflicts.append(found)
            }
        }
        let changed = table.nonKeyColumns.contains { FieldChange.differ(target[$0.name]!, now[$0.name], $0.kind) }
        if changed { batch.put(table, target.mapValues { $0 as DatabaseValueConvertible? }) }
        return conflicts
    }
}

/// Whether a connection exists at a version. A connection is its key (no column closes it), so a
/// revert brings it back or removes it; its existence is decided by the three-way rule a column
/// follows, and a conflict over it names the column `row` with the values `present` and `absent`.
enum ConnectionExistence: String {
    case present, absent

    /// The existence of `row`, nil when the connection is not there.
    init(_ row: Row?) { self = row == nil ? .absent : .present }

    /// The column a conflict over a connection's existence names.
    static let conflictColumn = "row"

    /// As the three-way rule compares it: text.
    var databaseValue: DatabaseValue { rawValue.databaseValue }
}
