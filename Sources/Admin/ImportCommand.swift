import ArgumentParser
import StationCurate
import StationImport
import StationVersion

struct ImportCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import station CSVs as one new data version, every change logged in `updates`.",
        discussion: """
            Example, on a new master (station-admin init): station-admin import datasets/ekidata/2019-12-27 --memo "ekidata 2019-12-27"

            The files are merged three ways with upstream's last files of their tables: a column upstream did not change keeps the master's value (a curated fix survives), one upstream changed takes the file's, and one both changed is a conflict the import refuses until it is decided (--prefer, --resolve). Provisional rows that upstream now has under its own codes are adopted with --adopt. A snapshot older than the last one imported is refused (--allow-older).

            \(ExitStatus.standard)
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var progress: ProgressOptions
    @OptionGroup var snapshot: SnapshotArguments
    @Option(help: "The curator's note stored with every updates row (never published).")
    var memo: String?
    @Flag(help: "Show what would be committed, and commit nothing.")
    var dryRun = false
    @Option(help: "How many changes to show in words.")
    var show = 10
    @OptionGroup var output: OutputOptions
    @OptionGroup var who: AuthorOption

    func run() throws {
        let database = try global.openDatabase(author: who)
        // JSON lists every change whatever --show says (--show limits the words only), from a
        // file: an initial import of a million stations has two million.
        let everyChange = output.json ? try DescribedChangeFile() : nil
        let options = try snapshot.options(memo: memo, describeLimit: output.json ? 0 : show)
        let report = try UndecidedOutput.printing(json: output.json) {
            dryRun ? try Importer(database).diff(snapshot.paths, options: options, listingEveryChangeIn: everyChange)
                : try Importer(database).importSnapshot(snapshot.paths, options: options, listingEveryChangeIn: everyChange)
        }
        if let everyChange { return try Console.printJSON(report, listing: everyChange) }
        if report.totalChanges == 0 {
            print("No changes: the database stays at version \(report.version - 1).")
        } else if report.committed {
            ReportPrinter.print(report, heading: "Committed version \(report.version)")
            try ReportPrinter.printNextStep(database)
        } else {
            ReportPrinter.print(report, heading: "Dry run: would commit version \(report.version)")
        }
    }
}
