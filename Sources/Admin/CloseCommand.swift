import ArgumentParser
import StationSchema

struct CloseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "close", abstract: "Close a company, line or station (DELETE: e_status = 2; the row stays).",
        discussion: """
            Example: station-admin close stations 1111312 --date 2023-04-01

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: ClosableTableArgument
    @Argument(help: "The code.") var key: String
    @Option(help: "The closing date (YYYY-MM-DD), stored as close_ymd on stations.") var date: String?
    @Flag(help: "Also close the open lines and stations it leaves behind.") var cascade = false
    @OptionGroup var curation: CurationOptions

    func run() throws {
        try curation.run([.close(table: table.table, key: keyParts(key), date: date, cascade: cascade)], global)
    }
}
