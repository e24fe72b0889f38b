import Foundation
import GRDB
import StationCheck
import StationCurate
import StationImport
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationVersion
import StationWeights
import Testing

@Suite struct SuggestionAndWeightTests {
    let scratch = Scratch()

    @Test func aClosedAndAnAddedStationWithOneNameAreSuggested() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "0000-00-00,0000-00-00,0,1120206", with: "0000-00-00,2020-03-14,2,1120206")
        try snapshot.appendLine("station.csv", "9900108,9900108,白銀,,,99001,2,031-0822,八戸市白銀町,141.5499,40.5293,2020-03-14,0000-00-00,0,9900108")
        try database.importSnapshot([snapshot.path])
        let suggestions = try database.suggestSplits()
        #expect(suggestions.map(\.planLine) == ["{\"op\": \"record_split\", \"old\": 1120206, \"new\": 9900108}"])
        #expect(suggestions.first?.reason == "closed and added in this version: same name, 48 m apart")
        #expect(suggestions.first?.confidence == 0.7)
        try database.apply([LocatedOperation(.recordSplit(old: 1120206, new: 9900108))])
        #expect(try database.suggestSplits(version: 2).isEmpty)
    }

    @Test func theRealSnapshotsSuggestTheTwoHandoversAndNothingElse() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.importSnapshot([Fixtures.ekidata2019])
        let report = try database.importSnapshot([Fixtures.ekidata2021])
        #expect(report.suggestions.map(\.planLine) == [
            "{\"op\": \"record_split\", \"old\": 1120825, \"new\": 9920801}",
            "{\"op\": \"record_split\", \"old\": 1180430, \"new\": 9980101}",
        ])
        #expect(try database.suggestSplits().map { "\($0.old) \($0.oldName) → \($0.new) \($0.newName)" } == [
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
        let report = try database.apply(operations, memo: file.memo)
        #expect(report.count("stations", .duplicate) == 0)
        return report
    }

    @Test func theAoimoriTransferWithoutItsDuplicateIsSuggestedExactly() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.importSnapshot([Fixtures.repository.appendingPathComponent("datasets/plans/fixtures/aomori-2010-before").path])
        let report = try applyWithoutDuplicates("datasets/plans/2010-12-04-aoimori.jsonl", to: database)
        #expect(try database.suggestSplits().map { "\($0.old)→\($0.new)" } == ["1120101→9920607"])
        #expect(report.suggestions.isEmpty, "a plan's report lists no suggestions; suggest does")
        let suggestion = try #require(try database.suggestSplits().first)
        #expect(suggestion.confidence == 0.9)
        #expect(suggestion.reason.contains("JR東日本 to 青い森鉄道"))
    }

    @Test func theHokurikuTransferWithoutItsDuplicatesIsSuggestedExactly() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.importSnapshot([Fixtures.ekidata2021])
        _ = try applyWithoutDuplicates("datasets/plans/2024-03-16-hokuriku.jsonl", to: database)
        // Not JR 金沢 1141543 → IR 金沢 9942601: that section passed to IR with its codes.
        #expect(try database.suggestSplits().map { "\($0.old)→\($0.new)" } == ["1141512→9944001", "1141530→9944019"])
    }

    /// An import's suggestions scan the stations as they were before it, on a second connection,
    /// and look again at the stations it changed: here JR's 白銀 joins the group of テスト鉄道's
    /// closing テスト南 under that name in the same import, which only the second look sees.
    @Test func aStationThatJoinsAClosedStationsGroupInTheSameImportIsAHandover() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.removeLine("station.csv", containing: "9900104,9900104,テスト南,")
        try snapshot.replace("station.csv", "1120206,1120206,白銀,", with: "1120206,9900104,テスト南,")
        let report = try database.importSnapshot([snapshot.path])
        #expect(report.suggestions.map(\.planLine) == ["{\"op\": \"record_split\", \"old\": 9900104, \"new\": 1120206}"])
        #expect(report.suggestions.first?.reason.hasPrefix("テスト鉄道 left the station") == true)
        #expect(report.suggestions == (try database.suggestSplits(version: report.version)))
    }

    @Test func anOperatorThatStillServesTheGroupIsNoHandover() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.importSnapshot([Fixtures.ekidata2021])
        // JR East's Hachinohe Line 八戸 1120601 closes (an express stopping at the hub is gone), while
        // its own 八戸 of another line stays in the group; Aoimori's 八戸 9920607 shares the group.
        try database.apply([LocatedOperation(.add(table: .stations, values: [
            "station_cd": "1120699", "station_g_cd": "1120601", "station_name": "八戸", "line_cd": "11206",
            "lat": "40.509", "lon": "141.431", "e_status": "0",
        ]))])
        try database.apply([LocatedOperation(.close(table: .stations, key: ["1120601"], date: "2024-01-01", cascade: false))])
        #expect(try database.suggestSplits().isEmpty)
    }

    @Test func standardMeshCodesFollowJISX0410() {
        #expect(StandardMesh.first(latitude: 35.681236, longitude: 139.767125) == 5339)
        #expect(StandardMesh.second(latitude: 35.681236, longitude: 139.767125) == 533946)
        #expect(StandardMesh.first(latitude: 43.068661, longitude: 141.350755) == 6441)
    }

    @Test func weightsAreDeterministicKeepHandWeightsAndSpreadOverSquares() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.importSnapshot([Fixtures.ekidata2021])
        try database.apply([LocatedOperation(.edit(table: .stations, key: ["1130101"], values: ["weight": "1"]))])
        let before = try database.settledSHA256()
        let dryRun = try database.assignWeights(seed: 7, dryRun: true)
        #expect(try database.settledSHA256() == before)
        #expect(!dryRun.change.committed && dryRun.change.totalChanges > 1000)

        let report = try database.assignWeights(seed: 7)
        #expect(report.change.committed)
        let weights: [Int64: Int] = try database.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT station_cd, weight FROM stations").map { ($0[0], $0[1]) })
        }
        #expect(weights[1130101] == 1)
        #expect(report.stationsByWeight[11] == report.firstOrderSquares)
        let open = try database.read { try Row.fetchAll($0, sql: "SELECT station_cd, lat, lon FROM stations WHERE e_status <> 2") }
        var elevens: [Int: Int] = [:]
        for row in open where weights[row[0]] == 11 {
            elevens[StandardMesh.first(latitude: row[1], longitude: row[2]), default: 0] += 1
        }
        #expect(elevens.count == report.firstOrderSquares && elevens.values.allSatisfy { $0 == 1 })

        let again = try MasterDatabase.create(at: scratch.path("again.sqlite"))
        try again.importSnapshot([Fixtures.ekidata2021])
        try again.apply([LocatedOperation(.edit(table: .stations, key: ["1130101"], values: ["weight": "1"]))])
        try again.assignWeights(seed: 7)
        let sameSeed: [Int64: Int] = try again.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT station_cd, weight FROM stations").map { ($0[0], $0[1]) })
        }
        #expect(sameSeed == weights)
        let otherSeed = try again.assignWeights(seed: 8)
        #expect(otherSeed.change.totalChanges > 100)
        #expect(try database.assignWeights(seed: 7).change.totalChanges == 0)
    }

    @Test func weightedPinsSpreadWiderThanNearestPins() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.importSnapshot([Fixtures.ekidata2021])
        try database.assignWeights(seed: 1)
        for spread in try database.mapSpread() {
            #expect(spread.coveredByWeight > spread.coveredWithoutWeights * 2, "\(spread.extent)")
        }
    }

    @Test func proposedMajorStationsSpreadThePinsAtEveryScaleAndKeepHandWeights() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.importSnapshot([Fixtures.ekidata2021])
        // A curator's hand weight on 鳴子温泉 (no junction, so never proposed anything).
        try database.apply([LocatedOperation(.edit(table: .stations, key: ["1122115"], values: ["weight": "9"]))])
        let before = try database.settledSHA256()
        let dryRun = try database.assignWeights(seed: 1, proposeMajor: true, dryRun: true)
        #expect(try database.settledSHA256() == before, "a dry run writes nothing")
        #expect(!dryRun.change.committed)

        let report = try database.assignWeights(seed: 1, proposeMajor: true)
        #expect(report.change.committed && report.keptHandWeights == 1)
        #expect(try database.read { try Int.fetchOne($0, sql: "SELECT weight FROM stations WHERE station_cd = 1122115") } == 9)
        // The goal of the issue: the top 150 pins reach 60 % of the occupied cells of an 8 × 8 grid over
        // all Japan and Kanto, 40 % over Tokyo's 23 wards; what the stored weights give is what a phone sees.
        let spread = try database.mapSpread()
        let share = Dictionary(uniqueKeysWithValues: spread.map { ($0.extent, Double($0.coveredByWeight) / Double($0.cellsWithStations)) })
        #expect(share["all Japan"]! >= 0.6 && share["Kanto"]! >= 0.6 && share["Tokyo 23 wards"]! >= 0.4, "\(share)")
        #expect(spread.map(\.coveredByWeight) == report.spreadAfter.map(\.coveredByWeight))
        // Near the original service's proportions: 1–9 for about 15 % of the stations, 11–12 for about 30 %.
        let open = Double(report.stationsByWeight.values.reduce(0, +))
        let major = Double(report.stationsByWeight.filter { (1...9).contains($0.key) }.values.reduce(0, +))
        let sampled = Double((report.stationsByWeight[11] ?? 0) + (report.stationsByWeight[12] ?? 0))
        #expect((0.12...0.18).contains(major / open) && (0.25...0.35).contains(sampled / open), "\(major) \(sampled) of \(open)")
        // One station per place: every group carries at most one proposed weight.
        let crowded = try database.read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM (SELECT COALESCE(station_g_cd, station_cd) AS place FROM stations
                WHERE weight BETWEEN 1 AND 9 AND e_status <> 2 GROUP BY place HAVING COUNT(*) > 1)
                """)
        }
        #expect(crowded == 0)
        // Each prefecture's first station gets 1.
        #expect(report.stationsByWeight[1] == 47)
    }

    @Test func municipalitiesAreReadFromEkidataAddresses() {
        #expect(Municipality.name(in: "八戸市市川町") == "八戸市")
        #expect(Municipality.name(in: "上北郡おいらせ町") == "おいらせ町")
        #expect(Municipality.name(in: "東京都千代田区丸の内1-9-1") == "千代田区")
        #expect(Municipality.name(in: "横浜市港北区新横浜") == "横浜市")
        #expect(Municipality.name(in: "青森県八戸市尻内町") == "八戸市")
        #expect(Municipality.name(in: nil) == nil)
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
        try database.importSnapshot([snapshot.path], options: ImportOptions(allowMassClose: true))
        // 5 km: each station is near its neighbours too (they are 1.5 to 4 km apart).
        let assigned = try database.suggestSplits(radius: 5000)
        #expect(assigned.map { "\($0.old)→\($0.new)" }.sorted() == (2...6).map { "112020\($0)→112920\($0)" })
        #expect(assigned.allSatisfy { $0.confidence == 0.7 && $0.oldName == $0.newName })
        let every = try database.suggestSplits(radius: 5000, all: true)
        #expect(every.count > assigned.count * 2 - 1, "\(every.count) candidates")
        #expect(every.contains { $0.old == 1120203 && $0.new == 1129204 && $0.confidence == 0.45 }, "a neighbour's pair, at 0.45")
        // The command: the assignment by default, every candidate with --all.
        let shown = try CommandRunner.run(["suggest", "--db", database.path, "--radius", "5000", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [Any])?.count == 5)
        let all = try CommandRunner.run(["suggest", "--db", database.path, "--radius", "5000", "--all", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [Any])?.count == every.count)
    }
}
