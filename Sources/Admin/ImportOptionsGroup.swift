import ArgumentParser
import StationCSV
import StationImport
import StationSchema
import StationVersion

/// The arguments `diff` and `import` share.
struct SnapshotArguments: ParsableArguments {
    @Argument(help: ArgumentHelp(
        "Station CSVs: folders (every *.csv in them) or files. Tables are recognised by header.", valueName: "path"))
    var paths: [String]

    @Flag(name: .long, help: "Accept a file that closes more than 5% of a table's open rows.")
    var allowMassClose = false

    @Flag(name: .long, help: "Accept a file that reopens more than 5% of a table's closed rows.")
    var allowMassReopen = false

    @Option(help: ArgumentHelp("The snapshot's date, for files whose names carry none (ekidata's do: station20210312free.csv).", valueName: "YYYY-MM-DD"))
    var snapshotDate: String?

    @Flag(name: .long, help: "Accept a snapshot older than the last one imported.")
    var allowOlder = false

    @OptionGroup var decisions: MergeDecisionOptions

    @Flag(help: "Adopt every provisional row upstream now has under its own code: close it, and DUPLICATE each station to upstream's.")
    var adopt = false

    @Option(help: ArgumentHelp("The files' source: ekidata, the primary; or trainlcd (TrainLCD/StationAPI's data/ files), which fills what the primary lacks and never overrides it.",
                               valueName: "name"))
    var source = SourceProfile.ekidata.name

    @Option(help: ArgumentHelp("A source this StationAdmin does not know, described by a JSON file (its name, ignored columns, value maps; docs/curating.md). Not with --source.",
                               valueName: "file"))
    var profile: String?

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Please give at least one folder or CSV file.") }
        if profile != nil && source != SourceProfile.ekidata.name {
            throw ValidationError("Give --source NAME or --profile FILE, not both: the profile names its source.")
        }
    }

    func options(memo: String? = nil, describeLimit: Int?) throws -> ImportOptions {
        var merge = try decisions.decisions()
        merge.adoptAll = adopt
        var options = ImportOptions(memo: memo, allowMassClose: allowMassClose, describeLimit: describeLimit, decisions: merge,
                                    snapshotDate: snapshotDate, allowOlder: allowOlder, allowMassReopen: allowMassReopen)
        if let profile {
            options.source = try SourceProfile.load(profile, .shipped)
        } else {
            guard let known = SourceProfile.named(source) else { throw ImportError.unknownSource(source) }
            options.source = known
        }
        return options
    }
}

/// How conflicts are decided: `diff`, `import` and `revert` (provisional rows, by `--adopt`, only by the first two).
struct MergeDecisionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Decide every conflict for one side: ours (the master's value) or theirs (the file's; for revert, the value before the version).",
                               valueName: "side"))
    var prefer: SideArgument?

    @Option(help: ArgumentHelp("Decide conflicts (and provisional rows) one by one: a JSON Lines file, as `diff --conflicts` writes it.", valueName: "file"))
    var resolve: String?

    func decisions() throws -> MergeDecisions {
        var decisions = MergeDecisions(prefer: prefer?.side)
        if let resolve { decisions = try decisions.adding(resolutionFile: resolve) }
        return decisions
    }
}

/// `ours` or `theirs`.
struct SideArgument: ExpressibleByArgument {
    let side: MergeSide
    init?(argument: String) {
        guard let side = MergeSide(rawValue: argument.lowercased()) else { return nil }
        self.side = side
    }
    static var allValueStrings: [String] { MergeSide.allCases.map(\.rawValue) }
}
