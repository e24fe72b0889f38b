import Foundation
import GRDB
import StationCSV
import StationCheck
import StationSchema
import StationSupport
import StationVersion

/// One run of `Importer.importSnapshot` or `diff`: its files and options, whether it commits,
/// and what its steps hand each other, owned in one value instead of passed from step to step.
///
/// The steps, in one transaction: each file compared with the master (or its upstream base),
/// the three-way merge, the version written, its closures and references checked against the
/// state before (read on a second connection), the report and the split suggestions. A large
/// version (`ImportTuning.checksAfterCommitFromStations`) is checked after its commit instead,
/// while its pages are copied from the write-ahead log into the master.
struct ImportRun {
    let master: MasterDatabase
    let tuning: ImportTuning
    let options: ImportOptions
    /// A `diff` runs every step and rolls back.
    let commit: Bool
    /// Where every change is listed, whatever `options.describeLimit` says.
    let everyChange: DescribedChangeFile?
    private var phases = PhaseLog()
    /// What the checks compare with is read on this connection before anything is staged, not
    /// on a second one beside it (which a rollback journal would keep out once this one writes).
    private var readsTheStateBeforeFirst = false
    /// The automatic checkpoint setting to restore, while a version checked after its commit
    /// holds them.
    private var heldCheckpoints: Int?

    init(_ master: MasterDatabase, tuning: ImportTuning, options: ImportOptions, commit: Bool, everyChange: DescribedChangeFile?) {
        self.master = master
        self.tuning = tuning
        self.options = options
        self.commit = commit
        self.everyChange = everyChange
    }

    /// The import of `paths`, committed or rolled back.
    mutating func run(_ paths: [String]) throws -> ChangeReport {
        defer { Progress.finish() }
        let files = try ImportSource.files(from: paths, master.declared)
        phases.done("headers read")
        if let date = options.snapshotDate, !SnapshotDate.isCalendarDate(date) {
            throw ImportError.badSnapshotDate(date)
        }
        // A large first import writes only new pages: with a rollback journal, once
        // (`withRollbackJournal`); a diff writes none.
        let bytes = files.reduce(0) { $0 + (FileChecks.size($1.path) ?? 0) }
        if commit, bytes >= tuning.rollbackJournalFromBytes, try master.dataVersion() == 0 {
            readsTheStateBeforeFirst = true
            var journaled = self
            if let report = try master.withRollbackJournal({ try journaled.importing(files) }) { return report }
            readsTheStateBeforeFirst = false
        }
        return try importing(files)
    }

    /// The version written, then, for a large one, checked after its commit.
    private mutating func importing(_ files: [ImportFile]) throws -> ChangeReport {
        defer {
            if let heldCheckpoints { try? master.resumeAutomaticCheckpoints(heldCheckpoints) }
            heldCheckpoints = nil
        }
        let (report, checksAfterCommit) = try writingVersion(files)
        guard let checksAfterCommit else { return report }
        return try checkAfterCommit(report, checksAfterCommit)
    }

    /// What a version checked after its commit needs from the transaction that wrote it.
    private struct ChecksAfterCommit {
        /// `ImportChecks.StateBefore.Counts.touchingChangedStations`, for the scope.
        let touchingBefore: [CheckScope.ConnectionKey]?
        /// The import brought stations: their split suggestions are found.
        let suggestsSplits: Bool
        /// The stations before the version, as the compare read them.
        let stationPlaces: StationPlaces?
        /// The provisional stations adopted, whose split is upstream's station already.
        let adopted: Set<Int64>
    }

    /// A version staged and written in the transaction, before its report.
    private struct WrittenVersion {
        let version: PendingVersion
        let files: [ImportFile]
        let merge: ThreeWayMerge.Outcome
        let before: ImportChecks.StateBefore
        let counts: ImportChecks.StateBefore.Counts
        let checkedAhead: FirstVersionCheck?
        let checkingAfterCommit: Bool
        let stationPlaces: StationPlaces?
    }

    /// The transaction. A version of `checksAfterCommitFromStations` stations or more whose
    /// version before has its findings recorded is committed unchecked, with automatic
    /// checkpoints held (`heldCheckpoints`), and returned with what `checkAfterCommit` needs.
    private mutating func writingVersion(_ files: [ImportFile]) throws -> (ChangeReport, ChecksAfterCommit?) {
        try master.write { db in
            let masterBefore = readsTheStateBeforeFirst ? try ImportChecks.MasterBefore.read(db, tables: files.map(\.table)) : nil
            let version = try PendingVersion(db, master.declared)
            let compared = try compare(files, into: version, db)
            let merge = try merge(compared.merged, into: version, db)
            if !compared.merged.isEmpty { phases.done("three-way merge") }
            // A first version's rules start now on a copy of the master, on another core, while
            // this connection writes the log; a failing import waits for them before it tells why.
            let checkedAhead = try version.number == 1 && version.holdsEveryRowInTheMaster() ? FirstVersionCheck.start(db, master.declared) : nil
            defer { _ = try? checkedAhead?.wait() }
            phases.done("first version's copy made")
            let checks = ImportChecks(files: files, keyLines: compared.keyLines)
            let changedStations = masterBefore == nil ? try version.stagedStationCodes() : nil
            let before = try masterBefore.map { checks.stateBefore(from: $0) }
                ?? checks.readStateBefore(of: master, changedStations: changedStations, counted: compared.rowsBefore)
            // An error ends the import only once the second connection is done.
            defer { before.finish() }
            let checkingAfterCommit = try commit && version.number > 1 && (changedStations?.count ?? 0) >= tuning.checksAfterCommitFromStations
                && RecordedFindings.isRecorded(version.number - 1, db)
            Progress.phase("writing version \(version.number)")
            try version.write(memo: options.memo, author: master.author, settingUpstreamOf: Set(files.map(\.table)))
            let upstreamChanged = try version.recordUpstream(compared.upstreamFiles, notes: merge.notes)
            phases.done("version written")
            let counts = try checkClosuresAndReferences(version, checks: checks, before: before)
            let written = WrittenVersion(version: version, files: files, merge: merge, before: before, counts: counts,
                                         checkedAhead: checkedAhead, checkingAfterCommit: checkingAfterCommit,
                                         stationPlaces: compared.stationPlaces)
            var report = try reportAndSuggestions(of: written, db)
            report.warnings = try before.connectionWarnings.wait()
            // Nothing changed in the master, but upstream's files did: they are kept, without a version.
            let keepsUpstream = commit && !report.committed && upstreamChanged
            if keepsUpstream { try version.keepUpstreamAlone() }
            guard checkingAfterCommit && report.committed else { return ((report, nil), report.committed || keepsUpstream) }
            heldCheckpoints = try master.holdAutomaticCheckpoints(db)
            let after = ChecksAfterCommit(touchingBefore: counts.touchingChangedStations, suggestsSplits: files.contains { $0.table == .stations },
                                          stationPlaces: compared.stationPlaces,
                                          adopted: Set(merge.splits.map(\.old)))
            return ((report, after), true)
        }
    }

    /// For a large version: its checks after its commit. The findings it introduces are
    /// found and recorded in a second transaction, while another connection copies the version's
    /// pages from the write-ahead log into the master (the checkpoint, which a commit would
    /// otherwise make, and wait for, by itself) and a third finds the split suggestions. The
    /// version is in the master whatever happens here: a version committed meanwhile by another
    /// process (which then found its own findings from the history) or a failure leaves the
    /// findings unrecorded, and the next import or plan checks the version again, whole; the
    /// report says so in a warning.
    private mutating func checkAfterCommit(_ committed: ChangeReport, _ after: ChecksAfterCommit) throws -> ChangeReport {
        var report = committed
        let version = report.version
        Progress.phase("checking version \(version)")
        let checkpoint = master.checkpointInBackground()
        let suggestions = after.suggestsSplits ? splitSuggestionsInBackground(of: version, placesBefore: after.stationPlaces, adopted: after.adopted) : nil
        defer {
            _ = try? suggestions?.wait()
            _ = try? checkpoint.wait()
        }
        try tuning.afterCommit?()
        // Each may come after another process's version, and is then not made, or fail alone:
        // the warnings name what is missing and the command that shows it.
        var notMade: [String] = [], failed: [String] = []
        let findings = (what: "its findings", shownBy: CommandHint("check", "--version", "\(version)"))
        do {
            let introduced = try master.write(checkingDamage: false) { db -> (IntroducedFindings?, Bool) in
                guard try MasterDatabase.dataVersion(db) == version, try RecordedFindings.isRecorded(version - 1, db) else { return (nil, false) }
                let cacheBefore = try Int.fetchOne(db, sql: "PRAGMA cache_size")
                try db.execute(sql: "PRAGMA cache_size = -\(tuning.checksAfterCommitCacheKiB)")
                defer { if let cacheBefore { try? db.execute(sql: "PRAGMA cache_size = \(cacheBefore)") } }
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
    private func splitSuggestionsInBackground(of version: Int, placesBefore: StationPlaces?, adopted: Set<Int64>) -> BackgroundTask<[SplitSuggestion]?> {
        let path = master.path
        return BackgroundTask {
            var configuration = MasterDatabase.configuration(label: "split suggestions")
            configuration.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            return try queue.read { db in
                guard try MasterDatabase.dataVersion(db) == version else { return nil }
                return try SplitFinder.suggest(db, version: version, placesBefore: placesBefore, leavingOut: adopted)
            }
        }
    }

    /// What comparing the files found: the line of each key, the tables merged three ways, and
    /// each file with its snapshot date for the upstream record.
    private struct ComparedFiles {
        var keyLines: [MasterTable: KeyLines] = [:]
        var merged: [ThreeWayMerge.MergedTable] = []
        var upstreamFiles: [(file: ImportFile, date: String?, threeWay: Bool)] = []
        /// The stations as they were, read by the compare: the split suggestions' candidates.
        var stationPlaces: StationPlaces?
        /// Each compared table's rows before the version, as the compare counted them.
        var rowsBefore: [MasterTable: StreamingTableDiff.RowCount] = [:]
    }

    /// each file staged against the master, or against upstream's last file where an
    /// import of the table was recorded; an older snapshot than the last is refused.
    private mutating func compare(_ files: [ImportFile], into version: PendingVersion, _ db: Database) throws -> ComparedFiles {
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
            let staged = try version.stage(file, comparison: comparison)
            compared.keyLines[file.table] = staged.keyLines
            if let places = staged.stationPlaces { compared.stationPlaces = places }
            compared.rowsBefore[file.table] = staged.rowsBefore
            compared.upstreamFiles.append((file, date, comparison == .upstream))
            phases.done("\(file.table.name) compared")
        }
        return compared
    }

    /// the three-way merge of the tables compared with upstream's base; a commit refuses
    /// while a conflict or a provisional pair is undecided.
    private func merge(_ merged: [ThreeWayMerge.MergedTable], into version: PendingVersion, _ db: Database) throws -> ThreeWayMerge.Outcome {
        guard !merged.isEmpty else { return ThreeWayMerge.Outcome() }
        let merge = try ThreeWayMerge(version: version.number, tables: merged, declared: version.declared).run(decisions: options.decisions, db)
        if commit && (!merge.undecidedConflicts.isEmpty || !merge.undecidedAdoptions.isEmpty) {
            throw ImportError.undecided(conflicts: merge.undecidedConflicts, adoptions: merge.undecidedAdoptions)
        }
        try version.stage(splits: merge.splits)
        return merge
    }

    /// the version's closures and reopenings against the counts before it (unless
    /// allowed), and its references.
    private mutating func checkClosuresAndReferences(_ version: PendingVersion, checks: ImportChecks,
                                                     before: ImportChecks.StateBefore) throws -> ImportChecks.StateBefore.Counts {
        let counts = try before.counts.wait()
        phases.done("second connection's counts waited for")
        if !options.allowMassClose { try checks.checkMassClosures(version, openRows: counts.openRows) }
        if !options.allowMassReopen { try checks.checkMassReopenings(version, closedRows: counts.closedRows) }
        try checks.checkReferences(version)
        phases.done("references checked")
        return counts
    }

    /// the report (changes described, findings introduced) with the merge's decisions,
    /// and the split suggestions of an import of stations.
    private mutating func reportAndSuggestions(of written: WrittenVersion, _ db: Database) throws -> ChangeReport {
        let (version, files, merge) = (written.version, written.files, written.merge)
        let checkingAfterCommit = written.checkingAfterCommit
        let importsStations = !checkingAfterCommit && files.contains(where: { $0.table == .stations })
        Progress.phase("describing and checking version \(version.number)")
        let tables = files.map(\.table)
        var report = try version.report(
            tables: tables + MasterTable.all.filter { merge.adoptionTables.contains($0) && !tables.contains($0) },
            describeLimit: options.describeLimit, listingEveryChangeIn: everyChange, committing: commit,
            touchingBefore: written.counts.touchingChangedStations, checkedAhead: written.checkedAhead, checkingFindings: !checkingAfterCommit)
        report.conflicts = merge.conflicts
        report.adoptions = merge.adoptions
        report.mergeNotes = merge.notes
        phases.done("described and checked")
        if importsStations {
            report.suggestions = try SplitFinder.suggest(db, version: version.number, placesBefore: written.stationPlaces,
                                                         leavingOut: Set(merge.splits.map(\.old)))
            phases.done("split suggestions")
        }
        return report
    }
}
