import ArgumentParser
import Foundation
import StationDelta
import StationSchema
import StationSupport

struct DeltaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delta",
        abstract: "Print the SQL a client at a given data version receives.",
        discussion: """
            Example: station-admin delta --from 1     what a phone at version 1 gets; a summary goes to stderr

            \(ExitStatus.readOnly)
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "The client's data version.") var from: Int
    @Option(help: "The version to bring it to (default: the newest).") var to: Int?
    @Flag(help: "Write gzip, as clients download it.") var gzip = false
    @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file")) var output: String?
    @Flag(help: "Wrap the SQL in BEGIN/COMMIT (apps run it inside their own transaction).") var transaction = false
    @OptionGroup var report: OutputOptions

    func validate() throws {
        if report.json && output == nil {
            throw ValidationError("--json prints the summary on stdout, where the SQL would go: give --output FILE for the SQL.")
        }
        if gzip && output == nil && isatty(STDOUT_FILENO) != 0 {
            throw ValidationError("--gzip writes binary data; not to a terminal (redirect it, e.g. > delta.sql.gz, or give --output FILE).")
        }
    }

    func run() throws {
        let destination: DeltaDestination = output.map { .file($0) } ?? .stream(FileSink.standardOutput())
        let written = try DeltaExport(global.openDatabase()).writeDelta(from: from, to: to, gzip: gzip, transaction: transaction, into: destination)
        if report.json { return try Console.printJSON(written) }
        let summary = written.summary
        Console.error("delta \(summary.from) → \(summary.to): \(plural(summary.totalStatements, "statement"))")
        for (table, counts) in summary.statements.sorted(by: { order($0.key) < order($1.key) }) {
            Console.error("  \(table): \(counts["upsert"] ?? 0) new rows, \(counts["update"] ?? 0) updated, \(counts["delete"] ?? 0) removed")
        }
        Console.error("  DUPLICATE: \(summary.duplicates)")
        Console.error("  \(written.sqlBytes) bytes of SQL, \(written.gzipBytes) bytes gzipped")
    }

    private func order(_ table: String) -> Int { MasterTable.all.firstIndex { $0.name == table } ?? .max }
}
