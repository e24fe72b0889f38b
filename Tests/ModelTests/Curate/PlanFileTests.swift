import Foundation
import StationCheck
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

@Suite struct PlanFileTests {
    let scratch = Scratch()

    func plan(_ text: String) throws -> String {
        let path = scratch.path("plan.jsonl")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// docs/curating.md's table of plan operations is the reader's: every op in its order, each
    /// with the fields it takes (? where optional), and its examples applied in order as one plan.
    @Test func theGuidesTableOfOperationsIsThePlanReaders() throws {
        let guide = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/curating.md"), encoding: .utf8)
        let rows = guide.components(separatedBy: "\n").filter { $0.hasPrefix("| `") && $0.contains("{\"op\"") }
        let cells = rows.map { row in row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        let ops = cells.map { $0[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
        #expect(ops == PlanLine.Op.ordered.map(\.rawValue))
        for (op, row) in zip(PlanLine.Op.ordered, cells) {
            let fields = row[1].components(separatedBy: ", ").map { $0.replacingOccurrences(of: "`", with: "").replacingOccurrences(of: "?", with: "") }
            #expect(fields == op.fields, "\(op.rawValue): \(row[1])")
        }
        let examples = cells.map { String($0[3].dropFirst().dropLast()) }
        for (op, example) in zip(PlanLine.Op.ordered, examples) {
            let decoded = try JSONDecoder().decode(PlanLine.self, from: Data(example.utf8))
            #expect(decoded.operation != nil && example.contains("\"op\": \"\(op.rawValue)\""), "\(example)")
        }
        let database = try scratch.baseDatabase()
        let report = try Curator(database).apply(planAt: try plan(examples.joined(separator: "\n") + "\n"))
        #expect(report.committed && report.count("stations", .duplicate) == 2, "\(report.counts)")
    }

    @Test(arguments: [
        ("# comment\n{\"op\": \"close\", \"table\": \"stations\"\n", ":2: not valid JSON (expected one JSON object per line, e.g. {\"op\": \"close\", \"table\": \"stations\", \"key\": 1141543})"),
        ("[1, 2]\n", ":1: expected one JSON object on this line"),
        ("{\"table\": \"stations\"}\n", ":1: missing \"op\" (expected one of: add, edit, transfer_line, move_stations, close, restore, split, record_split, connect, disconnect)"),
        ("{\"op\": \"teleport\"}\n", ":1: unknown op \"teleport\" (expected one of: add, edit, transfer_line, move_stations, close, restore, split, record_split, connect, disconnect)"),
        ("\n\n{\"op\": \"close\", \"table\": \"platforms\", \"key\": 1}\n", ":3: unknown table \"platforms\" (expected one of: prefectures, companies, lines, stations, connections)"),
        ("{\"op\": \"close\", \"table\": \"stations\", \"key\": 1, \"when\": \"now\"}\n", ":1: unknown field \"when\" for close (expected: table, key, date, cascade)"),
        ("{\"op\": \"clsoe\", \"table\": \"stations\", \"key\": 1}\n", ":1: unknown op \"clsoe\" (did you mean \"close\"? expected one of: add, edit, transfer_line, move_stations, close, restore, split, record_split, connect, disconnect)"),
        ("{\"op\": \"close\", \"table\": \"stations\", \"key\": 1, \"dates\": \"2024-03-16\"}\n", ":1: unknown field \"dates\" for close (did you mean \"date\"? expected: table, key, date, cascade)"),
        ("{\"op\": \"split\", \"old\": \"abc\", \"new\": 2}\n", ":1: \"old\" is not a code (expected a whole number)"),
        ("{\"op\": \"connect\", \"line\": 11201, \"stations\": [1, \"x\"]}\n", ":1: \"stations\" holds x, which is not a code (expected whole numbers)"),
        ("{\"plan\": \"nothing\"}\n# only comments\n", ": no operations (expected one JSON object per line with an \"op\")"),
        // A key named twice: JSONDecoder would apply 2, jq and Python read 3.
        ("{\"op\": \"edit\", \"table\": \"stations\", \"key\": 1120101, \"set\": {\"weight\": 2, \"weight\": 3}}\n",
         ":1: \"weight\" is named twice in $.set (expected each key once: JSON readers disagree on which value counts, so the reviewer and the master could see different ones; keep one)"),
        ("{\"plan\": \"p\"}\n{\"op\": \"close\", \"table\": \"stations\", \"key\": 1, \"key\": 1}\n",
         ":2: \"key\" is named twice in $ (expected each key once: JSON readers disagree on which value counts, so the reviewer and the master could see different ones; keep one)"),
    ])
    func malformedPlansNameTheirLine(_ text: String, _ message: String) throws {
        let path = try plan(text)
        #expect(throws: InputError.self) { try PlanFile.load(path) }
        do { _ = try PlanFile.load(path) } catch let error as InputError where error.input == .plan {
            #expect(error.errorDescription == path + message)
        }
    }

    @Test func anOperationThatFailsNamesItsLineAndNothingIsCommitted() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let path = try plan("""
            {"plan": "two steps", "memo": "test"}
            {"op": "edit", "table": "stations", "key": 1120101, "set": {"weight": 1}}
            # the second fails: the first must not be committed either
            {"op": "restore", "table": "stations", "key": 1120101}
            """)
        #expect(throws: InputError(.plan, file: path, line: 4, message: "stations 1120101 is not closed")) {
            try Curator(database).apply(planAt: path)
        }
        #expect(try database.settledSHA256() == before)
    }

    @Test func aPlanIsOneVersionWithItsMemo() throws {
        let database = try scratch.baseDatabase()
        let path = try plan("""
            {"plan": "two steps", "memo": "a real event"}
            {"op": "edit", "table": "stations", "key": 1120101, "set": {"weight": 1}}
            {"op": "close", "table": "stations", "key": 1120206, "date": "2021-03-13"}
            """)
        let report = try Curator(database).apply(planAt: path)
        #expect(report.version == 2 && report.totalChanges == 2)
        #expect(try LogReader(database).log(LogFilter(version: 2)).allSatisfy { $0.memo == "a real event" })
    }

    @Test func theAoimoriPlanReproducesWhatEkidataRecorded() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.repository.appendingPathComponent("datasets/plans/fixtures/aomori-2010-before").path])
        let report = try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2010-12-04-aoimori.jsonl").path)
        #expect(report.count("stations", .duplicate) == 1)
        for code in [1120102, 1120110, 1120120] {
            #expect(try database.value("SELECT line_cd FROM stations WHERE station_cd = ?", [code]) == 99206)
        }
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 1120101") == 2)
        #expect(try database.value("SELECT e_status FROM lines WHERE line_cd = 11201") == 2)
        #expect(try LogReader(database).log(LogFilter(key: "1120101")).map(\.type) == [.insert, .delete, .duplicate])
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release")))
        #expect(result.verification?.failures == [] && result.released.deltas.last?.duplicates == 1)
    }

    @Test func theHokurikuPlanAppliesToTheRealSnapshotAndVerifies() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        let report = try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        #expect(report.count("stations", .duplicate) == 2)
        #expect(try database.value("SELECT line_cd FROM stations WHERE station_cd = 1141531") == 99426)
        #expect(try database.value("SELECT line_cd FROM stations WHERE station_cd = 1141520") == 99440)
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 1141543") == 2)
        #expect(try LogReader(database).log(LogFilter(version: 2)).filter { $0.type == .duplicate }.map { "\($0.tableName)→\($0.keyID)" }
            == ["1141512→9944001", "1141530→9944019"])
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release")))
        #expect(result.verification?.failures == [])
    }
}
