import ArgumentParser
import StationCheck
import StationRelease
import StationSchema
import StationSupport

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Run the data-quality rules over a version; exit 1 while an error is not waived.",
        discussion: """
            Findings come errors first, each as `table key: rule: what is wrong (values; how to fix)`.
            Rules: \(CheckRule.allCases.map { "\($0.rawValue) (\($0.severity.rawValue))" }.joined(separator: ", ")).
            Accept a finding that is right with `station-admin waive`; `release` refuses while an error is not waived.
            Example: station-admin check --version 2 --rule connection-too-long

            \(ExitStatus.findings("no error-level finding is unwaived"))
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The data version (default: the newest).") var version: Int?
    @Option(help: "Only the findings of this rule (repeatable).") var rule: [String] = []
    @Option(parsing: .unconditional, help: "connection-too-long: the longest connection, in km.") var connectionLimit: Double = 50
    @Option(parsing: .unconditional, help: "station-moved-far: the farthest move in one version, in km.") var moveLimit: Double = 1
    @Flag(help: "Run SQLite's full integrity check of the master file instead of the rules (reads every page).") var integrity = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if !(connectionLimit > 0) { throw ValidationError("--connection-limit must be a positive number of km (e.g. 50).") }
        if !(moveLimit > 0) { throw ValidationError("--move-limit must be a positive number of km (e.g. 1).") }
        for name in rule where CheckRule(rawValue: name) == nil {
            let nearest = NearestName.nearest(to: name, among: CheckRule.allCases.map(\.rawValue))
            throw ValidationError("unknown rule '\(name)'" + (nearest.map { " (did you mean '\($0)'?)" } ?? "")
                + "; expected one of: \(CheckRule.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
    }

    /// Findings stream to a spool as the rules find them, and are printed after the counts that
    /// head the output: a million findings take the memory of one.
    func run() throws {
        let database = try global.openDatabase()
        if integrity {
            if let problems = try database.integrityProblems() {
                throw MasterDatabaseError.damaged(global.databasePath, reason: problems)
            }
            return print("\(global.databasePath): SQLite's integrity check found no damage.")
        }
        let rules = rule.isEmpty ? Set(CheckRule.allCases) : Set(rule.compactMap(CheckRule.init(rawValue:)))
        let limits = CheckLimits(connectionKilometres: connectionLimit, moveKilometres: moveLimit)
        let spool = try SpoolFile(purpose: "for the findings")
        let outcome: CheckOutcome
        if output.json {
            var findings = Console.JSONArrayStream<CheckFinding>(spool, depth: 1)
            outcome = try Checker(database).check(version: version, limits: limits, rules: rules) { try findings.append($0) }
            try findings.finish()
            try Console.printJSON(CheckJSON(outcome, waivers: try Checker(database).waivers(checked: outcome)), spooledFindings: spool)
        } else {
            outcome = try Checker(database).check(version: version, limits: limits, rules: rules) { finding in
                try spool.write(FindingsPrinter.line(finding).escapingControlCharacters + "\n")
            }
            Pager.startIfWanted(disabled: global.noPager)
            let output = FileSink.standardOutput()
            try output.write(FindingsPrinter.summary(outcome.tally) + "\n")
            try spool.copy(to: output)
            let waivers = try Checker(database).waivers(checked: outcome)
            if !waivers.isEmpty {
                try output.write("\nWaivers (\(waivers.count)):\n")
                for waiver in waivers {
                    try output.write(("  \(waiver.rule) \(waiver.table) \(waiver.key): \(waiver.reason)"
                        + " (\(waiver.author ?? "-"), \(waiver.waivedAt.prefix(10)))"
                        + (waiver.stillFound == false ? "; stale: no finding matches it (remove it with station-admin unwaive \(waiver.rule) \(waiver.table) \(waiver.key))" : ""))
                        .escapingControlCharacters + "\n")
                }
            }
            try output.finish()
            if outcome.tally.count(.error, waived: false) + outcome.tally.count(.warning, waived: false) > 0 {
                Console.error("Accept a finding that is right: station-admin waive RULE TABLE KEY --reason \"why\"")
            }
        }
        if outcome.blocking > 0 { throw ExitCode.failure }
    }
}

struct WaiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waive",
        abstract: "Accept one finding of `check` (one rule, one row) with a reason; kept in the master, never published.",
        discussion: """
            Example: station-admin waive closed-without-date stations 9991244 --reason "the operator gave no closing date"

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The rule id, as `check` prints it.") var rule: String
    @Argument(help: "The table.") var table: String
    @Argument(help: "The key, as `check` prints it (line_cd/station_cd1/station_cd2 for connections).") var key: String
    @Option(help: "Why the finding is right.") var reason: String
    @Flag(help: "Waive a finding that is not there yet (a row a plan or an import is about to bring).") var ahead = false
    @OptionGroup var who: AuthorOption

    func run() throws {
        try Checker(global.openDatabase(author: who)).waive(rule: rule, table: table, key: key, reason: reason, ahead: ahead)
        Console.line("Waived \(rule) on \(table) \(key).")
    }
}

struct UnwaiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unwaive",
        abstract: "Remove a waiver: `check` reports the finding again.",
        discussion: """
            Example: station-admin unwaive connection-too-long connections 11118/1111802/1111806

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The rule id.") var rule: String
    @Argument(help: "The table.") var table: String
    @Argument(help: "The key.") var key: String

    func run() throws {
        try Checker(global.openDatabase()).unwaive(rule: rule, table: table, key: key)
        Console.line("Removed the waiver of \(rule) on \(table) \(key).")
    }
}

/// `check --json`: the counts the text's summary line gives, the findings (spooled, and printed
/// in their place: `Console.printJSON(_:spooledFindings:)`), and every waiver with whether its
/// rule still finds its row (a stale waiver has `still_found` false).
struct CheckJSON: Encodable {
    struct Counts: Encodable {
        let errors, warnings, waivedErrors, waivedWarnings, staleWaivers: Int
    }
    let version: Int
    let counts: Counts
    let findings: [CheckFinding] = []
    let waivers: [Waiver]

    init(_ outcome: CheckOutcome, waivers: [Waiver]) {
        let tally = outcome.tally
        version = tally.version
        counts = Counts(
            errors: tally.count(.error, waived: false), warnings: tally.count(.warning, waived: false),
            waivedErrors: tally.count(.error, waived: true), waivedWarnings: tally.count(.warning, waived: true),
            staleWaivers: waivers.filter { $0.stillFound == false }.count)
        self.waivers = waivers
    }
}

/// How findings read on a terminal.
enum FindingsPrinter {
    static func line(_ finding: CheckFinding) -> String {
        (finding.severity == .error ? "error: " : "warning: ") + finding.line + (finding.waived ? " [waived]" : "")
    }

    /// `Version 2: 1 error, 3 warnings, 1 waived.`
    static func summary(_ tally: CheckTally) -> String {
        let errors = tally.count(.error, waived: false), warnings = tally.count(.warning, waived: false)
        let waived = tally.count(.error, waived: true) + tally.count(.warning, waived: true)
        return "Version \(tally.version): \(plural(errors, "error")), \(plural(warnings, "warning"))"
            + (waived > 0 ? ", \(waived) waived" : "") + "."
    }
}
