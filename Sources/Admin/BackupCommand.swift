import ArgumentParser
import StationSchema

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the master to a new file, consistent while other commands run, and checked.",
        discussion: """
            Example: station-admin backup --out master-2024-03-16.sqlite

            The copy is one committed state (SQLite's online backup), passes SQLite's integrity check, and never replaces a file. To restore, stop writing, then copy the backup over the master (and remove master.sqlite-wal and -shm). A release from a restored master is refused while the release folder holds versions it does not have, or has differently (docs/curating.md, "Backups and recovery").

            \(ExitStatus.standard)
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The backup file to write; it must not exist.", valueName: "file")) var out: String

    func run() throws {
        let result = try global.openDatabase().backup(to: out)
        print("Backed up version \(result.version) to \(result.path) (\(result.bytes) bytes), integrity check ok.")
    }
}
