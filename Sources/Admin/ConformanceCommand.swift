import ArgumentParser
import Foundation
import StationConformance
import StationSupport

struct ConformanceCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Run the release protocol's scenarios against any client's updater (docs/clients.md, \"A client on another platform\").",
        discussion: """
            The kit makes its own signed releases, serves them on 127.0.0.1 honestly and as a hostile \
            network would, prepares the client's database at each older version with users' records \
            and an app's tables, runs the client's command and checks what it left. The command runs \
            under /bin/sh with {db} (the database's path), {url} (the release folder's URL) and {key} \
            (the trusted key's .pub file) filled in; it brings the database to the newest release and \
            exits 0, or refuses with non-zero.

            Example: station-admin conformance --client 'station-phone update --db {db} --from {url} --trust {key} --grace 2 --idle-timeout 5'

            Exit status: 0 when every scenario passed, 1 when one failed (each is named), 2 for a usage error.
            """)

    @OptionGroup var progress: ProgressOptions
    @Option(help: ArgumentHelp("The client's command line, with {db}, {url} and {key}.", valueName: "command")) var client: String?
    @Option(name: .customLong("scenario"), help: ArgumentHelp("Run only this scenario, or this group (delta, full, trust, …); repeatable.", valueName: "id"))
    var only: [String] = []
    @Option(help: ArgumentHelp("The longest a run may take before the kit kills it.", valueName: "seconds")) var deadline = 20.0
    @Option(help: ArgumentHelp("The most resident memory a run may use.", valueName: "MiB")) var memoryBound = 256
    @Option(help: ArgumentHelp("Decides the instants of the kill scenarios.", valueName: "number")) var seed: UInt64 = 1
    @Option(help: ArgumentHelp("Where the kit writes its releases and the client databases (new or empty); default: a new temporary folder, removed when every scenario passed.", valueName: "dir"))
    var workFolder: String?
    @Option(help: ArgumentHelp("Also write the results as JUnit XML to this file.", valueName: "file")) var junit: String?
    @Flag(help: "List the scenarios, a line each: id, group, what it protects.") var list = false
    @Flag(help: "Print the report as JSON (docs/schemas/conformance.schema.json).") var json = false

    func validate() throws {
        if !list && client == nil { throw ValidationError("--client is required: the command that updates a database, e.g. --client 'station-phone update --db {db} --from {url} --trust {key}'") }
        if deadline <= 0 { throw ValidationError("--deadline takes a number of seconds above 0") }
        if memoryBound <= 0 { throw ValidationError("--memory-bound takes a number of MiB above 0") }
        if let client, !list {
            do { _ = try ClientCommand(client) } catch { throw ValidationError(ErrorText.describe(error)) }
        }
        do {
            _ = try ConformanceKit(.init(client: try ClientCommand("{db} {url}"), workFolder: "")).selecting(only)
        } catch {
            throw ValidationError(ErrorText.describe(error))
        }
    }

    func run() throws {
        if list {
            for scenario in ConformanceScenario.all { print("\(scenario.id)\t\(scenario.group.rawValue)\t\(scenario.protects)") }
            return
        }
        let temporary = workFolder == nil
        let work = workFolder ?? FileManager.default.temporaryDirectory.appendingPathComponent("station-admin-conformance-\(UUID().uuidString.prefix(8))").path
        var settings = ConformanceKit.Configuration(client: try ClientCommand(client ?? ""), workFolder: work)
        settings.deadline = deadline
        settings.memoryBoundBytes = memoryBound << 20
        settings.only = only
        settings.seed = seed
        let kit = ConformanceKit(settings)
        let json = self.json
        let report = try SynchronousWait.result {
            try await kit.run { event in
                switch event {
                case .preparing:
                    Console.error("conformance: making the kit's signed releases in \(work)")
                case let .finished(result, done, total):
                    // Each scenario's line as it ends: on stdout for the reader, on stderr under --json.
                    let line = "[\(done)/\(total)] \(result.line)"
                    if json { Console.error(line) } else { print(line) }
                }
            }
        }
        if let junit {
            try Data(report.junitXML().utf8).write(to: URL(fileURLWithPath: junit), options: .atomic)
        }
        if json {
            try Console.printJSON(report)
        } else {
            print(report.summary)
        }
        if temporary && report.failed.isEmpty {
            try? FileManager.default.removeItem(atPath: work)
        } else if !report.failed.isEmpty {
            Console.error("conformance: each run's output is in \(work)/scenarios/ID/run-N.log")
        }
        if !report.failed.isEmpty { throw ExitCode.failure }
    }
}
