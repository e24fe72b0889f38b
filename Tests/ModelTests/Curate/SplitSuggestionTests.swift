import Foundation
import GRDB
import StationCheck
import StationCurate
import StationImport
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationSynth
import StationVersion
import StationWeights
import Testing

@Suite struct SplitSuggestionTests {
    let scratch = Scratch()

    @Test func aClosedAndAnAddedStationWithOneNameAreSuggested() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "0000-00-00,0000-00-00,0,1120206", with: "0000-00-00,2020-03-14,2,1120206")
        try snapshot.appendLine("station.csv", "9900108,9900108,白銀,,,99001,2,031-0822,八戸市白銀町,141.5499,40.5293,2020-03-14,0000-00-00,0,9900108")
        try Importer(database).importSnapshot([snapshot.path])
        let suggestions = try Checker(database).suggestSplits()
        #expect(suggestions.map(\.planLine) == ["{\"op\": \"record_split\", \"old\": 1120206, \"new\": 9900108}"])
        #expect(suggestions.first?.reason == "closed and added in this version: same name, 48 m apart")
        #expect(suggestions.first?.confidence == 0.7)
        try Curator(database).apply([LocatedOperation(.recordSplit(old: 1120206, new: 9900108))])
        #expect(try Checker(database).suggestSplits(version: 2).isEmpty)
    }

    @Test func theRealSnapshotsSuggestTheTwoHandoversAndNothingElse() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2019])
        let report = try Importer(database).importSnapshot([Fixtures.ekidata2021])
        #expect(report.suggestions.map(\.planLine) == [
            "{\"op\": \"record_split\", \"old\": 1120825, \"new\": 9920801}",
            "{\"op\": \"record_split\", \"old\": 1180430, \"new\": 9980101}",
        ])
        #expect(try Checker(database).suggestSplits().map { "\($0.old) \($0.oldName) → \($0.new) \($0.newName)" } == [
            "1120825 盛 → 9920801 盛", "1180430 海部 → 9980101 海部",
        ])
        #expect(report.suggestions.first?.reason == "JR東日本 left the station: its 盛 closed, and 三陸鉄道's open 盛 (same name and group) carries on")
        // The JSON of docs/json.md: every key, snake_case.
        let json = try CommandRunner.run(["suggest", "--db", scratch.path("m.sqlite"), "--json"])
        let first = try #require((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(Set(first.keys) == ["version", "old", "old_name", "new", "new_name", "reason", "confidence", "metres", "plan_line"])
        #expect(first["old"] as? Int == 1120825 && first["confidence"] as? Double == 0.6)
    }

    /// Applies a plan with every `split` replaced by what it does short of the DUPLICATE: the
    /// new station copied from the old one, and its connections. What a curator's plan looks
    /// like before anyone noticed the shared station.
    private func applyWithoutDuplicates(_ plan: String, to database: MasterDatabase) throws -> ChangeReport {
        let file = try PlanFile.load(Fixtures.repository.appendingPathComponent(plan).path)
        var operations: [LocatedOperation] = []
        for located in file.operations {
            guard case let .split(old, new, line, values, connectTo) = located.operation else { operations.append(located); continue }
            let columns = MasterTable.stations.columnNames
            var row: [String: String] = try database.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT \(columns.map { "CAST(\($0) AS TEXT)" }.joined(separator: ", ")) FROM stations WHERE station_cd = ?",
                                           arguments: [old])!
                return Dictionary(uniqueKeysWithValues: columns.indices.map { (columns[$0], (row[$0] as String?) ?? "") })
            }
            row.merge(values) { $1 }
            row["station_cd"] = String(new); row["e_sort"] = String(new)
            if let line { row["line_cd"] = String(line) }
            operations.append(LocatedOperation(.add(table: .stations, values: row)))
            for other in connectTo {
                operations.append(LocatedOperation(.connect(line: Int64(row["line_cd"]!)!, stations: [new, other])))
            }
        }
        let report = try Curator(database).apply(operations, memo: file.memo)
        #expect(report.count("stations", .duplicate) == 0)
        return report
    }

    @Test func theAoimoriTransferWithoutItsDuplicateIsSuggestedExactly() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.repository.appendingPathComponent("datasets/plans/fixtures/aomori-2010-before").path])
        let report = try applyWithoutDuplicates("datasets/plans/2010-12-04-aoimori.jsonl", to: database)
        #expect(try Checker(database).suggestSplits().map { "\($0.old)→\($0.new)" } == ["1120101→9920607"])
        #expect(report.suggestions.isEmpty, "a plan's report lists no suggestions; suggest does")
        let suggestion = try #require(try Checker(database).suggestSplits().first)
        #expect(suggestion.confidence == 0.9)
        #expect(suggestion.reason.contains("JR東日本 to 青い森鉄道"))
    }

    @Test func theHokurikuTransferWithoutItsDuplicatesIsSuggestedExactly() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        _ = try applyWithoutDuplicates("datasets/plans/2024-03-16-hokuriku.jsonl", to: database)
        // Not JR 金沢 1141543 → IR 金沢 9942601: that section passed to IR with its codes.
        #expect(try Checker(database).suggestSplits().map { "\($0.old)→\($0.new)" } == ["1141512→9944001", "1141530→9944019"])
    }

    /// An import's suggestions start from the stations as its compare read them before it
    /// (`StationPlaces`), and look again at the stations it changed: here JR's 白銀 joins the
    /// group of テスト鉄道's closing テスト南 under that name in the same import, which only the
    /// second look sees.
    @Test func aStationThatJoinsAClosedStationsGroupInTheSameImportIsAHandover() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.removeLine("station.csv", containing: "9900104,9900104,テスト南,")
        try snapshot.replace("station.csv", "1120206,1120206,白銀,", with: "1120206,9900104,テスト南,")
        let report = try Importer(database).importSnapshot([snapshot.path])
        #expect(report.suggestions.map(\.planLine) == ["{\"op\": \"record_split\", \"old\": 9900104, \"new\": 1120206}"])
        #expect(report.suggestions.first?.reason.hasPrefix("テスト鉄道 left the station") == true)
        #expect(report.suggestions == (try Checker(database).suggestSplits(version: report.version)))
    }

    /// What an import suggests, from the stations as its compare kept them (names hashed, places
    /// in single precision), is what `suggest` finds afterwards from the master and its history,
    /// whether the import is checked before its commit or after it: on synthetic changes of a
    /// quarter of the stations, and on a line renumbered (each station's namesake at its place).
    @Test(arguments: [false, true]) func anImportSuggestsWhatSuggestFindsAfterwards(checkedAfterCommit: Bool) throws {
        var tuning = ImportTuning()
        if checkedAfterCommit { tuning.checksAfterCommitFromStations = 0 }
        var suggested = 0
        for seed in UInt64(1)...6 {
            let database = try scratch.baseDatabase(name: "seed-\(seed)-\(checkedAfterCommit).sqlite")
            let next = scratch.path("next-\(seed)-\(checkedAfterCommit)")
            try SnapshotSynthesizer.next(of: Fixtures.base.path, changePercent: 25, seed: seed, into: next)
            let report = try Importer(database, tuning: tuning).importSnapshot([next], options: ImportOptions(allowMassClose: true))
            #expect(report.committed)
            #expect(report.suggestions == (try Checker(database).suggestSplits(version: report.version)), "seed \(seed)")
            suggested += report.suggestions.count
        }
        let database = try scratch.baseDatabase(name: "renumbered-\(checkedAfterCommit).sqlite")
        let snapshot = try scratch.snapshot("renumbered-\(checkedAfterCommit)")
        for station in 2...6 {
            for file in ["station.csv", "join.csv"] { try snapshot.replace(file, "112020\(station)", with: "112920\(station)") }
        }
        let report = try Importer(database, tuning: tuning).importSnapshot([snapshot.path], options: ImportOptions(allowMassClose: true))
        #expect(report.suggestions.map { "\($0.old)→\($0.new)" }.sorted() == (2...6).map { "112020\($0)→112920\($0)" })
        #expect(report.suggestions == (try Checker(database).suggestSplits(version: report.version)))
        #expect(suggested > 0, "the synthetic changes suggest some splits")
        // A transfer with a shared station found by name and place alone: JR's 陸奥市川 passes to
        // テスト鉄道's line, which adds its own 八戸 (a group of its own) where JR's is.
        let transferred = try scratch.baseDatabase(name: "transferred-\(checkedAfterCommit).sqlite")
        let transfer = try scratch.snapshot("transferred-\(checkedAfterCommit)")
        try transfer.replace("station.csv", "1120102,1120102,陸奥市川,,,11201,", with: "9900999,9900999,八戸,,,99001,2,039-1101,青森県八戸市尻内町,"
                             + "141.430854,40.508877,2026-11-29,0000-00-00,0,9900999\n1120102,1120102,陸奥市川,,,99001,")
        let transferReport = try Importer(transferred, tuning: tuning).importSnapshot([transfer.path])
        #expect(transferReport.suggestions.map { "\($0.old)→\($0.new) \($0.confidence)" } == ["1120101→9900999 0.9"])
        #expect(transferReport.suggestions == (try Checker(transferred).suggestSplits(version: transferReport.version)))
    }

    @Test func anOperatorThatStillServesTheGroupIsNoHandover() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        // JR East's Hachinohe Line 八戸 1120601 closes (an express stopping at the hub is gone), while
        // its own 八戸 of another line stays in the group; Aoimori's 八戸 9920607 shares the group.
        try Curator(database).apply([LocatedOperation(.add(table: .stations, values: [
            "station_cd": "1120699", "station_g_cd": "1120601", "station_name": "八戸", "line_cd": "11206",
            "lat": "40.509", "lon": "141.431", "e_status": "0",
        ]))])
        try Curator(database).apply([LocatedOperation(.close(table: .stations, key: ["1120601"], date: "2024-01-01", cascade: false))])
        #expect(try Checker(database).suggestSplits().isEmpty)
    }
}

/// A line renumbered (every station closed and added again under a new code, same name, same
/// place) is an assignment: each station to its successor, not also to its successor's neighbours.
@Suite struct RenumberedLineSuggestionTests {
    let scratch = Scratch()

    @Test func aRenumberedLineSuggestsOnePairPerStationAndAllShowsTheRest() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        // JR八戸線's stations after 八戸 get new codes, 11202xx → 11292xx, in the stations and the connections.
        for station in 2...6 {
            let old = "112020\(station)", new = "112920\(station)"
            for file in ["station.csv", "join.csv"] {
                let path = snapshot.file(file)
                let text = try String(contentsOfFile: path, encoding: .utf8)
                try text.replacingOccurrences(of: old, with: new).write(toFile: path, atomically: true, encoding: .utf8)
            }
        }
        try Importer(database).importSnapshot([snapshot.path], options: ImportOptions(allowMassClose: true))
        // 5 km: each station is near its neighbours too (they are 1.5 to 4 km apart).
        let assigned = try Checker(database).suggestSplits(radius: 5000)
        #expect(assigned.map { "\($0.old)→\($0.new)" }.sorted() == (2...6).map { "112020\($0)→112920\($0)" })
        #expect(assigned.allSatisfy { $0.confidence == 0.7 && $0.oldName == $0.newName })
        let every = try Checker(database).suggestSplits(radius: 5000, all: true)
        #expect(every.count > assigned.count * 2 - 1, "\(every.count) candidates")
        #expect(every.contains { $0.old == 1120203 && $0.new == 1129204 && $0.confidence == 0.45 }, "a neighbour's pair, at 0.45")
        // The command: the assignment by default, every candidate with --all.
        let shown = try CommandRunner.run(["suggest", "--db", database.path, "--radius", "5000", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [Any])?.count == 5)
        let all = try CommandRunner.run(["suggest", "--db", database.path, "--radius", "5000", "--all", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [Any])?.count == every.count)
    }
}
