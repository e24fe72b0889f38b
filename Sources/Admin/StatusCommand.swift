import ArgumentParser
import StationLog

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the data version, and rows and closed rows per table.",
        discussion: """
            Example: station-admin status --json

            \(ExitStatus.readOnly)
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let status = try LogReader(global.openDatabase()).status()
        if output.json { return try Console.printJSON(status) }
        print("\(global.databasePath): data version \(status.version), \(status.updates) updates rows")
        var rows = TextTable(alignments: [.left, .right, .left], indent: "  ")
        for table in status.tables {
            rows.append([table.table, String(table.rows), "rows" + (table.closed > 0 ? ", \(table.closed) closed" : "")])
        }
        rows.print()
    }
}
