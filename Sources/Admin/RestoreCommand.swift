import ArgumentParser
import StationSchema

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Bring back a closed company, line or station (RESTORE).",
        discussion: """
            Example: station-admin restore stations 1120101 --dry-run

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: ClosableTableArgument
    @Argument(help: "The code.") var key: String
    @OptionGroup var curation: CurationOptions

    func run() throws { try curation.run([.restore(table: table.table, key: keyParts(key))], global) }
}
