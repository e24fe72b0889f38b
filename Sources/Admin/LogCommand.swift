import ArgumentParser
import Model

struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the updates log, newest first.",
        discussion: "Example: station-admin log --key 1122903 (a station's whole story, its splits included)")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this data version.") var version: Int?
    @Option(help: "Only this table (companies, lines, stations, connections, prefectures).") var table: String?
    @Option(help: "Only this key (composite keys joined with '/').") var key: String?
    @Option(help: "Only this kind (INSERT, UPDATE, DELETE, RESTORE, DUPLICATE).") var type: UpdateKindArgument?
    @Option(name: [.customShort("n"), .customLong("limit")], help: "Only the newest N rows.") var limit: Int?
    @Flag(help: "One JSON object per line (for streaming into other tools).") var nl = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if nl && output.json { throw ValidationError(OutputOptions.oneFormOnly) }
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more.") }
        if let table, MasterTable.named(table) == nil {
            throw ValidationError("Unknown table '\(table)'; expected one of: \(MasterTable.all.map(\.name).joined(separator: ", ")).")
        }
    }

    func run() throws {
        if let key, version == nil, type == nil, limit == nil {
            // A key's story: each change with its columns, old → new, oldest first.
            let story = try global.openDatabase().story(key: key, table: table)
            if output.json { return try Console.printJSON(story) }
            if nl { return try story.forEach(Console.printJSONLine) }
            for entry in story {
                Console.line("\(entry.update.updateDate)  \(entry.summary)" + (entry.update.memo.map { "  (\($0))" } ?? ""))
            }
            return
        }
        let filter = LogFilter(version: version, table: table, key: key, type: type?.kind, limit: limit, newestFirst: true)
        let database = try global.openDatabase()
        if output.json { return try Console.printJSONArray { append in try database.forEachUpdate(filter, append) } }
        let printer = Console.JSONLinePrinter()
        try database.forEachUpdate(filter) { update in
            if nl { return try printer.print(update) }
            let target = update.type == .duplicate
                ? "stations \(update.tableName) → \(update.keyID)" : "\(update.tableName) \(update.keyID)"
            Console.fields(["\(update.upID)", "v\(update.userVersion)", update.updateDate, update.type.rawValue, target]
                + (update.memo.map { [$0] } ?? []))
        }
    }
}
