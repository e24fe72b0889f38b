import ArgumentParser
import StationLog
import StationSchema

struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the updates log, newest first: each change with its row's name and values.",
        discussion: """
            Examples:
              station-admin log -n 5                      the five newest changes, 東京: weight 13 → 2
              station-admin log --key 1122903             a station's whole story, its splits included
              station-admin log --since v3 --until 2026-11-24 --author hanako --reverse
              station-admin log --oneline                 one short line per row, without values
            On a terminal, long output goes through $PAGER (less -FRX by default); --no-pager prints it.

            \(ExitStatus.readOnly)
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this data version.") var version: Int?
    @Option(help: "Only this table (companies, lines, stations, connections, prefectures).") var table: String?
    @Option(help: "Only this key (composite keys joined with '/').") var key: String?
    @Option(help: "Only this kind (INSERT, UPDATE, DELETE, RESTORE, DUPLICATE).") var type: UpdateKindArgument?
    @Option(help: ArgumentHelp("Only changes from this version (4 or v4) or date (2026-11-24) on.", valueName: "version-or-date"))
    var since: String?
    @Option(help: ArgumentHelp("Only changes up to this version or date, inclusive.", valueName: "version-or-date"))
    var until: String?
    @Option(help: ArgumentHelp("Only versions committed by this author.", valueName: "name")) var author: String?
    @Option(name: [.customShort("n"), .customLong("limit")], help: "Only the first N rows shown.") var limit: Int?
    @Flag(help: "Oldest first (a key's story alone reads oldest first already: --reverse shows it newest first).")
    var reverse = false
    @Flag(help: "One short line per row: id, version, date, kind, table and key, without names or values.")
    var oneline = false
    @Flag(help: "One JSON object per line (for streaming into other tools).") var nl = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if nl && output.json { throw ValidationError(OutputOptions.oneFormOnly) }
        if oneline && (nl || output.json) { throw ValidationError("--oneline is a text form: leave out --json and --nl.") }
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more.") }
        if let table, MasterTable.named(table) == nil {
            throw ValidationError("Unknown table '\(table)'; expected one of: \(MasterTable.all.map(\.name).joined(separator: ", ")).")
        }
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, LogBound(value) == nil {
                throw ValidationError("\(name) '\(value)' is neither; expected \(LogBound.expectation).")
            }
        }
    }

    /// The key alone asks for a story, which reads oldest first.
    private var isStory: Bool {
        key != nil && version == nil && type == nil && limit == nil && since == nil && until == nil && author == nil
    }

    func run() throws {
        let database = try global.openDatabase()
        let filter = LogFilter(version: version, table: table, key: key, type: type?.kind,
                               since: since.flatMap(LogBound.init), until: until.flatMap(LogBound.init), author: author,
                               limit: limit, newestFirst: isStory ? reverse : !reverse)
        if isStory {
            // A key's story: each change with its columns, old → new.
            let story = try LogReader(database).story(key: key!, table: table, newestFirst: filter.newestFirst)
            // What imports kept or decided of the key stands among its changes, at the version of the import.
            let reader = LogReader(database)
            let notes = try reader.mergeNotes(key: key!, table: table).map { ($0, try reader.source(of: $0)) }
            let lines = StoryLine.interleaving(story, notes: notes, newestFirst: filter.newestFirst)
            if output.json { return try Console.printJSON(lines) }
            if nl { return try lines.forEach(Console.printJSONLine) }
            Pager.startIfWanted(disabled: global.noPager)
            for line in lines {
                switch line {
                case .note(let note, let source): Console.line(Self.line(note, source))
                case .entry(let entry):
                    if oneline { Console.fields(Self.shortFields(entry.update)) } else { Console.line(Self.line(entry)) }
                }
            }
            return
        }
        // JSON carries what the text shows: each row with its name and values, as a key's story has them.
        if output.json { return try Console.printJSONArray { append in try LogReader(database).forEachDescribedUpdate(filter, append) } }
        if nl {
            let printer = Console.JSONLinePrinter()
            return try LogReader(database).forEachDescribedUpdate(filter) { try printer.print($0) }
        }
        Pager.startIfWanted(disabled: global.noPager)
        if oneline {
            return try LogReader(database).forEachUpdate(filter) { Console.fields(Self.shortFields($0)) }
        }
        try LogReader(database).forEachDescribedUpdate(filter) { Console.line(Self.line($0)) }
    }

    /// `21880  v4  2026-11-24T10:00:00Z  UPDATE stations 1130101 東京: weight 13 → 2  (memo)`, and
    /// `from trainlcd 2025-06-28` before the memo for a change an import made (the memo left out
    /// when it says the same, as a fill's does).
    private static func line(_ entry: StoryEntry) -> String {
        let update = entry.update
        let source = entry.source?.description
        let memo = update.memo.flatMap { $0 == source ? nil : $0 }
        return "\(update.upID)  v\(update.userVersion)  \(update.updateDate)  \(entry.change.summary)"
            + (source.map { "  from \($0)" } ?? "") + (memo.map { "  (\($0))" } ?? "")
    }

    /// `      v5  merge (ekidata 2021-03-12): import kept stations 1191420 close_ymd: kept 2017-07-05 from v3 (the file says NULL)`
    private static func line(_ note: MergeNote, _ source: VersionSource?) -> String {
        "       v\(note.version)  merge" + (source.map { " (\($0.description))" } ?? "") + ": \(note.description)"
    }

    /// The `--oneline` fields: `21880 v4 2026-11-24T… UPDATE stations 1130101 [memo]`.
    private static func shortFields(_ update: Update) -> [String] {
        let target = "\(update.subject.table) \(update.subject.key)"
        return ["\(update.upID)", "v\(update.userVersion)", update.updateDate, update.type.rawValue, target] + (update.memo.map { [$0] } ?? [])
    }
}

/// One line of a key's story: a change, or what an import kept or decided of the key beside its
/// changes (`{"merge_note": {…}, "source": {…}}` in JSON, the change report's `merge_notes`
/// shape and the source of the import that made the note's version).
enum StoryLine: Encodable {
    case entry(StoryEntry)
    case note(MergeNote, VersionSource?)

    private enum CodingKeys: String, CodingKey { case mergeNote = "merge_note", source }

    func encode(to encoder: Encoder) throws {
        switch self {
        case .entry(let entry): try entry.encode(to: encoder)
        case .note(let note, let source):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(note, forKey: .mergeNote)
            try container.encode(source, forKey: .source)
        }
    }

    /// The story with each note before the first change of a later version (after, newest first).
    static func interleaving(_ story: [StoryEntry], notes: [(MergeNote, VersionSource?)], newestFirst: Bool) -> [StoryLine] {
        var notes = newestFirst ? Array(notes.reversed()) : notes
        var lines: [StoryLine] = []
        for entry in story {
            while let (note, source) = notes.first,
                  newestFirst ? note.version > entry.update.userVersion : note.version < entry.update.userVersion {
                lines.append(.note(note, source))
                notes.removeFirst()
            }
            lines.append(.entry(entry))
        }
        return lines + notes.map { StoryLine.note($0.0, $0.1) }
    }
}
