import ArgumentParser
import StationCurate
import StationVersion

struct RevertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revert",
        abstract: "Write a new version that puts back every row a version changed.",
        discussion: """
            Example: station-admin revert 3 --dry-run

            Phones may have the version already, so it is undone by a new one. A column a later version changed again is a conflict: decide it with --prefer theirs (the value before the version) or --prefer ours (the value now), or one by one with --resolve FILE. A row the version added is closed; its splits (DUPLICATE) stay, since phones cannot give back the records they copied (docs/DOMAIN.md).

            \(ExitStatus.standard)
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The data version to revert.") var version: Int
    @OptionGroup var decisions: MergeDecisionOptions
    @OptionGroup var curation: CurationOptions

    func run() throws {
        let database = try global.openDatabase(author: curation.who)
        let decided = try decisions.decisions()
        let report = try UndecidedOutput.printing(json: curation.output.json) {
            try database.revert(version: version, decisions: decided, memo: curation.memo, dryRun: curation.dryRun)
        }
        try curation.report(report, database)
    }
}
