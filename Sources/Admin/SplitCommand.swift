import ArgumentParser
import StationSchema

struct SplitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "split",
        abstract: "Split a station: add a new station copied from the old one and record DUPLICATE old → new.",
        discussion: """
            Example: station-admin split 1120601 9920699 --line 99206 --connect-to 9920606 station_name=八戸

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The old station code.") var old: Int64
    @Argument(help: "The new station code.") var new: Int64
    @Option(help: "The new station's line (default: the old one's).") var line: Int64?
    @Option(help: ArgumentHelp("Stations to connect the new one to, on its line (repeat it, or separate codes with commas).", valueName: "code"))
    var connectTo: [String] = []
    @Argument(help: "column=value pairs that differ from the old station.") var values: [String] = []
    @OptionGroup var curation: CurationOptions

    func validate() throws { _ = try connectCodes() }

    private func connectCodes() throws -> [Int64] {
        try connectTo.flatMap { $0.split(separator: ",") }.map { code in
            guard let value = Int64(code.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("--connect-to '\(code)' is not a station code (expected e.g. --connect-to 1120102 or --connect-to 1120102,1120103).")
            }
            return value
        }
    }

    func run() throws {
        try curation.run([.split(old: old, new: new, line: line, values: try parseAssignments(values), connectTo: try connectCodes())], global)
    }
}
