import ArgumentParser
import CStandardStreams
import Foundation
import StationCheck
import StationDelta
import StationImport
import StationLog
import StationSchema
import StationSupport
import StationVersion

/// Options every subcommand shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The master database (default: $STATION_ADMIN_DB, else ./master.sqlite).", valueName: "path"))
    var db: String?

    @Flag(name: .customLong("no-pager"), help: "Print long output (log, diff --show, check, suggest) instead of paging it on a terminal.")
    var noPager = false

    /// The options above as typed, for moving them after a command they were typed before:
    /// those that take a value, and the flags.
    static let valuedNames: Set<String> = ["--db"]
    static let flagNames: Set<String> = ["--no-pager"]

    var databasePath: String {
        db ?? ProcessInfo.processInfo.environment["STATION_ADMIN_DB"] ?? "master.sqlite"
    }

    func openDatabase(author: AuthorOption? = nil) throws -> MasterDatabase {
        try MasterDatabase.open(at: databasePath, author: author?.name)
    }
}

/// Who makes a version: kept with it in the master (curator data, never published).
struct AuthorOption: ParsableArguments {
    @Option(help: ArgumentHelp("Who makes the version (default: $STATION_ADMIN_AUTHOR, else the login name).", valueName: "name"))
    var author: String?

    var name: String {
        author ?? ProcessInfo.processInfo.environment["STATION_ADMIN_AUTHOR"] ?? ProcessInfo.processInfo.userName
    }
}

/// Options of commands that print data.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    static let oneFormOnly = "--json prints one JSON document and --nl one JSON object per line: choose one."
}

/// A failure whose exit status is not the usual 1, because 1 means something else for the
/// command (`diff --exit-code`: "the files would change something").
struct FailedWithStatus: Error {
    let underlying: any Error
    let status: Int32
}
