import ArgumentParser
import StationImport
import StationLog
import StationRelease
import StationSchema
import StationVersion

struct DiffCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show what importing station CSVs would change; writes nothing.",
        discussion: """
            Example: station-admin diff datasets/ekidata/2021-03-12 --table stations --type DELETE --show 5

            \(ExitStatus.readOnly) With --exit-code, as GNU diff and cmp: 0 when the files would change nothing, 1 when they would change something, 2 when the diff could not be made (a missing folder, bad input, a usage error).
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var progress: ProgressOptions
    @OptionGroup var snapshot: SnapshotArguments
    @Option(help: "How many changes to describe in words (default: all).") var show: Int?
    @Option(help: "Only describe changes of this table.") var table: TableArgument?
    @Option(help: "Only describe changes of this kind (INSERT, UPDATE, DELETE, RESTORE).") var type: UpdateKindArgument?
    @Flag(help: "Exit with status 1 when the files would change anything, 0 when not, 2 on an error.") var exitCode = false
    @Flag(help: "One JSON object per change and line (all changes matching --table and --type).") var nl = false
    @Flag(help: "Print a resolution file for import --resolve: every conflict and provisional row, each with \"take\": null to fill in.") var conflicts = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if nl && output.json { throw ValidationError(OutputOptions.oneFormOnly) }
        if conflicts && (nl || output.json) { throw ValidationError("--conflicts prints a resolution file; it takes neither --nl nor --json.") }
        if let show, show < 0 { throw ValidationError("--show must be 0 or more.") }
    }

    func run() throws {
        // With --exit-code, 1 means "would change": a failure exits 2, as GNU diff's does.
        do { try compare() } catch let error where exitCode && !(error is ExitCode) {
            throw FailedWithStatus(underlying: error, status: 2)
        }
    }

    private func compare() throws {
        let database = try global.openDatabase()
        // Every change goes to a file and is read back one at a time: a diff of a million
        // stations describes two million.
        let everyChange = try DescribedChangeFile()
        let report = try Importer(database).diff(snapshot.paths, options: try snapshot.options(describeLimit: 0), listingEveryChangeIn: everyChange)
        if conflicts {
            if report.conflicts.isEmpty && report.adoptions.isEmpty {
                // An empty resolution file is a valid one: say why it is empty, where a person reads.
                Console.error("Nothing to decide: the import has no conflict and no provisional row to adopt; import it as it is.")
            }
            print(try MergeDecisions.skeleton(conflicts: report.conflicts, adoptions: report.adoptions), terminator: "")
            if exitCode && !(report.conflicts.isEmpty && report.adoptions.isEmpty) { throw ExitCode(1) }
            return
        }
        func matches(_ change: DescribedChange) -> Bool {
            (table == nil || change.table == table!.table.name) && (type == nil || change.kind == type!.kind)
        }
        if output.json {
            try Console.printJSON(report, listing: everyChange)
        } else if nl {
            let printer = Console.JSONLinePrinter()
            try everyChange.forEach { if matches($0) { try printer.print($0) } }
        } else {
            Pager.startIfWanted(disabled: global.noPager)
            ReportPrinter.printCounts(report, heading: "Changes an import would make as version \(report.version)")
            ReportPrinter.printMerge(report)
            var matching = 0
            try everyChange.forEach { change in
                guard matches(change) else { return }
                if matching < show ?? Int.max { ReportPrinter.printChange(change, first: matching == 0) }
                matching += 1
            }
            if let show, show < matching { print("  … and \(matching - show) more (--show N describes more)") }
            ReportPrinter.printSuggestionsAndFindings(report)
        }
        if exitCode && report.totalChanges > 0 { throw ExitCode(1) }
    }
}

/// An `updates` kind named on the command line, in any case.
struct UpdateKindArgument: ExpressibleByArgument {
    let kind: Update.Kind
    init?(argument: String) {
        guard let kind = Update.Kind(rawValue: argument.uppercased()) else { return nil }
        self.kind = kind
    }
    static var allValueStrings: [String] { [Update.Kind.insert, .update, .delete, .restore, .duplicate].map(\.rawValue) }
}
