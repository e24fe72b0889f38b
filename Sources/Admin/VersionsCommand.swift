import ArgumentParser
import StationCurate
import StationLog
import StationRelease
import StationSchema

struct VersionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions",
        abstract: "One line per data version, newest first: version, date, who, what changed, memo.",
        discussion: """
            Example: station-admin versions -n 3

            \(ExitStatus.readOnly)
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: [.customShort("n"), .customLong("limit")], help: "Only the newest N versions.") var limit: Int?
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more.") }
    }

    func run() throws {
        let versions = try LogReader(global.openDatabase()).versions(limit: limit)
        if output.json { return try Console.printJSON(versions) }
        if versions.isEmpty { return print("No versions yet: import or apply something.") }
        for version in versions {
            let counts = MasterTable.all.compactMap { table -> String? in
                guard let kinds = version.counts[table.name] else { return nil }
                let parts = Update.Kind.allCases.compactMap { kind in kinds[kind.rawValue].map { "\($0) \(kind.rawValue)" } }
                return "\(table.name) " + parts.joined(separator: " ")
            }.joined(separator: ", ")
            Console.line("v\(version.version)  \(version.date)  \(version.author ?? "-")  \(counts)"
                + (version.memo.map { "  (\($0))" } ?? ""))
        }
    }
}
