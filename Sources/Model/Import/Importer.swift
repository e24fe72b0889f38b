import Foundation
import GRDB
import StationCSV
import StationCheck
import StationSchema
import StationSupport
import StationVersion

/// Imports ekidata snapshots into a master as one new version each (`import`), or tells what an
/// import would change without writing it (`diff`).
///
/// A capability over the thin `MasterDatabase` handle, as GRDB's `DatabaseMigrator` takes a
/// writer: `try Importer(master).…`.
public struct Importer: Sendable {
    /// The master it imports into.
    public let master: MasterDatabase

    /// An importer into `master`.
    public init(_ master: MasterDatabase) {
        self.master = master
    }
}

/// How an import runs.
public struct ImportOptions: Sendable {
    /// The version's memo (`--memo`), shown by `versions` and `log`.
    public var memo: String?
    /// Accept a file that closes more than 5% of a table's open rows.
    public var allowMassClose: Bool
    /// How many changes the report describes in words (nil: all).
    public var describeLimit: Int?
    /// How the three-way merge's conflicts and provisional rows are decided.
    public var decisions: MergeDecisions
    /// The snapshot's date for every file (`YYYY-MM-DD`), where the files' names give none or the wrong one.
    public var snapshotDate: String?
    /// Accept a snapshot older than the last one imported.
    public var allowOlder: Bool
    /// Accept a file that reopens more than 5% of a table's closed rows.
    public var allowMassReopen: Bool
    /// A first import of files this large (in all) writes with a rollback journal
    /// (`MasterDatabase.withRollbackJournal`). Below it the WAL's second write of each page costs
    /// little, and a first import that fails leaves the file byte for byte as it was (a journal's
    /// switch and switch back advance the file's change counter). Tests lower it.
    package var rollbackJournalFromBytes = 64 << 20
    /// A committed import that changes this many stations or more is checked after its commit
    /// (`MasterDatabase.checkAfterCommit`); tests set it to 0, or to `Int.max`.
    package var checksAfterCommitFromStations = 1_000
    /// A test's seam: runs between such an import's commit and its checks, where another
    /// process may commit a version, or the process be killed.
    package var afterCommit: (@Sendable () throws -> Void)? = nil

    /// Options for `importSnapshot` and `diff`; nil `describeLimit` describes every change.
    public init(memo: String? = nil, allowMassClose: Bool = false, describeLimit: Int? = 20, decisions: MergeDecisions = MergeDecisions(),
                snapshotDate: String? = nil, allowOlder: Bool = false, allowMassReopen: Bool = false) {
        self.memo = memo
        self.allowMassClose = allowMassClose
        self.describeLimit = describeLimit
        self.decisions = decisions
        self.snapshotDate = snapshotDate
        self.allowOlder = allowOlder
        self.allowMassReopen = allowMassReopen
    }
}

extension Importer {
    /// What importing `paths` would change; writes nothing: `import --dry-run` and `diff` are
    /// this one call.
    ///
    /// The import runs for real inside a transaction that is rolled back, so a diff
    /// finds every error an import would.
    ///
    /// - Parameters:
    ///   - paths: snapshot folders or CSV files.
    ///   - options: the import's options; by default every change is described.
    ///   - everyChange: where to list every change (a million of them would not fit
    ///     in `report.changes`).
    public func diff(_ paths: [String], options: ImportOptions = ImportOptions(describeLimit: nil),
                     listingEveryChangeIn everyChange: DescribedChangeFile? = nil) throws -> ChangeReport {
        try runImport(paths, options: options, commit: false, everyChange: everyChange)
    }

    /// Imports station CSVs (folders or files) as one new data version, in one transaction.
    ///
    /// For example, importing the 2021-03-12 ekidata snapshot over 2019-12-27 makes version 2
    /// with 17 station INSERTs; nothing changed makes no version (`report.committed == false`).
    ///
    /// - Parameters:
    ///   - paths: snapshot folders or CSV files; each file is the whole of its table.
    ///   - options: the memo, whether a mass closure is allowed, how many changes to describe.
    ///   - everyChange: where to list every change, whatever `options.describeLimit` says
    ///     (written inside the transaction, read after it).
    /// - Throws: `CSVError` (file, line, column, value, expectation), `ImportError`,
    ///   `MasterDatabaseError`. On any error the database is unchanged.
    @discardableResult
    public func importSnapshot(_ paths: [String], options: ImportOptions = ImportOptions(),
                               listingEveryChangeIn everyChange: DescribedChangeFile? = nil) throws -> ChangeReport {
        try runImport(paths, options: options, commit: true, everyChange: everyChange)
    }

    private func runImport(_ paths: [String], options: ImportOptions, commit: Bool, everyChange: DescribedChangeFile?) throws -> ChangeReport {
        defer { Progress.finish() }
        var phases = PhaseLog()
        let files = try ImportSource.files(from: paths, master.declared)
        phases.done("headers read")
        if let date = options.snapshotDate, !SnapshotDate.isCalendarDate(date) {
            throw ImportError.badSnapshotDate(date)
        }
        // A large first import writes only new pages: with a rollback journal, once
        // (`withRollbackJournal`); a diff writes none.
        let bytes = files.reduce(0) { $0 + (FileChecks.size($1.path) ?? 0) }
        if commit, bytes >= options.rollbackJournalFromBytes, try master.dataVersion() == 0, let report = try master.withRollbackJournal({
            try importing(files, options: options, commit: commit, everyChange: everyChange, readingTheStateBeforeFirst: true)
        }) {
            return report
        }
        return try importing(files, options: options, commit: commit, everyChange: everyChange, readingTheStateBeforeFirst: false)
    }

    /// The import in one transaction, step by step: each file compared with the master (or its
    /// upstream base), the three-way merge, the version written, its rules checked against the
    /// state before (read on a second connection), the report. `readingTheStateBeforeFirst`:
    /// what the checks compare with is read on this connection before anything is staged, not
    /// on a second one beside it (which a rollback journal would keep out once this one writes
    /// pages).
    ///
    /// A large version is checked after its commit instead (`checkAfterCommit`), while its pages
    /// are copied from the write-ahead log into the master.
    private func importing(_ files: [ImportFile], options: ImportOptions, commit: Bool, everyChange: DescribedChangeFile?,
                           readingTheStateBeforeFirst: Bool) throws -> ChangeReport {
        var heldCheckpoints: Int?
        defer { if let heldCheckpoints { try? master.resumeAutomaticCheckpoints(heldCheckpoints) } }
        let (report, checksAfterCommit) = try writingVersion(
            files, options: options, commit: commit, everyChange: everyChange,
            readingTheStateBeforeFirst: readingTheStateBeforeFirst, holdingCheckpoints: { heldCheckpoints = $0 })
        guard let checksAfterCommit else { return report }
        return try checkAfterCommit(report, checksAfterCommit, options: options)
    }

    /// What a version checked after its commit needs from the transaction that wrote it.
    private struct ChecksAfterCommit {
        /// `ImportChecks.StateBefore.Counts.touchingChangedStations`, for the scope.
        let touchingBefore: [CheckScope.ConnectionKey]?
        /// The import brought stations: their split suggestions are found.
        let suggestsSplits: Bool
        /// The provisional stations adopted, whose split is upstream's station already.
        let adopted: Set<Int64>
    }

    /// `importing`'s transaction. A version of `checksAfterCommitFromStations` stations or more
    /// whose version before has its findings recorded is committed unchecked, with `db`'s
    /// automatic checkpoints held (`holdingCheckpoints` is handed the setting to restore), and
    /// returned with what `checkAfterCommit` needs.
    private func writingVersion(_ files: [ImportFile], options: ImportOptions, commit: Bool, everyChange: DescribedChangeFile?,
                                readingTheStateBeforeFirst: Bool, holdingCheckpoints: (Int) -> Void) throws -> (ChangeReport, ChecksAfterCommit?) {
        var phases = PhaseLog()
        return try master.write { db in
            let masterBefore = readingTheStateBeforeFirst ? try ImportChecks.MasterBefore.read(db, tables: files.map(\.table)) : nil
            let version = try PendingVersion(db, master.declared)
            let compared = try Self.compare(files, options: options, into: version, phases: &phases, db)
            let merge = try Self.merge(compared.merged, options: options, commit: commit, into: version, db)
            if !compared.merged.isEmpty { phases.done("three-way merge") }
            // A first version's rules start now on a copy of the master, on another core, while
            // this connection writes the log; a failing import waits for them before it tells why.
            let checkedAhead = try version.number == 1 && version.holdsEveryRowInTheMaster() ? FirstVersionCheck.start(db, master.declared) : nil
            defer { _ = try? checkedAhead?.wait() }
            phases.done("first version's copy made")
            let checks = ImportChecks(files: files, keyLines: compared.keyLines)
            let changedStations = masterBefore == nil ? try version.stagedStationCodes() : nil
            let before = try masterBefore.map { checks.stateBefore(from: $0) } ?? checks.readStateBefore(of: master, changedStations: changedStations)
            // An error ends the import only once the second connection is done.
            defer { before.finish() }
            let checkingAfterCommit = try commit && version.number > 1 && (changedStations?.count ?? 0) >= options.checksAfterCommitFromStations
                && RecordedFindings.isRecorded(version.number - 1, db)
            Progress.phase("writing version \(version.number)")
            try version.write(memo: options.memo, author: master.author, settingUpstreamOf: Set(files.map(\.table)))
            let upstreamChanged = try version.recordUpstream(compared.upstreamFiles, notes: merge.notes)
            phases.done("version written")
            let counts = try Self.checkClosuresAndReferences(version, checks: checks, before: before, options: options, phases: &phases)
            var report = try reportAndSuggestions(
                of: version, files: files, merge: merge, options: options, commit: commit, everyChange: everyChange,
                before: before, counts: counts, checkedAhead: checkedAhead, checkingAfterCommit: checkingAfterCommit, phases: &phases, db)
            report.warnings = try before.connectionWarnings.wait()
            // Nothing changed in the master, but upstream's files did: they are kept, without a version.
            let keepsUpstream = commit && !report.committed && upstreamChanged
            if keepsUpstream { try version.keepUpstreamAlone() }
            guard checkingAfterCommit && report.committed else { return ((report, nil), report.committed || keepsUpstream) }
            holdingCheckpoints(try master.holdAutomaticCheckpoints(db))
            let after = ChecksAfterCommit(touchingBefore: counts.touchingChangedStations, suggestsSplits: files.contains { $0.table == .stations },
                                          adopted: Set(merge.splits.map(\.old)))
            return ((report, after), true)
        }
    }

    /// Step 5, for a large version: its checks after its commit. The findings it introduces are
    /// found and recorded in a second transaction, while another connection copies the version's
    /// pages from the write-ahead log into the master (the checkpoint, which a commit would
    /// otherwise make, and wait for, by itself) and a third finds the split suggestions. The
    /// version is in the master whatever happens here: a version committed meanwhile by another
    /// process (which then found its own findings from the history) or a failure leaves the
    /// findings unrecorded, and the next import or plan checks the version again, whole; the
    /// report says so in a warning.
    private func checkAfterCommit(_ committed: ChangeReport, _ after: ChecksAfterCommit, options: ImportOptions) throws -> ChangeReport {
        var report = committed, phases = PhaseLog()
        let version = report.version
        Progress.phase("checking version \(version)")
        let checkpoint = master.checkpointInBackground()
        let suggestions = after.suggestsSplits ? splitSuggestionsInBackground(of: version, adopted: after.adopted) : nil
        defer {
            _ = try? suggestions?.wait()
            _ = try? checkpoint.wait()
        }
        try options.afterCommit?()
        // Each may come after another process's version, and is then not made, or fail alone:
        // the warnings name what is missing and the command that shows it.
        var notMade: [String] = [], failed: [String] = []
        let findings = (what: "its findings", shownBy: CommandHint("check", "--version", "\(version)"))
        do {
            let introduced = try master.write(checkingDamage: false) { db -> (IntroducedFindings?, Bool) in
                guard try MasterDatabase.dataVersion(db) == version, try RecordedFindings.isRecorded(version - 1, db) else { return (nil, false) }
                return (try VersionChecks.introducedFindings(db, master.declared, version: version, touchingBefore: after.touchingBefore), true)
            }
            if let introduced { report.setFindings(introduced) } else { notMade.append("\(findings.what) (see them: \(findings.shownBy))") }
        } catch {
            failed.append("finding \(findings.what) failed: \(error.localizedDescription) (see them: \(findings.shownBy))")
        }
        if let suggestions {
            let splits = (what: "its split suggestions", shownBy: CommandHint("suggest", "--version", "\(version)"))
            do {
                if let suggested = try suggestions.wait() { report.suggestions = suggested } else {
                    notMade.append("\(splits.what) (see them: \(splits.shownBy))")
                }
            } catch {
                failed.append("finding \(splits.what) failed: \(error.localizedDescription) (see them: \(splits.shownBy))")
            }
        }
        if !notMade.isEmpty {
            report.warnings.append("""
                version \(version) is committed, but another version was committed before its checks ran: \
                \(notMade.joined(separator: " and ")) were not made
                """)
        }
        report.warnings += failed.map { "version \(version) is committed, but \($0)" }
        phases.done("checked after the commit")
        do { try checkpoint.wait() } catch {
            report.warnings.append("version \(version) is committed, but its pages were not copied into the master yet: \(error.localizedDescription)")
        }
        phases.done("checkpoint waited for")
        return report
    }

    /// The split suggestions of `version`, the newest, on a connection of its own; nil when
    /// another version has been committed since.
    private func splitSuggestionsInBackground(of version: Int, adopted: Set<Int64>) -> BackgroundTask<[SplitSuggestion]?> {
        let path = master.path
        return BackgroundTask {
            var configuration = MasterDatabase.configuration(label: "split suggestions")
            configuration.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            return try queue.read { db in
                guard try MasterDatabase.dataVersion(db) == version else { return nil }
                return try SplitFinder.suggest(db, version: version, leavingOut: adopted)
            }
        }
    }

    /// What comparing the files found: the line of each key, the tables merged three ways, and
    /// each file with its snapshot date for the upstream record.
    private struct ComparedFiles {
        var keyLines: [MasterTable: KeyLines] = [:]
        var merged: [ThreeWayMerge.MergedTable] = []
        var upstreamFiles: [(file: ImportFile, date: String?, threeWay: Bool)] = []
    }

    /// Step 1: each file staged against the master, or against upstream's last file where an
    /// import of the table was recorded; an older snapshot than the last is refused.
    private static func compare(_ files: [ImportFile], options: ImportOptions, into version: PendingVersion,
                                phases: inout PhaseLog, _ db: Database) throws -> ComparedFiles {
        var compared = ComparedFiles()
        for file in files {
            let date = options.snapshotDate ?? file.dateInName
            if let date, !options.allowOlder, let newest = try UpstreamImport.newestDate(of: file.table, db), date < newest.date {
                throw ImportError.olderSnapshot(file: file.displayName, table: file.table.name, date: date, newest: newest.date, newestVersion: newest.version)
            }
            var comparison = StreamingTableDiff.Comparison.master
            if let last = try UpstreamImport.newest(of: file.table, db) {
                comparison = .upstream
                compared.merged.append(.init(table: file.table, givenColumns: Set(file.header.columns.map(\.name)), baseColumns: Set(last.columns)))
            }
            compared.keyLines[file.table] = try version.stage(file, comparison: comparison)
            compared.upstreamFiles.append((file, date, comparison == .upstream))
            phases.done("\(file.table.name) compared")
        }
        return compared
    }

    /// Step 2: the three-way merge of the tables compared with upstream's base; a commit refuses
    /// while a conflict or a provisional pair is undecided.
    private static func merge(_ merged: [ThreeWayMerge.MergedTable], options: ImportOptions, commit: Bool, into version: PendingVersion,
                              _ db: Database) throws -> ThreeWayMerge.Outcome {
        guard !merged.isEmpty else { return ThreeWayMerge.Outcome() }
        let merge = try ThreeWayMerge(version: version.number, tables: merged, declared: version.declared).run(decisions: options.decisions, db)
        if commit && (!merge.undecidedConflicts.isEmpty || !merge.undecidedAdoptions.isEmpty) {
            throw ImportError.undecided(conflicts: merge.undecidedConflicts, adoptions: merge.undecidedAdoptions)
        }
        try version.stage(splits: merge.splits)
        return merge
    }

    /// Step 3: the version's closures and reopenings against the counts before it (unless
    /// allowed), and its references.
    private static func checkClosuresAndReferences(_ version: PendingVersion, checks: ImportChecks, before: ImportChecks.StateBefore,
                                                   options: ImportOptions, phases: inout PhaseLog) throws -> ImportChecks.StateBefore.Counts {
        let counts = try before.counts.wait()
        phases.done("second connection's counts waited for")
        if !options.allowMassClose { try checks.checkMassClosures(version, openRows: counts.openRows) }
        if !options.allowMassReopen { try checks.checkMassReopenings(version, closedRows: counts.closedRows) }
        try checks.checkReferences(version)
        phases.done("references checked")
        return counts
    }

    /// Step 4: the report (changes described, findings introduced) with the merge's decisions,
    /// and the split suggestions of an import of stations.
    private func reportAndSuggestions(of version: PendingVersion, files: [ImportFile], merge: ThreeWayMerge.Outcome, options: ImportOptions,
                                      commit: Bool, everyChange: DescribedChangeFile?, before: ImportChecks.StateBefore,
                                      counts: ImportChecks.StateBefore.Counts, checkedAhead: FirstVersionCheck?, checkingAfterCommit: Bool,
                                      phases: inout PhaseLog, _ db: Database) throws -> ChangeReport {
        // The split suggestions' scan of every station, on the second connection while the
        // version is checked: the stations the version changed are looked at again after.
        let importsStations = !checkingAfterCommit && files.contains(where: { $0.table == .stations })
        let splits = importsStations ? try SplitFinder(version: version.number).changed(db) : nil
        let keysBefore = splits.flatMap { changed -> BackgroundTask<KeyScan.Keys>? in
            guard before.changesFewStations else { return nil }
            let scan = changed.keyScan
            return before.read { db in try scan.keys(db) }
        }
        defer { _ = try? keysBefore?.wait() }
        Progress.phase("describing and checking version \(version.number)")
        let tables = files.map(\.table)
        var report = try version.report(
            tables: tables + MasterTable.all.filter { merge.adoptionTables.contains($0) && !tables.contains($0) },
            describeLimit: options.describeLimit, listingEveryChangeIn: everyChange, committing: commit,
            touchingBefore: counts.touchingChangedStations, checkedAhead: checkedAhead, checkingFindings: !checkingAfterCommit)
        report.conflicts = merge.conflicts
        report.adoptions = merge.adoptions
        report.mergeNotes = merge.notes
        phases.done("described and checked")
        if importsStations {
            report.suggestions = try SplitFinder.suggest(db, version: version.number, changed: splits, keysBefore: try keysBefore?.wait(),
                                                         leavingOut: Set(merge.splits.map(\.old)))
            phases.done("split suggestions")
        }
        return report
    }
}
