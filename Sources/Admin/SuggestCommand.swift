import ArgumentParser
import StationCheck
import StationCurate
import StationLog
import StationSchema

struct SuggestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggest",
        abstract: "List likely splits and handovers in a version: a station closed and one added that share a name, a group or a place.",
        discussion: """
            Each comes with a plan line; put the ones you confirm in a plan and `station-admin apply` it.
            Example: station-admin suggest --version 2 --radius 300

            \(ExitStatus.readOnly)
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The data version (default: the newest).") var version: Int?
    // Unconditional, so that "--radius -5" reaches validate() instead of reading as an option.
    @Option(parsing: .unconditional, help: "How close, in metres, counts as the same place.") var radius: Double = SplitSuggestion.defaultRadius
    @Flag(help: "Every candidate pair, also those weaker than a station's same-name successor nearby (a neighbour's).")
    var all = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if !(radius > 0) { throw ValidationError("--radius must be a positive number of metres (e.g. --radius 500).") }
    }

    func run() throws {
        let database = try global.openDatabase()
        let suggestions = try Checker(database).suggestSplits(version: version, radius: radius, all: all)
        if output.json { return try Console.printJSON(suggestions) }
        if suggestions.isEmpty {
            // A suggestion already recorded is not suggested again: say so, or "none" reads as none found.
            let at = try version ?? database.dataVersion()
            let recorded = try database.read { try UpdateLog.splits($0) }.filter { $0.version == at }
            if recorded.isEmpty { return print("No likely splits or handovers in version \(at).") }
            let pairs = recorded.prefix(8).map { "\($0.old) → \($0.new)" }.joined(separator: ", ") + (recorded.count > 8 ? ", …" : "")
            return print("No likely splits or handovers left to record: version \(at) recorded \(plural(recorded.count, "split")) already (\(pairs)).")
        }
        Pager.startIfWanted(disabled: global.noPager)
        ReportPrinter.print(suggestions)
    }
}

struct RecordSplitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record-split",
        abstract: "Record DUPLICATE old → new between two existing stations (e.g. one an import added).",
        discussion: """
            Example: station-admin record-split 1180430 9980101 --memo "the import added 9980101"

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The old station code.") var old: Int64
    @Argument(help: "The new station code.") var new: Int64
    @OptionGroup var curation: CurationOptions

    func run() throws { try curation.run([.recordSplit(old: old, new: new)], global) }
}
