import ArgumentParser
import StationSchema

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create an empty master database (data version 0).",
        discussion: """
            Example: station-admin init --db new-master.sqlite

            \(ExitStatus.standard)
            """)

    @OptionGroup var global: GlobalOptions

    func run() throws {
        _ = try MasterDatabase.create(at: global.databasePath)
        print("Created \(global.databasePath) at data version 0.")
    }
}
