import Foundation
import GRDB
import StationCheck
import StationImport
import StationReview
import StationSchema
import StationSynth
import Testing

/// A version with thousands of findings: the import counts them per rule and words the first
/// twenty of each, in the order `check` lists them, and `check` streams every one of them.
@Suite struct FindingsStreamTests {
    let scratch = Scratch()

    /// A broken export (each station anywhere in Japan): about one finding per connection.
    private func scatteredMaster() throws -> (MasterDatabase, String) {
        try SnapshotSynthesizer.generate(stations: 2_000, seed: 5, scattered: true, into: scratch.path("v1"))
        try SnapshotSynthesizer.next(of: scratch.path("v1"), changePercent: 10, seed: 6, into: scratch.path("v2"))
        return (try MasterDatabase.create(at: scratch.path("m.sqlite")), scratch.path("m.sqlite"))
    }

    @Test func anImportCountsEveryFindingAndWordsTheFirstOfEachRule() throws {
        let (database, _) = try scatteredMaster()
        let first = try Importer(database).importSnapshot([scratch.path("v1")])
        let all = try Checker(database).check().findings
        let tooLong = all.filter { $0.rule == .connectionTooLong }
        #expect(tooLong.count > 1_000, "\(tooLong.count)")
        #expect(first.findingCounts["connection-too-long"] == tooLong.count)
        #expect(first.totalFindings == all.count)
        #expect(first.findings == IntroducedFindings(all).first)
        #expect(first.findings.filter { $0.rule == .connectionTooLong } == Array(tooLong.prefix(IntroducedFindings.shownPerRule)))
        #expect(try database.read { db in try RecordedFindings.identities(db, version: 1) } == Set(all.map(\.identity)))

        // The next version checks only the rows it changed, and introduces what the first had not.
        let second = try Importer(database).importSnapshot([scratch.path("v2")])
        let before = Set(all.map(\.identity))
        let now = try Checker(database).check().findings
        let introduced = IntroducedFindings(now.filter { !before.contains($0.identity) })
        #expect(CheckRule.allCases.contains(where: introduced.isTruncated), "\(introduced.counts)")
        #expect(second.findingCounts == Dictionary(uniqueKeysWithValues: CheckRule.allCases.map { ($0.rawValue, introduced.counts[$0] ?? 0) }))
        #expect(second.findings == introduced.first)
        #expect(try database.read { db in try RecordedFindings.identities(db, version: 2) } == Set(now.map(\.identity)))

        // The review of the newest version tells introduced from inherited by the set kept for
        // the version before, as a rebuild of that version does.
        let reviewed = try Reviewer(database).review()
        #expect(reviewed.introducedFindings.counts == introduced.counts && reviewed.introducedFindings.total == introduced.total)
        #expect(reviewed.inheritedFindings.total == now.count - introduced.total)
        try database.queue.write { try $0.execute(sql: "DELETE FROM recorded_findings_before_version") }
        let rebuilt = try Reviewer(database).review()
        #expect(rebuilt.introducedFindings.counts == reviewed.introducedFindings.counts)
        #expect(rebuilt.introducedFindings.listed == reviewed.introducedFindings.listed)
        #expect(rebuilt.inheritedFindings.listed == reviewed.inheritedFindings.listed)
    }

    @Test func theCommandLineNamesTheRestAndCheckStreamsThemAll() throws {
        let (database, path) = try scatteredMaster()
        let imported = try CommandRunner.run(["import", "--db", path, scratch.path("v1")])
        #expect(imported.status == 0, "\(imported.stderr)")
        let all = try Checker(database).check().findings
        let tooLong = all.filter { $0.rule == .connectionTooLong }.count
        #expect(imported.stdout.contains("Findings this version introduces: \(all.count) findings\n"), "\(imported.stdout)")
        #expect(imported.stdout.contains("  connection-too-long (warning): \(tooLong)\n"))
        // Beside the counts per rule, three examples of each.
        #expect(imported.stdout.contains("  … and \(tooLong - 3) more connection-too-long (station-admin check --version 1 --rule connection-too-long)\n"))
        #expect(imported.stdout.components(separatedBy: ": connection-too-long: ").count - 1 == 3)

        let json = try CommandRunner.run(["check", "--db", path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(findings.map { "\($0["rule"]!) \($0["key"]!) \($0["message"]!)" } == all.map { "\($0.rule.rawValue) \($0.key) \($0.message)" })
        #expect((object["counts"] as? [String: Int])?["warnings"] == all.filter { $0.severity == .warning }.count)

        let text = try CommandRunner.run(["check", "--db", path, "--rule", "connection-too-long", "--no-pager"])
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.first == "Version 1: 0 errors, \(tooLong) warnings.")
        #expect(lines.dropFirst().count == tooLong && lines.dropFirst().allSatisfy { $0.hasPrefix("warning: connections ") })
    }
}
