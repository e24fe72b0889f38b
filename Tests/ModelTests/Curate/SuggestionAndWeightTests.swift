import Foundation
import GRDB
import Testing
@testable import Model

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
        #expect(suggestions.first?.reasons == ["same name", "48 m apart"])
        try database.apply([LocatedOperation(.recordSplit(old: 1120206, new: 9900108))])
        #expect(try database.suggestSplits(version: 2).isEmpty)
    }

    @Test func theRealSnapshotsSuggestTheTwoHandovers() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.importSnapshot([Fixtures.ekidata2019])
        let report = try database.importSnapshot([Fixtures.ekidata2021])
        #expect(report.suggestions.map(\.planLine) == [
            "{\"op\": \"record_split\", \"old\": 1120825, \"new\": 9920801}",
            "{\"op\": \"record_split\", \"old\": 1180430, \"new\": 9980101}",
        ])
        #expect(try database.suggestSplits().map { "\($0.closed) \($0.closedName) → \($0.added) \($0.addedName)" } == [
            "1120825 盛 → 9920801 盛", "1180430 海部 → 9980101 海部",
        ])
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
}
