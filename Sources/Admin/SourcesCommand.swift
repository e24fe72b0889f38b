import ArgumentParser
import StationImport

struct SourcesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "The master's sources in their order: the primary, whose values stand, then each that fills what it lacks.",
        discussion: """
            Example: station-admin sources --disagreements trainlcd

            Each source with its newest import of each table: the file, the rows of the master it carries, and for a source that fills, the rows whose empty cells its newest import filled and the values where it and the primary differ (check's source-disagrees).

            \(ExitStatus.readOnly)
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("List every value where this source and the primary both have one and differ.", valueName: "source"))
    var disagreements: String?
    @OptionGroup var output: OutputOptions

    func run() throws {
        let ledger = SourceLedger(try global.openDatabase())
        if let disagreements {
            let found = try ledger.disagreements(of: disagreements)
            if output.json { return try Console.printJSON(found.map(DisagreementLine.init)) }
            if found.isEmpty { return print("No value where \(disagreements) and the primary differ.") }
            var table = TextTable(header: ["table", "key", "column", "primary", disagreements], alignments: [.left, .right, .left, .left, .left])
            for row in found { table.rows.append([row.table, row.key, row.column, row.primaryValue.description, row.sourceValue.description]) }
            return table.print()
        }
        let sources = try ledger.sources()
        if output.json { return try Console.printJSON(sources) }
        if sources.isEmpty { return print("No sources yet: import one (station-admin import DIR).") }
        for source in sources {
            Console.line("\(source.position). \(source.name) (\(source.role)): version \(source.version)"
                + (source.snapshotDate.map { ", snapshot \($0)" } ?? "")
                + (source.role == "fills" ? ", \(source.disagreements) values differ from the primary's" : ""))
            var table = TextTable(header: ["table", "file", "rows carried", "rows filled"], alignments: [.left, .left, .right, .right], indent: "   ")
            for entry in source.tables { table.rows.append([entry.table, entry.file, "\(entry.rows)", entry.filled.map(String.init) ?? "-"]) }
            table.print()
        }
    }
}

/// A disagreement as `sources --disagreements NAME --json` prints it.
private struct DisagreementLine: Encodable {
    let table: String, key: String, column: String, primary: String, source: String

    init(_ found: SourceDisagreement) {
        table = found.table
        key = found.key
        column = found.column
        primary = found.primaryValue.description
        source = found.sourceValue.description
    }
}
