import ArgumentParser
import StationCurate
import StationSchema
import StationWeights

struct WeightsCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "weights",
        abstract: "Assign map weights: hand weights 1–9 stay; 11 for one station per ~80 km grid square, 12 per ~5 km cell, 13 for the rest.",
        discussion: """
            --propose-major also gives 1–9 to major stations that have no hand weight (junctions, line ends,
            each municipality's main station), spread over prefectures and grid squares; try it with --dry-run first.
            Then shows, for three real map extents, how the top 150 pins spread over the view before and after.
            Example: station-admin weights --seed 1 --propose-major --dry-run

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var progress: ProgressOptions
    @Option(help: "The random seed: the same seed gives the same weights.") var seed: UInt64 = 1
    @Flag(help: "Propose 1–9 for major stations without a hand weight.") var proposeMajor = false
    @OptionGroup var curation: CurationOptions

    /// The weight changes described on the terminal; `--json` lists every one.
    static let rowsShown = 20

    func run() throws {
        let database = try global.openDatabase(author: curation.who)
        let report = try Weigher(database).assignWeights(seed: seed, proposeMajor: proposeMajor, memo: curation.memo, dryRun: curation.dryRun)
        if curation.output.json { return try Console.printJSON(report) }
        if proposeMajor {
            print("Major stations: \(report.proposedMajors) proposed 1–9, \(report.keptHandWeights) hand weights kept.")
        }
        print("\(report.firstOrderSquares) first-order squares and \(report.sampleCells) ~5 km cells hold open stations.")
        let levels = report.stationsByWeight.keys.sorted()
        let major = report.stationsByWeight.filter { MapWeight.handAssigned.contains($0.key) }.values.reduce(0, +)
        print("Open stations by weight: " + levels.map { "\($0): \(report.stationsByWeight[$0]!)" }.joined(separator: ", ")
            + " (1–9: \(major), 11–12: \((report.stationsByWeight[11] ?? 0) + (report.stationsByWeight[12] ?? 0)))")
        print(report.change.totalChanges == 0 ? "No weight changes."
            : (report.change.committed ? "Committed version \(report.change.version)" : "Dry run: would commit version \(report.change.version)")
                + ": \(plural(report.change.totalChanges, "station")) change weight.")
        // The rows, as every curated command's --dry-run promises: the first of them here, all in --json.
        let shown = report.change.changes.prefix(Self.rowsShown)
        for (index, change) in shown.enumerated() { ReportPrinter.printChange(change, first: index == 0) }
        if report.change.totalChanges > shown.count {
            print("  … and \(report.change.totalChanges - shown.count) more (" + (report.change.committed
                ? "station-admin log --version \(report.change.version))" : "--json lists them all)"))
        }
        print("\nTop 150 pins over an 8 × 8 grid of each view: cells reached of the cells with stations")
        var table = TextTable(header: ["extent", "stations", "before", "after", "by distance only"])
        for (before, after) in zip(report.spreadBefore, report.spreadAfter) {
            func share(_ spread: MapSpread, _ covered: Int) -> String { "\(covered)/\(spread.cellsWithStations)" }
            table.append([before.extent, String(before.stationsInView), share(before, before.coveredByWeight),
                          share(after, after.coveredByWeight), share(after, after.coveredWithoutWeights)])
        }
        table.print()
        if report.change.committed && report.change.totalChanges > 0 { try ReportPrinter.printNextStep(database) }
    }
}
