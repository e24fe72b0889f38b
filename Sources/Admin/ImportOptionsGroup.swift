import ArgumentParser
import StationSchema

/// The arguments `diff` and `import` share.
struct SnapshotArguments: ParsableArguments {
    @Argument(help: ArgumentHelp(
        "Station CSVs: folders (every *.csv in them) or files. Tables are recognised by header.", valueName: "path"))
    var paths: [String]

    @Flag(name: .long, help: "Accept a file that closes more than 5% of a table's open rows.")
    var allowMassClose = false

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Please give at least one folder or CSV file.") }
    }
}
