import ArgumentParser
import Foundation
import StationRelease
import StationReview

struct ReviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review",
        abstract: "Write the review page of a version: summary, a map of the changes, the changes in words, findings, suggestions and pins.",
        discussion: """
            One self-contained HTML file (nothing fetched; it opens from disk), by default reviews/review-V.html;
            --markdown writes the summary, the changes and the findings as Markdown instead (release notes).
            Example: station-admin review --version 3 --output review-3.html

            \(ExitStatus.readOnly)
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The data version (default: the newest).") var version: Int?
    @Option(help: ArgumentHelp("Where to write it (default: reviews/review-V.html, or .md with --markdown; - for stdout).", valueName: "file"))
    var output: String?
    @Flag(help: "Write Markdown instead of HTML.") var markdown = false

    func run() throws {
        let report = try Reviewer(global.openDatabase()).review(version: version)
        let text = markdown ? ReviewMarkdown.markdown(report) : ReviewPage.html(report)
        // Not in the release folder: it holds only what phones download.
        let path = output ?? "reviews/review-\(report.summary.version).\(markdown ? "md" : "html")"
        if path == "-" { return print(text, terminator: "") }
        try ReviewFile.write(text, to: path)
        Console.error("Wrote \(path) (\(report.overview.total) changes, \(report.introducedFindings.total) new findings, "
            + "\(report.suggestions.count) suggestions).")
    }
}
