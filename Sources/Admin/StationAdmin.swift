import ArgumentParser
import Foundation
import StationCheck
import StationImport
import StationLog
import StationSchema
import StationSupport

@main
struct StationAdmin: ParsableCommand {
    /// The program's name, as the curator types it.
    static let commandName = "station-admin"

    static let configuration = CommandConfiguration(
        commandName: commandName,
        abstract: "Maintain the station master data and publish it to the offline apps.",
        discussion: """
            Exit status: 0 on success; 1 when the command failed (the message says why and what to do),
            or when `check` or `verify` found errors; 2 for a usage error (and for a failed
            `diff --exit-code`, whose 1 means "would change").
            Shell completion: station-admin --generate-completion-script bash (or zsh, fish).
            The tool's version: station-admin --version.
            """,
        groupedSubcommands: [
            CommandGroup(name: "Set up", subcommands: [InitCommand.self, BackupCommand.self, SynthCommand.self]),
            CommandGroup(name: "Import and look", subcommands: [
                DiffCommand.self, ImportCommand.self, SourcesCommand.self, StatusCommand.self, VersionsCommand.self, LogCommand.self]),
            CommandGroup(name: "Curate", subcommands: [
                AddCommand.self, EditCommand.self, TransferLineCommand.self, MoveStationsCommand.self, CloseCommand.self,
                RestoreCommand.self, SplitCommand.self, RecordSplitCommand.self, ConnectCommand.self, DisconnectCommand.self,
                ApplyCommand.self, RevertCommand.self, WeightsCommand.self]),
            CommandGroup(name: "Check and review", subcommands: [
                CheckCommand.self, WaiveCommand.self, UnwaiveCommand.self, ReviewCommand.self, SuggestCommand.self]),
            CommandGroup(name: "Publish", subcommands: [
                ReleaseCommand.self, DeltaCommand.self, VerifyCommand.self, ServeCommand.self, KeysCommand.self, ResignCommand.self,
                SyncPostgresCommand.self, ConformanceCommand.self]),
        ])

    /// The package version, printed by `station-admin --version`. Not ArgumentParser's
    /// `CommandConfiguration.version`, which lists a global `--version` in every subcommand's
    /// help beside the subcommand's own `--version <version>` (log, check, review, …).
    static let version = "0.10.0"

    /// Data on stdout, messages on stderr; exit 1 for a failed command, 2 for a usage error.
    static func main() {
        SQLiteProcessSettings.applyBeforeFirstConnection()
        // The library names the commands its messages suggest; spelled here, as a shell takes them.
        CommandHint.spellHints { hint in ([commandName] + hint.shellWords).joined(separator: " ") }
        do {
            try CommandLineText.requireUTF8()
            let arguments = CommandSuggestion.globalOptionsMovedAfterTheCommand(Array(CommandLine.arguments.dropFirst()))
            if let negative = CommandSuggestion.negativeNumber(in: arguments) {
                Console.error("Error: \(negative)")
                Console.error("  See 'station-admin \(arguments.first { !$0.hasPrefix("-") } ?? "") --help' for the options.")
                Foundation.exit(2)
            }
            if arguments == ["--version"] {
                print(version)
                Foundation.exit(0)
            }
            if let typo = CommandSuggestion.misspelledCommand(in: arguments, commands: configuration.subcommands.map { $0._commandName }) {
                Console.error("Error: '\(typo.given)' is not a station-admin command. Did you mean '\(typo.nearest)'?")
                Console.error("  See 'station-admin --help' for the commands.")
                Foundation.exit(2)
            }
            var command = try parseAsRoot(arguments)
            if let long = command as? ShowsProgress {
                try TerminalProgress.around(quiet: long.progress.quiet) { try command.run() }
            } else {
                try command.run()
            }
            let written = Console.finishStandardOutput()
            Pager.finish()
            PhaseLog.reportPeakMemory()
            if !written { Foundation.exit(1) }
        } catch {
            Pager.finish()
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            if code == .validationFailure {
                // ArgumentParser's message already ends with its "See '… --help'" hint.
                Console.error(fullMessage(for: error))
                Foundation.exit(2)
            }
            if let code = error as? ExitCode { Self.exit(withError: code) }
            if let failed = error as? FailedWithStatus {
                Console.error(ErrorText.describe(failed.underlying))
                Foundation.exit(failed.status)
            }
            Console.error(ErrorText.describe(error))
            Foundation.exit(1)
        }
    }
}
