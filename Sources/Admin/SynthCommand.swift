import ArgumentParser
import Foundation
import StationCSV
import StationSynth

struct SynthCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "synth",
        abstract: "Generate an ekidata-shaped snapshot, or a next snapshot of one with some stations changed.",
        discussion: """
            Examples:
              station-admin synth --stations 100000 --seed 1 --out s1
              station-admin synth --from s1 --change 1 --seed 2 --out s2           s1 with 1 % of its stations changed
              station-admin synth --stations 100000 --scattered --out broken       coordinates that check refuses
              station-admin synth --from s1 --source trainlcd --seed 3 --out t1     what a second source publishes of s1

            \(ExitStatus.readOnly)
            """)
    @OptionGroup var progress: ProgressOptions
    @Option(help: "How many stations to generate.") var stations: Int?
    @Option(help: "The random seed: the same arguments give the same bytes.") var seed: UInt64 = 1
    @Option(help: ArgumentHelp("The folder to write.", valueName: "dir")) var out: String
    @Option(help: ArgumentHelp("A snapshot to change instead of generating one.", valueName: "dir")) var from: String?
    @Option(help: "With --from: the percentage of stations to change.") var change: Double = 1
    @Option(help: ArgumentHelp("With --from: write what this second source publishes of it instead (import --source).", valueName: "name"))
    var source: String?
    @Flag(help: "Place each station anywhere in Japan, far from its neighbours (a broken export: about one finding per station).")
    var scattered = false

    func validate() throws {
        if (stations == nil) == (from == nil) { throw ValidationError("Give either --stations N or --from DIR.") }
        if let stations, stations < 1 { throw ValidationError("--stations must be at least 1.") }
        if !(0...100).contains(change) { throw ValidationError("--change is a percentage from 0 to 100.") }
        if let source, source != SourceProfile.trainlcd.name {
            throw ValidationError("--source: the synthesizer writes only \(SourceProfile.trainlcd.name)'s shape, not \"\(source)\".")
        }
        if source != nil && from == nil { throw ValidationError("--source writes what a second source says of a snapshot: give --from DIR.") }
        if scattered && from != nil { throw ValidationError("--scattered places the stations of a new snapshot; it does not go with --from.") }
    }

    func run() throws {
        let summary = try from.map { base in
            try source == nil ? SnapshotSynthesizer.next(of: base, changePercent: change, seed: seed, into: out)
                : SnapshotSynthesizer.secondSource(of: base, seed: seed, into: out)
        }
            ?? SnapshotSynthesizer.generate(stations: stations!, seed: seed, scattered: scattered, into: out)
        let rows = summary.rows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        Console.error("Wrote \(out): \(rows)")
        if !summary.changes.isEmpty {
            Console.error("Changed: " + summary.changes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
    }
}
