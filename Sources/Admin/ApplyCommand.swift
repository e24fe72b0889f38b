import ArgumentParser
import StationCurate

struct ApplyCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "apply", abstract: "Apply a plan (one real event) as one version: all its operations or none.",
        discussion: """
            Example, on a master at version 2 (README's loop before its plan): station-admin apply datasets/plans/2024-03-16-hokuriku.jsonl --dry-run

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var progress: ProgressOptions
    @Argument(help: "The plan file (JSON Lines, see datasets/plans).") var plan: String
    @OptionGroup var curation: CurationOptions

    func run() throws {
        let database = try global.openDatabase(author: curation.who)
        try curation.report(Curator(database).apply(planAt: plan, memo: curation.memo, dryRun: curation.dryRun), database)
    }
}
