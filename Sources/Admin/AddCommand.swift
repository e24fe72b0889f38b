import ArgumentParser
import StationSchema

struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a company, line, station, connection or prefecture.",
        discussion: """
            Example: station-admin add companies company_cd=302 rr_cd=99 company_name=宇都宮ライトレール e_status=0

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: TableArgument
    @Argument(help: "column=value pairs.") var values: [String]
    @OptionGroup var curation: CurationOptions

    func run() throws {
        try curation.run([.add(table: table.table, values: try parseAssignments(values))], global)
    }
}
