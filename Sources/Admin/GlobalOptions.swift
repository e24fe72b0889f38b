import ArgumentParser
import Foundation
import Model

/// Options every subcommand shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The master database (default: $STATION_ADMIN_DB, else ./master.sqlite).", valueName: "path"))
    var db: String?

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
}

enum Console {
    /// One line of text output: control characters in names are shown escaped, so that
    /// data cannot forge extra lines or redraw the terminal (JSON keeps the exact value).
    static func line(_ text: String) {
        print(text.escapingControlCharacters)
    }

    /// One line of tab-separated fields: each field escaped, the tabs between them kept.
    static func fields(_ fields: [String]) {
        print(fields.map(\.escapingControlCharacters).joined(separator: "\t"))
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// One compact JSON object on one line (`--nl`), for streaming into other tools.
    static func printJSONLine<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static func printJSON<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // The manifest's style: one contract for every key the tool prints (docs/json.md).
        encoder.keyEncodingStrategy = .convertToSnakeCase
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
