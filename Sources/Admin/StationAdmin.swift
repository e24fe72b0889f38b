import ArgumentParser
import Foundation

@main
struct StationAdmin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "station-admin",
        abstract: "Maintain the station master data and publish it to the offline apps.",
        subcommands: [
            InitCommand.self, DiffCommand.self, ImportCommand.self, StatusCommand.self, LogCommand.self,
            AddCommand.self, EditCommand.self, TransferLineCommand.self, MoveStationsCommand.self, CloseCommand.self,
            RestoreCommand.self, SplitCommand.self, RecordSplitCommand.self, ConnectCommand.self, DisconnectCommand.self,
            ApplyCommand.self, SuggestCommand.self, WeightsCommand.self, SynthCommand.self,
            ReleaseCommand.self, DeltaCommand.self, VerifyCommand.self,
        ])

    /// Data on stdout, messages on stderr; exit 1 for a failed command, 2 for a usage error.
    static func main() {
        do {
            try CommandLineText.requireUTF8()
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            if code == .validationFailure {
                Console.error(fullMessage(for: error))
                Console.error("See 'station-admin --help'.")
                Foundation.exit(2)
            }
            if let code = error as? ExitCode { Self.exit(withError: code) }
            Console.error((error as? LocalizedError)?.errorDescription ?? String(describing: error))
            Foundation.exit(1)
        }
    }
}
