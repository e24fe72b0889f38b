import ArgumentParser
import Model

struct SplitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "split",
        abstract: "Split a station: add a new station copied from the old one and record DUPLICATE old → new.",
        discussion: "Example: station-admin split 1120101 9920607 --line 99206 --connect-to 9920608")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The old station code.") var old: Int64
    @Argument(help: "The new station code.") var new: Int64
    @Option(help: "The new station's line (default: the old one's).") var line: Int64?
    @Option(parsing: .upToNextOption, help: "Stations to connect the new one to, on its line.") var connectTo: [Int64] = []
    @Argument(help: "column=value pairs that differ from the old station.") var values: [String] = []
    @OptionGroup var curation: CurationOptions

    func run() throws {
        try curation.run([.split(old: old, new: new, line: line, values: try parseAssignments(values), connectTo: connectTo)], global)
    }
}
