import ArgumentParser
import StationSchema

struct MoveStationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move-stations",
        abstract: "Pass stations to another line (a section changing hands); codes stay, connections between them move.",
        discussion: """
            Example: station-admin move-stations --to-line 99426 1141531 1141532 1141533

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The line_cd they move to.") var toLine: Int64
    @Argument(help: "The station codes.") var stations: [Int64]
    @OptionGroup var curation: CurationOptions

    func run() throws { try curation.run([.moveStations(stations: stations, toLine: toLine)], global) }
}
