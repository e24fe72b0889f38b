import ArgumentParser
import Model

struct WeightsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weights",
        abstract: "Assign map weights: hand weights 1–9 stay; 11 for one station per ~80 km grid square, 12 per ~10 km square, 13 for the rest.",
        discussion: """
            Then shows, for a few real map extents, how the top 150 pins spread over the view.
            Example: station-admin weights --seed 1 --dry-run
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The random seed: the same seed gives the same weights.") var seed: UInt64 = 1
    @OptionGroup var curation: CurationOptions

    func run() throws {
        let database = try global.openDatabase(author: curation.who)
        let report = try database.assignWeights(seed: seed, memo: curation.memo, dryRun: curation.dryRun)
        if curation.output.json { return try Console.printJSON(report) }
        print("\(report.firstOrderSquares) first-order and \(report.secondOrderSquares) second-order grid squares hold open stations.")
        print("Open stations by weight: " + report.stationsByWeight.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))
        print(report.change.totalChanges == 0 ? "No weight changes."
            : (report.change.committed ? "Committed version \(report.change.version)" : "Dry run: would commit version \(report.change.version)")
                + ": \(report.change.totalChanges) stations change weight.")
        print("\nTop 150 pins over an 8 × 8 grid of each view (cells reached / cells with stations)"
            + (report.change.committed ? "" : ", with the weights as stored") + ":")
        print("extent           stations  by weight  by distance only")
        for spread in try database.mapSpread() {
            print(spread.extent.padding(toLength: 16, withPad: " ", startingAt: 0)
                + String(spread.stationsInView).leftPadded(9)
                + "\(spread.coveredByWeight)/\(spread.cellsWithStations)".leftPadded(11)
                + "\(spread.coveredWithoutWeights)/\(spread.cellsWithStations)".leftPadded(18))
        }
    }
}
