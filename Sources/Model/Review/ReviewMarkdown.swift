import Foundation
import StationSchema
import StationSupport

/// The summary, the changes and the findings of a version as Markdown: release notes, or a
/// merge request comment.
public enum ReviewMarkdown {
    /// The review as Markdown.
    public static func markdown(_ report: ReviewReport) -> String {
        var lines = summarySection(report)
        if !report.merge.isEmpty {
            lines += mergeSection(report.merge)
            lines.append("")
        }
        lines += changesSection(report)
        lines.append("")
        lines += findingsSection(report)
        if !report.suggestions.isEmpty {
            lines += ["", "## Split suggestions", ""]
            for suggestion in report.suggestions {
                lines.append("- \(String(format: "%.2f", suggestion.confidence)) \(suggestion.old) \(escape(suggestion.oldName)) → "
                    + "\(suggestion.new) \(escape(suggestion.newName)): \(escape(suggestion.reason)) `\(suggestion.planLine)`")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static let kinds: [Update.Kind] = [.insert, .update, .delete, .restore, .duplicate]

    /// The mark, the title, the line of totals and the table of counts by kind.
    private static func summarySection(_ report: ReviewReport) -> [String] {
        let summary = report.summary
        var lines: [String] = [ReviewFile.markdownMark]
        lines.append("# Version \(summary.version)" + (summary.memo.map { ": " + escape($0) } ?? ""))
        lines.append("")
        lines.append("\(escape(summary.date)) · \(escape(summary.author ?? "unknown author")) · \(summary.changes) changes · "
            + "\(report.introducedFindings.total) new findings · \(report.suggestions.count) split suggestions")
        lines.append("")
        lines.append("| table | " + kinds.map(\.rawValue).joined(separator: " | ") + " |")
        lines.append("|---|" + String(repeating: "---:|", count: kinds.count))
        for table in MasterTable.all.map(\.name) where summary.counts[table] != nil {
            lines.append("| \(table) | " + kinds.map { String(summary.counts[table]?[$0.rawValue] ?? 0) }.joined(separator: " | ") + " |")
        }
        lines.append("")
        return lines
    }

    /// The changes listed, table by table, with the command that lists those left out.
    private static func changesSection(_ report: ReviewReport) -> [String] {
        var lines = ["## Changes"]
        for table in MasterTable.all.map(\.name) {
            let changes = report.changes.filter { $0.table == table }
            guard !changes.isEmpty else { continue }
            let total = report.overview.counts[table]?.values.reduce(0, +) ?? changes.count
            lines += ["", "### \(table) (\(total))", ""]
            for change in changes {
                lines.append("- \(change.kind.rawValue) `\(change.key)` \(escape(change.title))" + (change.words.isEmpty ? "" : ": " + escape(change.words)))
            }
            for kind in kinds where report.overview.unlisted(table: table, kind: kind) > 0 {
                lines.append("- … and \(report.overview.unlisted(table: table, kind: kind)) more \(kind.rawValue): "
                    + "`\(CommandHint("log", "--version", "\(report.summary.version)", "--table", table, "--type", kind.rawValue))`")
            }
        }
        return lines
    }

    /// The findings the version introduced (the first of each rule), and how many it inherited.
    private static func findingsSection(_ report: ReviewReport) -> [String] {
        let version = report.summary.version
        var lines = ["## Findings introduced by version \(version) (\(report.introducedFindings.total))", ""]
        if report.introducedFindings.isEmpty { lines.append("None.") }
        let shown = report.introducedFindings.listed
        if shown.count < report.introducedFindings.total {
            lines.append("The first \(report.limits.findingsPerRule) of each rule; `\(CommandHint("check", "--version", "\(version)", "--rule", "RULE"))` lists the rest.")
            lines.append("")
        }
        for finding in shown {
            lines.append("- **\(finding.severity.rawValue)** `\(finding.table) \(finding.key)` `\(finding.rule.rawValue)`: "
                + escape(finding.message) + (finding.waived ? " *(waived)*" : ""))
        }
        lines.append("")
        lines.append("\(report.inheritedFindings.total) findings were already there before (`\(CommandHint("check", "--version", "\(version)"))`).")
        return lines
    }

    /// The version's merge decisions: the revert it is, conflicts decided, adoptions, kept values.
    private static func mergeSection(_ merge: ReviewMerge) -> [String] {
        var lines = ["## Merge decisions"]
        if let reverted = merge.reverts { lines += ["", "Reverts version \(reverted)."] }
        func list(_ title: String, _ notes: [MergeNote]) {
            guard !notes.isEmpty else { return }
            lines += ["", "### \(title)", ""] + notes.map { "- " + escape($0.description) }
        }
        list("Conflicts decided (\(merge.decided.count))", merge.decided)
        list("Provisional rows adopted for upstream's (\(merge.adopted.count))", merge.adopted)
        list("Curated values kept (\(merge.keptCount))", merge.kept)
        if merge.keptCount > merge.kept.count {
            lines.append("- … and \(merge.keptCount - merge.kept.count) more: `\(CommandHint("log", "--key", "KEY"))` shows a row's notes")
        }
        return lines
    }

    /// Backslash before the characters Markdown would read as markup; control characters shown escaped.
    package static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text.escapingControlCharacters {
            if "\\`*_[]<>|#".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
