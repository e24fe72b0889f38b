import Foundation
import GRDB
import StationSchema

/// The three-way merge of an import (DOMAIN.md, "Two authors: upstream and curators"): for each row and column
/// of the file that upstream changed since its last file (`temp.theirs_<table>`, filled by
/// `StreamingTableDiff` in its `.upstream` comparison), with *base* what that last file said (the
/// master's row, or the one `<table>_upstream` holds apart), *ours* the master and *theirs* the file:
///
/// - upstream did not change the column: ours stays (a curated fix survives);
/// - upstream changed it and ours still holds base: theirs;
/// - ours already equals theirs (after adoption, a provisional code counts as upstream's): theirs;
/// - both changed it differently: a `MergeConflict`, which `MergeDecisions` decides.
///
/// A row the master lacks is inserted; a row base lacks (upstream never had it, or dropped it
/// before) takes theirs where it differs and theirs is not empty, as a first import does (a cell
/// a curator or another source filled is never emptied). For example, with base
/// `1191420 彦山 close_ymd NULL`, ours `close_ymd 2017-07-05` (a curator's fix at v3) and the
/// file again `NULL`, nothing is staged and a `kept` note says the value came from v3; with the
/// file `2017-07-06`, the column is a conflict.
package struct ThreeWayMerge {
    /// The tables the import compares with their base, each with the columns its file gives and
    /// the columns its base knows (the columns the previous file gave).
    package struct MergedTable {
        package let table: MasterTable
        package let givenColumns: Set<String>
        package let baseColumns: Set<String>

        package init(table: MasterTable, givenColumns: Set<String>, baseColumns: Set<String>) {
            self.table = table
            self.givenColumns = givenColumns
            self.baseColumns = baseColumns
        }
    }

    package let version: Int
    package let tables: [MergedTable]
    /// The tables whose columns rows are merged and copied with.
    package let declared: DeclaredSchema

    package init(version: Int, tables: [MergedTable], declared: DeclaredSchema) {
        self.version = version
        self.tables = tables
        self.declared = declared
    }

    /// What the merge found: every conflict and adoption, decided or not.
    package struct Outcome {
        package var conflicts: [MergeConflict] = []
        package var adoptions: [Adoption] = []
        package var undecidedConflicts: [MergeConflict] = []
        package var undecidedAdoptions: [Adoption] = []
        package var notes: [MergeNote] = []
        /// The DUPLICATEs provisional → upstream of the adopted stations, to stage.
        package var splits: [(old: Int64, new: Int64)] = []
        /// Tables the adoption changes beyond the merged ones (connections of a provisional station).
        package var adoptionTables: Set<MasterTable> = []

        package init() {}
    }

    /// Finds conflicts and adoptions, applies `decisions`, and stages the merged rows in
    /// `temp.staged_<table>`. An undecided conflict keeps ours and an undecided pair both rows,
    /// so that a diff shows the rest; an import refuses while `Outcome` lists any undecided.
    package func run(decisions: MergeDecisions, _ db: Database) throws -> Outcome {
        // No row of the files held apart, and no provisional row to adopt: the diff with the
        // master was the merge, and the merge's statements (mostly their compiling) are spared.
        guard try tables.contains(where: { try Self.holdsRowsToMerge($0.table, db) }) else {
            try decisions.checkEveryDecisionApplies(conflicts: [], adoptions: [])
            return Outcome()
        }
        var outcome = Outcome()
        try db.execute(sql: """
            DROP TABLE IF EXISTS temp.merge_adoptions;
            CREATE TABLE temp.merge_adoptions (table_name TEXT NOT NULL, provisional INTEGER NOT NULL, upstream INTEGER NOT NULL,
                                               adopted INTEGER NOT NULL, PRIMARY KEY (table_name, provisional));
            DROP TABLE IF EXISTS temp.merge_decisions;
            CREATE TABLE temp.merge_decisions (table_name TEXT NOT NULL, key_id TEXT NOT NULL, column_name TEXT NOT NULL, take TEXT NOT NULL,
                                               PRIMARY KEY (table_name, key_id, column_name));
            """)
        for merged in tables { try fillBase(merged.table, db) }
        let adopted = try pairAdoptions(decisions, &outcome, db)
        var kept: [MergeNote] = []
        for merged in tables {
            let found = try compare(merged, adoptions: adopted, db)
            outcome.conflicts += found.conflicts
            kept += found.kept
        }
        try decisions.checkEveryDecisionApplies(conflicts: outcome.conflicts, adoptions: outcome.adoptions)
        try decideConflicts(decisions, &outcome, db)
        outcome.notes += kept
        let decided = Set(outcome.conflicts.filter { $0.decision != nil }.map { Decided(table: $0.table, column: $0.column) })
        for merged in tables {
            try stage(merged, decided: decided, adopted: Set(adopted.keys), db)
        }
        try adopt(&outcome, db)
        return outcome
    }

    /// Pairs each provisional row with the upstream row that may adopt it, records the pairs
    /// `decisions` do not reject in `temp.merge_adoptions`, and returns them per table
    /// (provisional → upstream code).
    private func pairAdoptions(_ decisions: MergeDecisions, _ outcome: inout Outcome, _ db: Database) throws -> [String: [Int64: Int64]] {
        outcome.adoptions = try ProvisionalMatcher(merged: Set(tables.map(\.table))).pairs(db)
        for index in outcome.adoptions.indices {
            let adoption = outcome.adoptions[index]
            outcome.adoptions[index].adopted = decisions.adopts(adoption)
            // An undecided pair counts as one for the conflicts, so that a refusal lists the
            // adoption, not every column that names the provisional code; only adopted pairs close.
            let adopted = decisions.adopts(adoption)
            if adopted == nil { outcome.undecidedAdoptions.append(adoption) }
            if adopted != false {
                try db.execute(sql: "INSERT OR IGNORE INTO temp.merge_adoptions (table_name, provisional, upstream, adopted) VALUES (?, ?, ?, ?)",
                               arguments: [adoption.table, adoption.provisional, adoption.upstream, adopted == true])
            }
        }
        var adopted: [String: [Int64: Int64]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT table_name, provisional, upstream FROM temp.merge_adoptions") {
            adopted[row[0] as String, default: [:]][row[1]] = row[2]
        }
        return adopted
    }

    /// Applies `decisions` to the conflicts found: a decided one is recorded in
    /// `temp.merge_decisions` for the staging and noted; an undecided one is listed.
    private func decideConflicts(_ decisions: MergeDecisions, _ outcome: inout Outcome, _ db: Database) throws {
        for index in outcome.conflicts.indices {
            let conflict = outcome.conflicts[index]
            outcome.conflicts[index].decision = decisions.side(of: conflict)
            guard let side = decisions.side(of: conflict) else {
                outcome.undecidedConflicts.append(conflict)
                continue
            }
            try db.execute(sql: "INSERT INTO temp.merge_decisions (table_name, key_id, column_name, take) VALUES (?, ?, ?, ?)",
                           arguments: [conflict.table, conflict.key, conflict.column, side.rawValue])
            outcome.notes.append(MergeNote(version: version, table: conflict.table, key: conflict.key, column: conflict.column,
                                           outcome: side == .ours ? .ours : .theirs, base: conflict.base, ours: conflict.ours,
                                           theirs: conflict.theirs, oursVersion: conflict.oursVersion))
        }
    }

    /// Whether `table` has a row of the file held apart (`theirs`) or a provisional row (one
    /// upstream lacks, which a row the file brings may adopt): without either, the merge of the
    /// table stages nothing, finds no conflict and pairs nothing.
    private static func holdsRowsToMerge(_ table: MasterTable, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM \(StagingTables.theirsTable(table)))
                OR EXISTS (SELECT 1 FROM main.\(table.upstreamTable) WHERE upstream_lacks)
            """) ?? true
    }

    /// Upstream's last values of theirs' rows: the row held apart in `<table>_upstream`, else the
    /// master's; none where upstream lacked it or neither has it.
    private func fillBase(_ table: MasterTable, _ db: Database) throws {
        let key = table.keyColumns[0]
        try db.execute(sql: """
            INSERT INTO \(StagingTables.baseTable(table)) (\(table.columnNames.joined(separator: ", ")))
            SELECT \(table.columns.map { column in
                table.keyColumns.contains(column.name) ? "t.\(column.name)" : "CASE WHEN o.\(key) IS NULL THEN m.\(column.name) ELSE o.\(column.name) END"
            }.joined(separator: ", "))
            FROM \(StagingTables.theirsTable(table)) t
            LEFT JOIN main.\(table.upstreamTable) o ON \(table.keyJoin("o", "t"))
            LEFT JOIN main.\(table.name) m ON \(table.keyJoin("m", "t"))
            WHERE (o.\(key) IS NOT NULL AND NOT o.upstream_lacks) OR (o.\(key) IS NULL AND m.\(key) IS NOT NULL)
            """)
    }

    // MARK: The rules in SQL

    /// SQL for the master's value of `column` as the merge compares it with theirs: a reference to
    /// an adopted provisional row reads as upstream's code.
    private func mapped(_ table: MasterTable, _ column: String, adopted: Set<String>) -> String {
        guard let reference = MasterTable.references.first(where: { $0.child == table && $0.column == column }),
              adopted.contains(reference.parent.name) else { return "m.\(column)" }
        return """
            COALESCE((SELECT a.upstream FROM temp.merge_adoptions a WHERE a.table_name = '\(reference.parent.name)' AND a.provisional = m.\(column)), m.\(column))
            """
    }

    private func differsSQL(_ left: String, _ right: String, _ column: MasterTable.Column) -> String {
        CuratedRowDiff.differsSQL(left, right, column.kind)
    }

    /// The columns merged three ways: given by the file, known to the base, not the key.
    private func threeWayColumns(_ merged: MergedTable) -> [MasterTable.Column] {
        merged.table.nonKeyColumns.filter { merged.givenColumns.contains($0.name) && merged.baseColumns.contains($0.name) }
    }

    private func joins(_ table: MasterTable) -> String {
        """
        FROM \(StagingTables.theirsTable(table)) t
        CROSS JOIN \(StagingTables.baseTable(table)) b ON \(table.keyJoin("b", "t"))
        CROSS JOIN main.\(table.name) m ON \(table.keyJoin("m", "t"))
        """
    }

    /// Conflicts and kept values of one table, from one pass over theirs' rows that both base and
    /// the master have (a few thousand at a 1 % change of a million stations), compared here.
    private func compare(_ merged: MergedTable, adoptions: [String: [Int64: Int64]], _ db: Database) throws
        -> (conflicts: [MergeConflict], kept: [MergeNote]) {
        let table = merged.table
        let columns = threeWayColumns(merged)
        guard !columns.isEmpty else { return ([], []) }
        // For a column that names another table's row, the adopted provisional code reads as upstream's.
        let parents = columns.map { column in
            MasterTable.references.first { $0.child == table && $0.column == column.name }.flatMap { adoptions[$0.parent.name] }
        }
        let rows = try Row.fetchCursor(db, sql: """
            SELECT \(table.keyText(alias: "t")), \(columns.map { "t.\($0.name), b.\($0.name), m.\($0.name)" }.joined(separator: ", ")) \(joins(table))
            ORDER BY \(table.keyColumns.map { "t." + $0 }.joined(separator: ", "))
            """)
        var conflicts: [MergeConflict] = [], kept: [MergeNote] = []
        // The master's values of the conflicts and kept values, in their order, to find where each came from.
        var conflictsOurs: [DatabaseValue] = [], keptOurs: [DatabaseValue] = []
        while let row = try rows.next() {
            let key: String = row[0]
            for (index, column) in columns.enumerated() {
                let theirs: DatabaseValue = row[1 + 3 * index], base: DatabaseValue = row[2 + 3 * index], ours: DatabaseValue = row[3 + 3 * index]
                var values = ThreeWayColumn.Values(base: base, ours: ours, theirs: theirs, oursHeldByUpstream: false)
                if let map = parents[index], let code = Int64.fromDatabaseValue(ours), let upstream = map[code] { values.oursAsTheirs = upstream.databaseValue }
                switch ThreeWayColumn(kind: column.kind).decide(values) {
                case .keepOurs:
                    guard FieldChange.differ(ours, theirs, column.kind) else { continue }
                    kept.append(MergeNote(version: version, table: table.name, key: key, column: column.name, outcome: .kept,
                                          base: MergeValue(base), ours: MergeValue(ours), theirs: MergeValue(theirs), oursVersion: nil))
                    keptOurs.append(ours)
                case .takeTheirs:
                    continue
                case .conflict:
                    conflicts.append(MergeConflict(table: table.name, key: key, column: column.name, base: MergeValue(base),
                                                   ours: MergeValue(ours), theirs: MergeValue(theirs)))
                    conflictsOurs.append(ours)
                }
            }
        }
        // Where the master's value came from (the version that wrote that column), for the few that are shown.
        for index in conflicts.indices {
            let found = try UpdateLog.columnOrigin(of: table, key: conflicts[index].key, column: conflicts[index].column,
                                                   value: conflictsOurs[index], db)
            conflicts[index].oursVersion = found?.version
            conflicts[index].oursMemo = found?.memo
        }
        for index in kept.indices {
            kept[index].oursVersion = try UpdateLog.columnOrigin(of: table, key: kept[index].key, column: kept[index].column,
                                                                 value: keptOurs[index], db)?.version
        }
        return (conflicts, kept)
    }

    /// A column with a decision recorded for some row of its table.
    private struct Decided: Hashable {
        let table: String
        let column: String
    }

    /// Stages each row of theirs as merged, where it differs from the master's.
    ///
    /// A column no conflict of which was decided keeps ours where the rule finds a conflict, and
    /// a reference to a table with no adoption is the master's code: neither is looked up per row.
    /// The merged rows are materialized: the outer query names each column several times, and
    /// SQLite would otherwise copy each merged column's expression into every place it is named,
    /// to be prepared and evaluated there again.
    private func stage(_ merged: MergedTable, decided: Set<Decided>, adopted: Set<String>, _ db: Database) throws {
        let table = merged.table
        let values = table.columns.map { column -> String in
            let c = column.name
            if table.keyColumns.contains(c) { return "t.\(c)" }
            let absent = column.defaultValue.map(String.init) ?? "NULL"
            guard merged.givenColumns.contains(c) else { return "CASE WHEN m.\(table.keyColumns[0]) IS NULL THEN \(absent) ELSE m.\(c) END" }
            guard merged.baseColumns.contains(c) else { return "t.\(c)" }
            let conflict = !decided.contains(Decided(table: table.name, column: c)) ? "m.\(c)" : """
                CASE WHEN (SELECT d.take FROM temp.merge_decisions d WHERE d.table_name = '\(table.name)' AND d.key_id = \(table.keyText(alias: "t"))
                           AND d.column_name = '\(c)') = 'theirs' THEN t.\(c) ELSE m.\(c) END
                """
            let merged = ThreeWayColumn(kind: column.kind).mergedValueSQL(
                ThreeWayColumn.Expressions(base: "b.\(c)", ours: "m.\(c)", theirs: "t.\(c)", oursAsTheirs: mapped(table, c, adopted: adopted),
                                           oursHeldByUpstream: nil), conflict: conflict)
            // A row base lacks that the master has (a curator's, or a source's that fills what
            // upstream lacked) becomes upstream's, but for the cells upstream leaves empty: a
            // value there is never emptied.
            let emptyTheirs = "(t.\(c) IS NULL OR t.\(c) = '') AND NOT (m.\(c) IS NULL OR m.\(c) = '')"
            return "CASE WHEN m.\(table.keyColumns[0]) IS NULL THEN t.\(c) WHEN b.\(table.keyColumns[0]) IS NULL THEN "
                + "(CASE WHEN \(emptyTheirs) THEN m.\(c) ELSE t.\(c) END) ELSE \(merged) END"
        }
        let firstKey = table.keyColumns[0]
        let kind = Update.Kind.changeSQL(table, stored: "m", new: "x")
        let changed = table.nonKeyColumns.map { differsSQL("x.\($0.name)", "m.\($0.name)", $0) }
        try db.execute(sql: """
            WITH x AS MATERIALIZED (
                SELECT t.source_line, \(zip(values, table.columnNames).map { "\($0) AS \($1)" }.joined(separator: ", "))
                FROM \(StagingTables.theirsTable(table)) t
                LEFT JOIN \(StagingTables.baseTable(table)) b ON \(table.keyJoin("b", "t"))
                LEFT JOIN main.\(table.name) m ON \(table.keyJoin("m", "t"))
                -- A row upstream had and the master lacks was removed by a curator: it stays removed.
                WHERE NOT (b.\(firstKey) IS NOT NULL AND m.\(firstKey) IS NULL)
            )
            INSERT INTO \(StagingTables.stagedTable(table)) (kind, source_line, \(table.columnNames.joined(separator: ", ")))
            SELECT \(kind), x.source_line, \(table.columnNames.map { "x." + $0 }.joined(separator: ", "))
            FROM x
            LEFT JOIN main.\(table.name) m ON \(table.keyJoin("m", "x"))
            WHERE m.\(firstKey) IS NULL\(changed.isEmpty ? "" : " OR " + changed.joined(separator: " OR "))
            ORDER BY \(table.keyColumns.map { "x." + $0 }.joined(separator: ", "))
            """)
    }

    /// Closes the adopted provisional rows, removes the connections of the provisional stations
    /// and lines and the event's connections upstream now describes otherwise, and returns each
    /// station pair's DUPLICATE.
    private func adopt(_ outcome: inout Outcome, _ db: Database) throws {
        let adopted = try Row.fetchAll(db, sql: "SELECT table_name, provisional, upstream FROM temp.merge_adoptions WHERE adopted ORDER BY table_name, provisional")
        guard !adopted.isEmpty else { return }
        let events = Set(outcome.adoptions.filter { $0.adopted == true }.compactMap(\.version))
        let eventDate = try Self.closingDate(ofEvents: events, db)
        for table in [declared.companies, declared.lines, declared.stations] {
            // A provisional station closes on the day upstream's opens, when upstream gives a
            // date; else on the day its event closed other stations (the plan's `close … date`).
            let columns = table.columns.map { column -> String in
                switch column.name {
                case "e_status": return "\(MasterTable.closedStatus)"
                case "close_ymd":
                    let upstreamOpens = """
                        (SELECT t.open_ymd FROM \(StagingTables.stagedTable(table)) t JOIN temp.merge_adoptions a
                         ON a.upstream = t.\(table.keyColumns[0]) AND a.table_name = '\(table.name)' AND a.provisional = p.\(table.keyColumns[0])
                         WHERE \(Self.isDate("t.open_ymd")))
                        """
                    return "COALESCE(p.close_ymd, \(upstreamOpens), \(eventDate.map { "'\($0)'" } ?? "NULL"))"
                default: return "p." + column.name
                }
            }
            try db.execute(sql: """
                INSERT OR IGNORE INTO \(StagingTables.stagedTable(table)) (kind, source_line, \(table.columnNames.joined(separator: ", ")))
                SELECT \(Update.Kind.delete.sql), NULL, \(columns.joined(separator: ", ")) FROM main.\(table.name) p
                WHERE p.e_status <> \(MasterTable.closedStatus)
                  AND p.\(table.keyColumns[0]) IN (SELECT provisional FROM temp.merge_adoptions WHERE adopted AND table_name = '\(table.name)')
                """)
        }
        let connections = declared.connections
        try db.execute(sql: """
            INSERT OR IGNORE INTO \(StagingTables.stagedTable(connections)) (kind, source_line, \(connections.columnNames.joined(separator: ", ")))
            SELECT \(Update.Kind.delete.sql), NULL, \(connections.columnNames.map { "c." + $0 }.joined(separator: ", ")) FROM main.connections c
            WHERE c.line_cd IN (SELECT provisional FROM temp.merge_adoptions WHERE adopted AND table_name = 'lines')
               OR c.station_cd1 IN (SELECT provisional FROM temp.merge_adoptions WHERE adopted AND table_name = 'stations')
               OR c.station_cd2 IN (SELECT provisional FROM temp.merge_adoptions WHERE adopted AND table_name = 'stations')
            """)
        if db.changesCount > 0 { outcome.adoptionTables.insert(connections) }
        try closeSupersededConnections(ofEvents: events, &outcome, db)
        for row in adopted {
            let (table, provisional, upstream): (String, Int64, Int64) = (row[0], row[1], row[2])
            if let master = declared.table(named: table) { outcome.adoptionTables.insert(master) }
            outcome.notes.append(MergeNote(version: version, table: table, key: String(provisional), column: master(table)?.keyColumns[0] ?? "",
                                           outcome: .adopted, base: .null, ours: .integer(provisional), theirs: .integer(upstream), oursVersion: nil))
            if table == MasterTable.stations.name { outcome.splits.append((provisional, upstream)) }
        }
    }

    private func master(_ name: String) -> MasterTable? { declared.table(named: name) }

    /// Where upstream now describes a line anew (the file brings connections of it that its last
    /// file lacked), the connections the adopted event added to that line and the file lacks are
    /// the plan's guess at what upstream records otherwise (a station upstream put between two the
    /// plan connected directly): each is removed, with an `adopted` note naming the line.
    private func closeSupersededConnections(ofEvents events: Set<Int>, _ outcome: inout Outcome, _ db: Database) throws {
        guard !events.isEmpty else { return }
        let connections = declared.connections
        let superseded = try Row.fetchAll(db, sql: """
            SELECT \(connections.columnNames.map { "c." + $0 }.joined(separator: ", ")), \(connections.keyText(alias: "c")) AS key_id
            FROM main.\(connections.upstreamTable) o CROSS JOIN main.connections c ON \(connections.keyJoin("c", "o"))
            WHERE o.upstream_lacks
              AND c.line_cd IN (SELECT line_cd FROM \(StagingTables.theirsTable(connections)))
              AND NOT EXISTS (SELECT 1 FROM \(StagingTables.theirsTable(connections)) t WHERE \(connections.keyJoin("t", "c")))
              AND \(connections.keyText(alias: "c")) IN (\(UpdateLog.changedKeys(of: connections, inVersions: events, kinds: [.insert])))
            ORDER BY c.line_cd, c.station_cd1, c.station_cd2
            """)
        guard !superseded.isEmpty else { return }
        let stage = try db.makeStatement(sql: """
            INSERT OR IGNORE INTO \(StagingTables.stagedTable(connections)) (kind, source_line, \(connections.columnNames.joined(separator: ", ")))
            VALUES (\(Update.Kind.delete.sql), NULL, \(connections.columnNames.map { _ in "?" }.joined(separator: ", ")))
            """)
        for row in superseded {
            try stage.execute(arguments: StatementArguments(connections.columnNames.map { row[$0] as DatabaseValue }))
            let line: Int64 = row["line_cd"]
            outcome.notes.append(MergeNote(version: version, table: connections.name, key: row["key_id"], column: "line_cd", outcome: .adopted,
                                           base: .null, ours: .integer(line), theirs: .integer(line), oursVersion: nil))
        }
        outcome.adoptionTables.insert(connections)
    }

    /// The date the adopted events closed stations on (the most frequent, then the earliest),
    /// when they closed any with a date.
    private static func closingDate(ofEvents events: Set<Int>, _ db: Database) throws -> String? {
        guard !events.isEmpty else { return nil }
        return try String.fetchOne(db, sql: """
            SELECT s.close_ymd FROM (\(UpdateLog.changedKeys(of: .stations, inVersions: events, kinds: [.delete]))) closed
            CROSS JOIN main.stations s ON s.station_cd = CAST(closed.key_id AS INTEGER)
            WHERE \(isDate("s.close_ymd"))
            GROUP BY s.close_ymd ORDER BY COUNT(*) DESC, s.close_ymd LIMIT 1
            """)
    }

    /// SQL: the text is a day (ekidata writes `0000-00-00` or nothing for none).
    private static func isDate(_ column: String) -> String {
        "(\(column) GLOB '[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]')"
    }

    /// Writes the notes of a written version into `merge_notes`.
    package static func record(_ notes: [MergeNote], _ db: Database) throws {
        let insert = try db.makeStatement(sql: """
            INSERT OR REPLACE INTO merge_notes (version, table_name, key_id, column_name, outcome, base, ours, theirs, ours_version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for note in notes {
            try insert.execute(arguments: [note.version, note.table, note.key, note.column, note.outcome.rawValue,
                                           MergeNote.encodeValue(note.base), MergeNote.encodeValue(note.ours),
                                           MergeNote.encodeValue(note.theirs), note.oursVersion])
        }
    }
}
