import Foundation
import GRDB
import StationCSV
import StationSchema
import StationSupport
import StationVersion

/// The import of a source beside the primary (`import --source NAME`): it fills what the primary
/// lacks and never overrides what the primary says (DOMAIN.md, "More than one upstream").
///
/// For each row the source gives, against the master and the primary's base (`<table>_upstream`:
/// what the primary's last file said):
/// - a row the master lacks is added (a connection only where one of its stations is the
///   source's own, and the master has it in neither direction);
/// - in a row the master has, a cell the primary leaves empty (or a column the primary's file
///   did not give) takes the source's value, three ways against the source's own last value
///   (`source_values`): a cell a curator changed since keeps the curator's value;
/// - a cell where both have a value and they differ keeps the primary's, and is recorded as a
///   disagreement (`source_disagreements`, `SourceFillReport.disagreements`);
/// - a row only the source carried (the primary lacks it) and that its file no longer has is
///   closed, as an upstream closure is.
///
/// The changes are one curated version (`Curator.commit`): the primary's base keeps what the
/// primary said of each row changed, so the primary's next import keeps every fill.
struct SourceFill {
    let master: MasterDatabase
    let profile: SourceProfile
    let options: ImportOptions

    /// The rows read, the version written and the source's base, in one transaction.
    func run(_ paths: [String], commit: Bool) throws -> ChangeReport {
        var phases = PhaseLog()
        let source = try SourceRows(paths, profile: profile, master.declared)
        phases.done("source files read")
        return try master.write { db in
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM upstream_imports") ?? 0 > 0 else {
                throw ImportError.noPrimary(source: profile.name)
            }
            try refuseOlderSnapshot(paths, source, db)
            let prefectureNames = Dictionary(try Row.fetchAll(db, sql: "SELECT pref_cd, pref_name FROM main.prefectures").map { ($0[0] as DatabaseValue, $0[1] as String) },
                                             uniquingKeysWith: { first, _ in first })

            let version = try PendingVersion(db, master.declared)
            var tallies: [String: Tally] = [:]
            var disagreements: [SourceDisagreement] = []
            var ownStations = Set<DatabaseValue>()
            var keptCurated: [String] = []
            for read in source.tables {
                var state = try TableState(read.table, source: profile.name, rule: profile.rule(for: read.table), prefectureNames: prefectureNames, db)
                var staged = TableState.Staged()
                tallies[read.table.name] = state.merge(read, into: &staged, disagreements: &disagreements, keptCurated: &keptCurated,
                                                          ownStations: &ownStations)
                try version.stage(rows: staged.rows, removals: staged.removals, of: read.table)
                phases.done("\(read.table.name) merged and staged")
            }
            try version.write(memo: options.memo ?? "\(profile.name) \(snapshotDate(paths) ?? "import")", author: master.author)
            phases.done("version written")
            try refuseDanglingReferences(version, source)
            var report = try version.report(tables: source.tables.map(\.table), describeLimit: options.describeLimit, committing: commit)
            phases.done("references and report")
            let madeVersion = report.totalChanges > 0 ? report.version : report.version - 1
            for read in source.tables {
                try recordBase(read, version: madeVersion, tally: tallies[read.table.name] ?? Tally(), paths: paths, db)
            }
            phases.done("source base recorded")
            try recordDisagreements(disagreements, db)
            phases.done("disagreements recorded")
            report.warnings += source.skipped
            report.warnings += SourceDisagreement.summary(disagreements, source: profile.name)
            if !keptCurated.isEmpty {
                report.warnings.append("\(keptCurated.count) values a curator changed since \(profile.name)'s last import, which it changed too, keep the curator's:")
                report.warnings += keptCurated.prefix(5).map { "  " + $0 } + (keptCurated.count > 5 ? ["  … and \(keptCurated.count - 5) more"] : [])
            }
            return (report, commit && report.committed)
        }
    }

    /// A snapshot of the source older than one it imported before, as the primary's rule has it
    /// (`--allow-older` imports it anyway): its three-way base would go back in time, and every
    /// fill it made since would look like a curator's edit.
    private func refuseOlderSnapshot(_ paths: [String], _ source: SourceRows, _ db: Database) throws {
        guard !options.allowOlder, let date = snapshotDate(paths) else { return }
        for read in source.tables {
            guard let newest = try Row.fetchOne(db, sql: """
                SELECT snapshot_date, version FROM source_imports WHERE source = ? AND table_name = ? AND snapshot_date IS NOT NULL
                ORDER BY snapshot_date DESC, id LIMIT 1
                """, arguments: [profile.name, read.table.name]), date < (newest[0] as String) else { continue }
            throw ImportError.olderSnapshot(file: read.file, table: read.table.name, date: date, newest: newest[0], newestVersion: newest[1])
        }
    }

    /// A row the source adds that names a line, company or prefecture the master lacks (and the
    /// source's files do not bring): refused naming its file and line.
    private func refuseDanglingReferences(_ version: PendingVersion, _ source: SourceRows) throws {
        for reference in MasterTable.references {
            guard let dangling = try version.firstDanglingRow(reference, fromFilesOnly: false) else { continue }
            let read = source.table(reference.child)
            let line = read.flatMap { read in read.rows.firstIndex { TableState.keyID($0.prefix(reference.child.keyColumns.count)) == dangling.key }.map { read.lines[$0] } }
            throw InputError(.importedRow, file: read?.file ?? reference.child.name, line: line,
                             message: "\(reference.child.name) \(dangling.key): \(reference.column) \(dangling.value) names no row of \(reference.parent.name) "
                                + "in the master or in this source's files (expected an existing \(reference.column))")
        }
    }

    /// The snapshot's date: `--snapshot-date`, a date in a file's name, or a folder named by one.
    private func snapshotDate(_ paths: [String]) -> String? {
        if let date = options.snapshotDate { return date }
        for path in paths {
            if let date = SnapshotDate.fromFileName(path) { return date }
            let name = (path as NSString).lastPathComponent
            if SnapshotDate.isCalendarDate(name) { return name }
        }
        return nil
    }

    /// The source's base for its next import: every value of its file, replacing the last.
    private func recordBase(_ read: SourceRows.Table, version: Int, tally: Tally, paths: [String], _ db: Database) throws {
        let table = read.table
        try db.execute(sql: "DELETE FROM source_values WHERE source = ? AND table_name = ?", arguments: [profile.name, table.name])
        let insert = try db.makeStatement(sql: "INSERT INTO source_values (source, table_name, key_id, column_name, value) VALUES (?, ?, ?, ?, ?)")
        let keyCount = table.keyColumns.count
        for row in read.rows {
            let key = TableState.keyID(row.prefix(keyCount))
            for (index, column) in read.columns.enumerated() where index >= keyCount {
                try insert.execute(arguments: [profile.name, table.name, key, column.name, row[index]])
            }
            if read.columns.count == keyCount { try insert.execute(arguments: [profile.name, table.name, key, "", nil]) }
        }
        try db.execute(sql: """
            INSERT INTO source_imports (source, version, table_name, snapshot_date, file_name, columns, rows, filled, added, closed, imported_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [profile.name, version, table.name, snapshotDate(paths), (read.file as NSString).lastPathComponent,
                             read.columns.map(\.name).joined(separator: ","), read.rows.count, tally.filled, tally.added, tally.closed,
                             UTCTimestamp.text(Date())])
    }

    private func recordDisagreements(_ disagreements: [SourceDisagreement], _ db: Database) throws {
        try db.execute(sql: "DELETE FROM source_disagreements WHERE source = ?", arguments: [profile.name])
        for found in disagreements {
            try db.execute(sql: """
                INSERT INTO source_disagreements (source, table_name, key_id, column_name, primary_value, source_value) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [profile.name, found.table, found.key, found.column, found.primaryValue, found.sourceValue])
        }
    }

    /// What a source's import did to one table.
    struct Tally {
        var filled = 0, added = 0, closed = 0
    }
}

/// A cell where a source and the primary both have a value, and they differ: the primary's
/// stands; a curator who prefers the source's sets it with `edit`.
public struct SourceDisagreement: Sendable, Equatable {
    /// The master table.
    public let table: String
    /// The row's key, as `updates.key_id` writes it.
    public let key: String
    /// The column.
    public let column: String
    /// The primary's value, which the master keeps.
    public let primaryValue: DatabaseValue
    /// The source's value.
    public let sourceValue: DatabaseValue

    /// How many, and the first few, as the import's warnings.
    static func summary(_ found: [SourceDisagreement], source: String) -> [String] {
        guard !found.isEmpty else { return [] }
        let shown = 5
        return ["\(found.count) values where \(source) and the primary both have one and differ: the primary's kept (source-disagrees)"]
            + found.prefix(shown).map { "  \($0.table) \($0.key) \($0.column): primary \($0.primaryValue), \(source) \($0.sourceValue)" }
            + (found.count > shown ? ["  … and \(found.count - shown) more: \(CommandHint("sources", "--disagreements", source))"] : [])
    }
}
