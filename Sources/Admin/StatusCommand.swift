import ArgumentParser
import Model

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the data version, and rows and closed rows per table.",
        discussion: "Example: station-admin status --json")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let status = try global.openDatabase().status()
        if output.json { return try Console.printJSON(status) }
        print("\(global.databasePath): data version \(status.version), \(status.updates) updates rows")
        for table in status.tables {
            print("  \(table.table.padding(toLength: 12, withPad: " ", startingAt: 0)) \(String(table.rows).leftPadded(8)) rows"
                + (table.closed > 0 ? ", \(table.closed) closed" : ""))
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
