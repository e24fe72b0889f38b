import Crypto
import Foundation
import Testing

/// CHANGELOG.md tells a script's author every change of the JSON contract: a schema of
/// docs/schemas changes only with an entry naming it.
@Suite struct ChangelogTests {
    /// Keep a Changelog's form: `[Unreleased]` first, then `## [X.Y.Z] - YYYY-MM-DD` newest first,
    /// each with its sections under the six standard headings, each heading once and in order.
    @Test func theChangelogKeepsKeepAChangelogsForm() throws {
        let changelog = try String(contentsOf: Fixtures.repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let headings = changelog.components(separatedBy: "\n").filter { $0.hasPrefix("## ") || $0.hasPrefix("### ") }
        #expect(headings.first == "## [Unreleased]")
        let standard = ["### Added", "### Changed", "### Deprecated", "### Removed", "### Fixed", "### Security"]
        let release = try NSRegularExpression(pattern: #"^## \[(\d+)\.(\d+)\.(\d+)\] - \d{4}-\d{2}-\d{2}$"#)
        var versions: [[Int]] = [], sections: [String] = []
        for heading in headings.dropFirst() {
            if heading.hasPrefix("### ") {
                let index = try #require(standard.firstIndex(of: heading), "not a Keep a Changelog heading: \(heading)")
                #expect(sections.last.flatMap { standard.firstIndex(of: $0) }.map { $0 < index } ?? true, "\(heading) out of order under \(versions.last ?? [])")
                sections.append(heading)
                continue
            }
            let match = try #require(release.firstMatch(in: heading, range: NSRange(heading.startIndex..., in: heading)), "not a release heading: \(heading)")
            versions.append((1...3).map { Int(heading[Range(match.range(at: $0), in: heading)!])! })
            sections = []
        }
        #expect(versions.count >= 10)
        #expect(zip(versions, versions.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) == false && $0 != $1 }, "releases newest first")
    }

    /// Each schema's SHA-256 is recorded with the release whose section names it
    /// (Fixtures/schema-changes.txt); a schema edited without a new line there fails, and so does
    /// a line whose release does not name the schema's file.
    @Test func everySchemaChangeHasAChangelogEntry() throws {
        let repository = Fixtures.repository
        let changelog = try String(contentsOf: repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        var sections: [String: String] = [:], current: String?
        for line in changelog.components(separatedBy: "\n") {
            if line.hasPrefix("## [") { current = String(line.dropFirst(4).prefix { $0 != "]" }) }
            if let current { sections[current, default: ""] += line + "\n" }
        }
        let recorded = try String(contentsOf: Fixtures.root.appendingPathComponent("schema-changes.txt"), encoding: .utf8)
            .components(separatedBy: "\n").filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .map { $0.split(separator: " ").map(String.init) }
        let folder = repository.appendingPathComponent("docs/schemas")
        let schemas = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".schema.json") }.sorted()
        #expect(recorded.map { $0[0] }.sorted() == schemas, "a schema without its line in Fixtures/schema-changes.txt, or a line without its schema")
        for line in recorded {
            let (name, hash, release) = (line[0], line[1], line[2])
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else { continue }
            let now = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            #expect(now == hash, "docs/schemas/\(name) changed: name it in a CHANGELOG.md entry, then record \(now) with that release")
            #expect(sections[release]?.contains(name) == true, "CHANGELOG.md's \(release) does not name \(name)")
        }
    }
}
