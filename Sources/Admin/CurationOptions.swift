import ArgumentParser
import StationCurate
import StationSchema
import StationVersion

/// What every curated command shares: a memo, a dry run, JSON output.
struct CurationOptions: ParsableArguments {
    @Option(help: "The curator's note stored with every updates row (never published).") var memo: String?
    @Flag(help: "Print the updates rows and row changes it would write, and write nothing.") var dryRun = false
    @OptionGroup var output: OutputOptions
    @OptionGroup var who: AuthorOption

    /// Applies the operations as one version and prints what happened.
    func run(_ operations: [PlanOperation], _ global: GlobalOptions) throws {
        let database = try global.openDatabase(author: who)
        try report(Curator(database).apply(operations.map { LocatedOperation($0) }, memo: memo, dryRun: dryRun), database)
    }

    func report(_ report: ChangeReport, _ database: MasterDatabase, revertOf reverted: Int? = nil) throws {
        if output.json { return try Console.printJSON(report) }
        if report.totalChanges == 0 {
            // Every conflict decided for the master's value: nothing to write, and no dry run to speak of.
            print("No changes: the database stays at version \(report.version - 1).")
            return ReportPrinter.printMerge(report, revertOf: reverted)
        }
        ReportPrinter.print(report, heading: report.committed ? "Committed version \(report.version)" : "Dry run: would commit version \(report.version)",
                            revertOf: reverted)
        if report.committed { try ReportPrinter.printNextStep(database) }
    }
}

/// A master table named on the command line.
struct TableArgument: ExpressibleByArgument {
    let table: MasterTable
    init?(argument: String) {
        guard let table = MasterTable.named(argument) else { return nil }
        self.table = table
    }
    static var allValueStrings: [String] { MasterTable.all.map(\.name) }
}

/// A table whose rows close instead of going (companies, lines, stations).
struct ClosableTableArgument: ExpressibleByArgument {
    let table: MasterTable
    init?(argument: String) {
        guard let table = MasterTable.named(argument), table.closesByStatus else { return nil }
        self.table = table
    }
    static var allValueStrings: [String] { MasterTable.all.filter(\.closesByStatus).map(\.name) }
}

/// "1 change", "2 changes".
func plural(_ count: Int, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }

/// `column=value` pairs; an empty value is NULL.
func parseAssignments(_ assignments: [String]) throws -> [String: String] {
    var values: [String: String] = [:]
    for assignment in assignments {
        guard let equals = assignment.firstIndex(of: "=") else {
            throw ValidationError("'\(assignment)' is not column=value (e.g. station_name=八戸).")
        }
        values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
    }
    return values
}

func keyParts(_ key: String) -> [String] { key.split(separator: "/").map(String.init) }
