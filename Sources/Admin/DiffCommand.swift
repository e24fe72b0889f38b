import ArgumentParser
import Model

struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show what importing station CSVs would change; writes nothing.",
        discussion: "Example: station-admin diff datasets/ekidata/2021-03-12")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var snapshot: SnapshotArguments
    @OptionGroup var output: OutputOptions

    func run() throws {
        let database = try global.openDatabase()
        let report = try database.diff(
            snapshot.paths, options: ImportOptions(allowMassClose: snapshot.allowMassClose, describeLimit: nil))
        if output.json { return try Console.printJSON(report) }
        ReportPrinter.print(report, heading: "Changes an import would make as version \(report.version)")
    }
}
