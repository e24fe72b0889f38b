import Foundation
import StationCurate
import StationImport
import StationSchema
import StationVersion
import Testing

/// `import --json` and `revert --json` refused for decisions nobody made print the conflicts (and
/// provisional rows) as JSON on stdout, exit 1, and write nothing (docs/schemas/undecided.schema.json).
@Suite struct UndecidedJSONTests {
    let scratch = Scratch()

    func validate(_ json: String) throws -> CommandRunner.Result {
        let file = scratch.path("undecided-\(UUID().uuidString).json")
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        return try CommandRunner.run([Fixtures.repository.appendingPathComponent("docs/schemas/undecided.schema.json").path, file],
                                     program: Fixtures.repository.appendingPathComponent("scripts/validate-json"))
    }

    @Test func aRefusedImportAndARefusedRevertPrintTheirConflictsAsJSON() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2019])
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1110602"], values: ["station_name": "東滝川駅"]))])
        let curated = try database.dataVersion()
        let snapshot = try UpstreamSnapshots.from2021(into: scratch.path("2025-04-01"), date: "20250401") { file, line in
            guard file.hasPrefix("station"), line.hasPrefix("1110602,") else { return line }
            var fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            fields[2] = "ひがしたきかわ"
            return fields.joined(separator: ",")
        }
        let before = try database.settledSHA256()
        let imported = try CommandRunner.run(["import", "--db", database.path, snapshot, "--json"])
        #expect(imported.status == 1 && imported.stderr.contains("needs decisions") || imported.stderr.contains("conflict"), "\(imported.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])
        let conflicts = try #require(object["conflicts"] as? [[String: Any]])
        #expect(object["refused"] as? String == "undecided" && object["version"] is NSNull)
        #expect(conflicts.map { "\($0["key"]!) \($0["column"]!) \($0["theirs"]!)" } == ["1110602 station_name ひがしたきかわ"])
        let valid = try validate(imported.stdout)
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
        #expect(try database.settledSHA256() == before)

        // A revert of the curated edit, after a later edit of the same column.
        let edited = try CommandRunner.run(["edit", "--db", database.path, "stations", "1110602", "station_name=東滝川(仮)"])
        #expect(edited.status == 0, "\(edited.stderr)")
        let reverted = try CommandRunner.run(["revert", String(curated), "--db", database.path, "--json"])
        #expect(reverted.status == 1, "\(reverted.stdout.prefix(600)) \(reverted.stderr)")
        let revertObject = try #require(try JSONSerialization.jsonObject(with: Data(reverted.stdout.utf8)) as? [String: Any])
        #expect(revertObject["version"] as? Int == curated && (revertObject["conflicts"] as? [Any])?.count == 1)
        #expect(try validate(reverted.stdout).status == 0)
        // The revert's own resolution file: written by revert --conflicts, read by --resolve.
        let skeleton = try CommandRunner.run(["revert", String(curated), "--db", database.path, "--conflicts"])
        let lines = skeleton.stdout.split(separator: "\n").map(String.init)
        #expect(skeleton.status == 0 && lines.count == 2 && lines[0].hasPrefix("# ") && lines[1].contains("\"take\":null"), "\(skeleton.stdout)")
        let resolution = scratch.path("revert.jsonl")
        try skeleton.stdout.replacingOccurrences(of: "\"take\":null", with: "\"take\":\"ours\"").write(toFile: resolution, atomically: true, encoding: .utf8)
        let decided = try CommandRunner.run(["revert", String(curated), "--db", database.path, "--resolve", resolution])
        #expect(decided.status == 0 && decided.stdout.hasPrefix("No changes") || decided.stdout.hasPrefix("Committed"), "\(decided.stdout)\(decided.stderr)")
    }
}
