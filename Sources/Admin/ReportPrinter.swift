import StationCheck
import StationCurate
import StationLog
import StationRelease
import StationSchema
import StationVersion

/// Prints a `ChangeReport` as a table of counts, then the changes in words, then what the
/// version suggests and finds.
enum ReportPrinter {
    static let kinds: [Update.Kind] = [.insert, .update, .delete, .restore, .duplicate]

    /// The counts, the changes `report.changes` describes, then what the version suggests and finds.
    static func print(_ report: ChangeReport, heading: String, revertOf reverted: Int? = nil) {
        printCounts(report, heading: heading)
        printMerge(report, revertOf: reverted)
        for (index, change) in report.changes.enumerated() { printChange(change, first: index == 0) }
        if report.changes.count < report.totalChanges {
            let more = report.totalChanges - report.changes.count
            Swift.print(report.committed
                ? "  … and \(more) more (station-admin log --version \(report.version))"
                : "  … and \(more) more (nothing was committed: --show N describes more, --json lists them all)")
        }
        printSuggestionsAndFindings(report)
    }

    /// The heading, the table of counts, and the warnings.
    static func printCounts(_ report: ChangeReport, heading: String) {
        Swift.print("\(heading): \(plural(report.totalChanges, "change"))")
        let tables = report.counts.keys.sorted { order($0) < order($1) }
        var table = TextTable(header: ["table"] + kinds.map(\.rawValue))
        for name in tables { table.append([name] + kinds.map { String(report.counts[name]?[$0.rawValue] ?? 0) }) }
        table.print()
        for warning in report.warnings { Console.error("warning: \(warning.escapingControlCharacters)") }
    }

    /// What the three-way merge found: provisional rows first, one group per event (the version
    /// that added them), then conflicts, then the curated values it kept.
    static func printMerge(_ report: ChangeReport, shown: Int = 10, revertOf reverted: Int? = nil) {
        if !report.adoptions.isEmpty {
            Swift.print("")
            Swift.print("Provisional rows upstream now has under its own codes:")
            var event: Int?? = .none
            for adoption in report.adoptions {
                if event != .some(adoption.version) {
                    event = .some(adoption.version)
                    Console.line("  " + (adoption.version.map { "version \($0)" } ?? "no version") + (adoption.memo.map { " (\($0))" } ?? "") + ":")
                }
                let decision = adoption.adopted.map { $0 ? "adopted" : "both kept" } ?? "undecided"
                Console.line("    \(adoption.description): \(adoption.reason) [\(decision)]")
            }
            let connections = report.mergeNotes.filter { $0.outcome == .adopted && $0.table == MasterTable.connections.name }
            if !connections.isEmpty {
                Swift.print("  Connections the adopted events added where upstream now describes the line otherwise:")
                for note in connections.prefix(shown) { Console.line("    " + note.description) }
                if connections.count > shown { Swift.print("    … and \(connections.count - shown) more (--json lists them all)") }
            }
            let undecided = report.adoptions.filter { $0.adopted == nil }.count
            if undecided > 0 && !report.committed {
                // An undecided pair keeps both rows, so the changes counted above leave its adoption out.
                Swift.print("  The changes counted above leave out what adopting \(undecided == 1 ? "this pair" : "these \(undecided) pairs") would change "
                    + "(closing the provisional rows, the splits to upstream's codes): preview it with --adopt, or decide each with --resolve FILE.")
            }
        }
        if !report.conflicts.isEmpty {
            Swift.print("")
            if let reverted {
                Swift.print("Conflicts: \(plural(report.conflicts.count, "column")) a later version changed again, or upstream now holds as version \(reverted) wrote it "
                    + "(theirs: the value before version \(reverted)):")
            } else {
                Swift.print("Conflicts: \(plural(report.conflicts.count, "column")) changed by both upstream and curators:")
            }
            for conflict in report.conflicts.prefix(shown) {
                Console.line("  \(conflict.description) [\(conflict.decision.map { "decided: \($0.rawValue)" } ?? "undecided")]")
            }
            if report.conflicts.count > shown {
                Swift.print("  … and \(report.conflicts.count - shown) more (\(reverted.map { "revert \($0) --conflicts" } ?? "diff --conflicts") lists them all)")
            }
        }
        let kept = report.mergeNotes.filter { $0.outcome == .kept }
        if !kept.isEmpty {
            Swift.print("")
            Swift.print("Curated values kept (upstream did not change them since its last file): \(kept.count)")
            for note in kept.prefix(shown) { Console.line("  " + note.description) }
            if kept.count > shown { Swift.print("  … and \(kept.count - shown) more (--json lists them all)") }
        }
    }

    /// One change in words, after a blank line when it is the first.
    static func printChange(_ change: DescribedChange, first: Bool) {
        if first { Swift.print("") }
        Console.line("  " + change.summary)
    }

    static func printSuggestionsAndFindings(_ report: ChangeReport) {
        if !report.suggestions.isEmpty {
            Swift.print("")
            Swift.print("Likely splits or handovers (put the ones you confirm in a plan and apply it):")
            print(report.suggestions, indent: "  ")
        }
        guard report.totalFindings > 0 else { return }
        Swift.print("")
        Swift.print("Findings this version \(report.committed ? "introduces" : "would introduce"): \(plural(report.totalFindings, "finding"))")
        let rules = CheckRule.allCases.filter { (report.findingCounts[$0.rawValue] ?? 0) > 0 }
        if rules.count > 1 {
            for rule in rules { Swift.print("  \(rule.rawValue) (\(rule.severity.rawValue)): \(report.findingCounts[rule.rawValue]!)") }
            Swift.print("")
        }
        // Beside the counts per rule, a few examples of each say what they are; `check` lists them all.
        let examples = rules.count > 1 ? 3 : Int.max
        for rule in rules {
            let shown = report.findings.filter { $0.rule == rule }.prefix(examples)
            for finding in shown { Console.line("  " + FindingsPrinter.line(finding)) }
            let more = report.findingCounts[rule.rawValue]! - shown.count
            if more > 0 {
                Swift.print("  … and \(more) more \(rule.rawValue) ("
                    + (report.committed ? "station-admin check --version \(report.version) --rule \(rule.rawValue)" : "commit the version, then station-admin check --rule \(rule.rawValue)")
                    + ")")
            }
        }
    }

    /// The last line of a command that wrote a version: what to do next, and whether a release
    /// would be refused today.
    static func printNextStep(_ database: MasterDatabase) throws {
        Swift.print("")
        Swift.print(try Checker(database).releaseReadiness().nextStep)
    }

    /// Each suggestion in words, then its ready plan line.
    static func print(_ suggestions: [SplitSuggestion], indent: String = "") {
        for suggestion in suggestions {
            Console.line(indent + String(format: "%.2f  ", suggestion.confidence)
                + "\(suggestion.old) \(suggestion.oldName) → \(suggestion.new) \(suggestion.newName): \(suggestion.reason)")
            Console.line(indent + "      \(suggestion.planLine)")
        }
    }

    private static func order(_ table: String) -> Int {
        MasterTable.all.firstIndex { $0.name == table } ?? Int.max
    }
}
