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
    /// Where the import changes its way of writing and checking; tests set it.
    package let tuning: ImportTuning

    /// An importer into `master`.
    public init(_ master: MasterDatabase) {
        self.init(master, tuning: ImportTuning())
    }

    /// An importer into `master` that writes and checks as `tuning` says (tests' seam).
    package init(_ master: MasterDatabase, tuning: ImportTuning) {
        self.master = master
        self.tuning = tuning
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
    /// The source the files are from: ekidata, the primary, by default; another fills what
    /// the primary lacks (`SourceFill`).
    public var source: SourceProfile = .ekidata
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
        if options.source != .ekidata { return try SourceFill(master: master, profile: options.source, options: options).run(paths, commit: false) }
        var run = ImportRun(master, tuning: tuning, options: options, commit: false, everyChange: everyChange)
        return try run.run(paths)
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
    /// - Throws: `InputError` (file, line, column, value, expectation), `ImportError`,
    ///   `MasterDatabaseError`. On any error the database is unchanged.
    @discardableResult
    public func importSnapshot(_ paths: [String], options: ImportOptions = ImportOptions(),
                               listingEveryChangeIn everyChange: DescribedChangeFile? = nil) throws -> ChangeReport {
        if options.source != .ekidata { return try SourceFill(master: master, profile: options.source, options: options).run(paths, commit: true) }
        var run = ImportRun(master, tuning: tuning, options: options, commit: true, everyChange: everyChange)
        return try run.run(paths)
    }
}
