import ArgumentParser
import StationCurate
import StationVersion

struct RevertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revert",
        abstract: "Write a new version that puts back every row a version changed.",
        discussion: """
            Example: station-admin revert 3 --dry-run

            Phones may have the version already, so it is undone by a new one. A column a later version changed again, or that upstream now holds as the version wrote it, is a conflict: decide it with --prefer theirs (the value before the version) or --prefer ours (the value now), or one by one with --resolve FILE (revert V --conflicts writes its skeleton). A revert that would leave an open row with a close date, or a connection with an end on another line or closed, is refused; a connection is its key, so a conflict over one is over the row (column \"row\"). A row the version added is closed; its splits (DUPLICATE) stay, since phones cannot give back the records they copied (docs/DOMAIN.md).

            \(ExitStatus.standard)
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The data version to revert.") var version: Int
    @OptionGroup var decisions: MergeDecisionOptions
    @OptionGroup var curation: CurationOptions
    @Flag(help: "Print a resolution file for --resolve: every conflict of this revert, each with \"take\": null to fill in; writes nothing.")
    var conflicts = false

    func validate() throws {
        if conflicts && curation.output.json { throw ValidationError("--conflicts prints a resolution file; it takes no --json.") }
    }

    func run() throws {
        let database = try global.openDatabase(author: curation.who)
        let decided = try decisions.decisions()
        if conflicts {
            let found = try Curator(database).revert(version: version, decisions: decided, dryRun: true).conflicts
            if found.isEmpty { Console.error("Nothing to decide: reverting version \(version) meets no conflict.") }
            return print(try MergeDecisions.skeleton(conflicts: found, adoptions: []), terminator: "")
        }
        let report = try UndecidedOutput.printing(json: curation.output.json) {
            try Curator(database).revert(version: version, decisions: decided, memo: curation.memo, dryRun: curation.dryRun)
        }
        try curation.report(report, database, revertOf: version)
    }
}
