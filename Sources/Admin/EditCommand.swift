import ArgumentParser
import StationSchema

struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Change columns of a row (weight included).",
        discussion: """
            Example: station-admin edit stations 1120101 weight=2 station_name=八戸

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: TableArgument
    @Argument(help: "The key (line_cd/station_cd1/station_cd2 for connections).") var key: String
    @Argument(help: "column=value pairs; an empty value is NULL.") var values: [String]
    @OptionGroup var curation: CurationOptions

    func run() throws {
        try curation.run([.edit(table: table.table, key: keyParts(key), values: try parseAssignments(values))], global)
    }
}
