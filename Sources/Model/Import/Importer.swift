import GRDB
import StationCSV
import StationCheck
import StationSchema
import StationSupport
import StationVersion

/// How an import runs.
public struct ImportOptions: Sendable {
    /// The version's memo (`--memo`), shown by `versions` and `log`.
    public var memo: String?
    /// Accept a file that closes more than 5% of a table's open rows.
    public var allowMassClose: Bool
    /// How many changes the report describes in words (nil: all).
    public var describeLimit: Int?

    /// Options for `importSnapshot` and `diff`; nil `describeLimit` describes every change.
    public init(memo: String? = nil, allowMassClose: Bool = false, describeLimit: Int? = 20) {
        self.memo = memo
        self.allowMassClose = allowMassClose
        self.describeLimit = describeLimit
    }
}

extension MasterDatabase {
    /// What importing `paths` would change; writes nothing.
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
    ///   - dryRun: run the import and roll it back: the report of what it would do.
    ///   - everyChange: where to list every change, whatever `options.describeLimit` says
    ///     (written inside the transaction, read after it).
    /// - Throws: `CSVError` (file, line, column, value, expectation), `ImportError`,
    ///   `MasterDatabaseError`. On any error the database is unchanged.
    @discardableResult
    public func importSnapshot(_ paths: [String], options: ImportOptions = ImportOptions(), dryRun: Bool = false,
                               listingEveryChangeIn everyChange: DescribedChangeFile? = nil) throws -> ChangeReport {
        try runImport(paths, options: options, commit: !dryRun, everyChange: everyChange)
    }

    private func runImport(_ paths: [String], options: ImportOptions, commit: Bool, everyChange: DescribedChangeFile?) throws -> ChangeReport {
        defer { Progress.finish() }
        var phases = PhaseLog()
        let files = try ImportSource.files(from: paths)
        phases.done("headers read")
        return try write { db in
            let version = try PendingVersion(db)
            var keyLines: [MasterTable: KeyLines] = [:]
            for file in files {
                keyLines[file.table] = try version.stage(file)
                phases.done("\(file.table.name) compared")
            }
            let checks = ImportChecks(files: files, keyLines: keyLines)
            let before = try checks.readStateBefore(of: self, changedStations: try version.stagedStationCodes())
            // An error ends the import only once the second connection is done.
            defer { before.finish() }
            Progress.phase("writing version \(version.number)")
            try version.write(memo: options.memo, author: author)
            phases.done("version written")
            let counts = try before.counts.wait()
            phases.done("second connection's counts waited for")
            if !options.allowMassClose { try checks.checkMassClosures(version, openRows: counts.openRows) }
            try checks.checkReferences(version)
            phases.done("references checked")
            // The split suggestions' scan of every station, on the second connection while the
            // version is checked: the stations the version changed are looked at again after.
            let importsStations = files.contains(where: { $0.table == .stations })
            let splits = importsStations ? try SplitFinder(version: version.number).changed(db) : nil
            let keysBefore = splits.flatMap { changed -> BackgroundTask<KeyScan.Keys>? in
                guard before.changesFewStations else { return nil }
                let scan = changed.keyScan
                return before.read { db in try scan.keys(db) }
            }
            defer { _ = try? keysBefore?.wait() }
            Progress.phase("describing and checking version \(version.number)")
            var report = try version.report(
                tables: files.map(\.table), describeLimit: options.describeLimit, listingEveryChangeIn: everyChange, committing: commit,
                touchingBefore: counts.touchingChangedStations)
            phases.done("described and checked")
            report.warnings = try before.connectionWarnings.wait()
            phases.done("second connection's warnings waited for")
            if importsStations {
                report.suggestions = try Self.suggestSplits(db, version: version.number, changed: splits, keysBefore: try keysBefore?.wait())
                phases.done("split suggestions")
            }
            return (report, report.committed)
        }
    }
}
