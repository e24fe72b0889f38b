import Foundation
import StationImport
import StationSchema
import Testing

/// The three-way import and `revert` as a curator types them: what they print, their exit status,
/// and the resolution file's round trip through `diff --conflicts` and `import --resolve`.
@Suite struct MergeCommandTests {
    let scratch = Scratch()

    @Test func aConflictIsListedDecidedFromTheSkeletonAndLogged() throws {
        let db = scratch.path("m.sqlite")
        _ = try MasterDatabase.create(at: db)
        #expect(try CommandRunner.run(["import", "--db", db, Fixtures.base.path, "--snapshot-date", "2024-01-01"]).status == 0)
        #expect(try CommandRunner.run(["edit", "--db", db, "stations", "1120102", "station_name=陸奥市川駅", "--memo", "the sign says so"]).status == 0)
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "むつ市川")

        let refused = try CommandRunner.run(["import", "--db", db, snapshot.path, "--snapshot-date", "2024-02-01"])
        #expect(refused.status == 1)
        #expect(refused.stdout == "")
        #expect(refused.stderr.contains("  stations 1120102 station_name: base 陸奥市川; ours 陸奥市川駅 (v2, \"the sign says so\"); theirs むつ市川\n"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Nothing was written. Decide all with --prefer theirs|ours, or each in a file"))

        let diff = try CommandRunner.run(["diff", "--db", db, snapshot.path, "--snapshot-date", "2024-02-01"])
        #expect(diff.status == 0)
        #expect(diff.stdout.contains("Conflicts: 1 column changed by both upstream and curators:\n  stations 1120102 station_name: base 陸奥市川; ours 陸奥市川駅 (v2, \"the sign says so\"); theirs むつ市川 [undecided]\n"), "\(diff.stdout)")

        let skeleton = try CommandRunner.run(["diff", "--db", db, snapshot.path, "--conflicts", "--snapshot-date", "2024-02-01"])
        #expect(skeleton.status == 0)
        let lines = skeleton.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].hasPrefix("# "))
        #expect(lines[1] == #"{"base":"陸奥市川","column":"station_name","key":"1120102","ours":"陸奥市川駅","ours_memo":"the sign says so","ours_version":2,"table":"stations","take":null,"theirs":"むつ市川"}"#)
        let decisions = scratch.path("decisions.jsonl")
        try skeleton.stdout.replacingOccurrences(of: "\"take\":null", with: "\"take\":\"ours\"").write(toFile: decisions, atomically: true, encoding: .utf8)
        let imported = try CommandRunner.run(["import", "--db", db, snapshot.path, "--resolve", decisions, "--snapshot-date", "2024-02-01"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.hasPrefix("No changes: the database stays at version 2."), "\(imported.stdout)")
        // No version, but upstream's file is kept as the base and the decision noted: the same
        // snapshot again asks nothing.
        let log = try CommandRunner.run(["log", "--db", db, "--key", "1120102"])
        #expect(log.stdout.hasSuffix("  v2  merge (ekidata 2024-02-01): stations 1120102 station_name: conflict decided for ours, 陸奥市川駅 from v2 (base 陸奥市川, theirs むつ市川)\n"), "\(log.stdout)")
        let again = try CommandRunner.run(["import", "--db", db, snapshot.path, "--snapshot-date", "2024-02-01"])
        #expect(again.status == 0 && again.stdout.hasPrefix("No changes"), "\(again.stderr)")

        // Two more of the curator's values against the next snapshot: one kept, one decided.
        try snapshot.replace("station.csv", "むつ市川", with: "陸奥市川")
        let next = try CommandRunner.run(["import", "--db", db, snapshot.path, "--snapshot-date", "2024-03-01", "--prefer", "theirs"])
        #expect(next.status == 0, "\(next.stderr)")
        let story = try CommandRunner.run(["log", "--db", db, "--key", "1120102"]).stdout
        #expect(story.contains("  v3  merge (ekidata 2024-03-01): stations 1120102 station_name: conflict decided for theirs, 陸奥市川 (base むつ市川, ours 陸奥市川駅 from v2)\n"), "\(story)")
        // The JSON carries the notes the text shows, where the text shows them.
        let storyJSON = try CommandRunner.run(["log", "--db", db, "--key", "1120102", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(storyJSON.stdout.utf8)) as? [[String: Any]])
        let notes = items.compactMap { $0["merge_note"] as? [String: Any] }
        #expect(notes.map { "v\($0["version"]!) \($0["column"]!) \($0["outcome"]!)" } == ["v2 station_name ours", "v3 station_name theirs"], "\(storyJSON.stdout)")
        let file = scratch.path("story.json")
        try storyJSON.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let valid = try CommandRunner.run([Fixtures.repository.appendingPathComponent("docs/schemas/log.schema.json").path, file],
                                          program: Fixtures.repository.appendingPathComponent("scripts/validate-json"))
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")

        // Older than the last snapshot: refused, exit 1, nothing written.
        let older = try CommandRunner.run(["import", "--db", db, snapshot.path, "--snapshot-date", "2023-12-31"])
        #expect(older.status == 1)
        #expect(older.stderr.contains("pref.csv: the snapshot is of 2023-12-31, older than the prefectures snapshot of 2024-03-01 imported in version 3"), "\(older.stderr)")
        let usage = try CommandRunner.run(["diff", "--db", db, snapshot.path, "--conflicts", "--json"])
        #expect(usage.status == 2)
    }

    @Test func revertPrintsWhatItPutsBack() throws {
        let database = try scratch.baseDatabase()
        #expect(try CommandRunner.run(["edit", "--db", database.path, "stations", "1120102", "weight=3"]).status == 0)
        let dry = try CommandRunner.run(["revert", "--db", database.path, "2", "--dry-run"])
        #expect(dry.status == 0)
        #expect(dry.stdout.contains("Dry run: would commit version 3: 1 change") && dry.stdout.contains("UPDATE stations 1120102 陸奥市川: weight 3 → 13"), "\(dry.stdout)")
        let reverted = try CommandRunner.run(["revert", "--db", database.path, "2", "--memo", "not a major station"])
        #expect(reverted.status == 0 && reverted.stdout.hasPrefix("Committed version 3: 1 change"), "\(reverted.stdout)")
        let missing = try CommandRunner.run(["revert", "--db", database.path, "7"])
        #expect(missing.status == 1 && missing.stderr.contains("data version 7 does not exist (expected 1 to 3; `station-admin versions` lists them)"), "\(missing.stderr)")
    }
}
