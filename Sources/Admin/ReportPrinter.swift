import Model

/// Prints a `ChangeReport` as a table of counts, then the changes in words.
enum ReportPrinter {
    static let kinds: [Update.Kind] = [.insert, .update, .delete, .restore, .duplicate]

    /// - Parameters:
    ///   - shownChanges: the changes to describe, when a filter chose them from `report.changes`.
    ///   - matchingChanges: how many changes the filter matched (`shownChanges` may be cut).
    static func print(_ report: ChangeReport, heading: String, shownChanges: [DescribedChange]? = nil, matchingChanges: Int? = nil) {
        Swift.print("\(heading): \(plural(report.totalChanges, "change"))")
        let tables = report.counts.keys.sorted { order($0) < order($1) }
        var table = TextTable(header: ["table"] + kinds.map(\.rawValue))
        for name in tables { table.append([name] + kinds.map { String(report.counts[name]?[$0.rawValue] ?? 0) }) }
        table.print()
        for warning in report.warnings { Console.error("warning: \(warning.escapingControlCharacters)") }
        let shown = shownChanges ?? report.changes
        if !shown.isEmpty {
            Swift.print("")
            for change in shown { Console.line("  " + change.summary) }
        }
        if let matchingChanges {
            if shown.count < matchingChanges { Swift.print("  … and \(matchingChanges - shown.count) more (--show N describes more)") }
        } else if shown.count < report.totalChanges {
            let more = report.totalChanges - shown.count
            Swift.print(report.committed
                ? "  … and \(more) more (station-admin log --version \(report.version))"
                : "  … and \(more) more (nothing was committed: --show N describes more, --json lists them all)")
        }
        if !report.suggestions.isEmpty {
            Swift.print("")
            Swift.print("Likely splits or handovers (put the ones you confirm in a plan and apply it):")
            print(report.suggestions, indent: "  ")
        }
        if !report.findings.isEmpty {
            let shown = 10
            Swift.print("")
            Swift.print("Findings this version \(report.committed ? "introduces" : "would introduce") (station-admin check):")
            for finding in report.findings.prefix(shown) { Console.line("  " + FindingsPrinter.line(finding)) }
            if report.findings.count > shown {
                Swift.print("  … and \(report.findings.count - shown) more"
                    + (report.committed ? " (station-admin check --version \(report.version))" : " (--json lists them all)"))
            }
        }
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
