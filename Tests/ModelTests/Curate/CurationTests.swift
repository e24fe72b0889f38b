import Foundation
import GRDB
import StationCheck
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationVersion
import Testing

/// Every curated operation on the base fixture (version 1), with the exact `updates`
/// rows and master rows it leaves.
@Suite struct CurationTests {
    let scratch = Scratch()

    @discardableResult
    func apply(_ database: MasterDatabase, _ operations: PlanOperation..., memo: String? = "curated") throws -> ChangeReport {
        try Curator(database).apply(operations.map { LocatedOperation($0) }, memo: memo)
    }

    func updates(_ database: MasterDatabase, version: Int) throws -> [String] {
        try LogReader(database).log(LogFilter(version: version)).map { "\($0.type.rawValue) \($0.tableName) \($0.keyID)" }
    }

    @Test func addingAStationInsertsItWithItsWeight() throws {
        let database = try scratch.baseDatabase()
        let report = try apply(database, .add(table: .stations, values: [
            "station_cd": "1120121", "station_name": "新青森", "line_cd": "11201", "e_status": "0", "weight": "2", "lat": "40.8272", "lon": "140.6934",
        ]))
        #expect(report.version == 2 && report.committed)
        #expect(try updates(database, version: 2) == ["INSERT stations 1120121"])
        #expect(try database.value("SELECT weight FROM stations WHERE station_cd = 1120121") == 2)
        #expect(try LogReader(database).log(LogFilter(version: 2)).first?.memo == "curated")
    }

    @Test func editingChangesOnlyTheGivenColumns() throws {
        let database = try scratch.baseDatabase()
        try apply(database, .edit(table: .stations, key: ["1120101"], values: ["weight": "1", "address": ""]))
        #expect(try updates(database, version: 2) == ["UPDATE stations 1120101"])
        #expect(try database.value("SELECT weight FROM stations WHERE station_cd = 1120101") == 1)
        #expect(try database.value("SELECT address FROM stations WHERE station_cd = 1120101") as String? == nil)
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 1120101") == "八戸")
    }

    @Test func transferringALineKeepsItsStationCodes() throws {
        let database = try scratch.baseDatabase()
        try apply(database,
            .add(table: .companies, values: ["company_cd": "108", "company_name": "青い森鉄道", "e_status": "0"]),
            .transferLine(line: 11201, toCompany: 108))
        #expect(try updates(database, version: 2) == ["INSERT companies 108", "UPDATE lines 11201"])
        #expect(try database.value("SELECT company_cd FROM lines WHERE line_cd = 11201") == 108)
        #expect(try database.value("SELECT COUNT(*) FROM stations WHERE line_cd = 11201") == 11)
    }

    @Test func movingStationsMovesTheirConnectionsAndDropsTheBoundary() throws {
        let database = try scratch.baseDatabase()
        let report = try apply(database, .moveStations(stations: [1120102, 1120103, 1120104], toLine: 99001))
        #expect(try updates(database, version: 2) == [
            "UPDATE stations 1120102", "UPDATE stations 1120103", "UPDATE stations 1120104",
            "DELETE connections 11201/1120101/1120102", "DELETE connections 11201/1120102/1120103",
            "DELETE connections 11201/1120103/1120104", "DELETE connections 11201/1120104/1120105",
            "INSERT connections 99001/1120102/1120103", "INSERT connections 99001/1120103/1120104",
        ])
        #expect(report.warnings == [
            "connection 11201/1120101/1120102 removed: it joined a moved station to one left on line 11201",
            "connection 11201/1120104/1120105 removed: it joined a moved station to one left on line 11201",
        ])
    }

    @Test func closingAStationSetsItsStatusAndDate() throws {
        let database = try scratch.baseDatabase()
        try apply(database, .close(table: .stations, key: ["1120206"], date: "2021-03-13", cascade: false))
        #expect(try updates(database, version: 2) == ["DELETE stations 1120206"])
        #expect(try database.value("SELECT e_status || ' ' || close_ymd FROM stations WHERE station_cd = 1120206") == "2 2021-03-13")
    }

    @Test func closingALineWithOpenStationsNeedsCascade() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        #expect(throws: InputError(.plan, file: "command line", line: nil, message:
            "closing lines 11202 leaves open: station 1120201 八戸, station 1120202 長苗代, station 1120203 本八戸, station 1120204 小中野, station 1120205 陸奥湊, station 1120206 白銀 (close them too: --cascade, or \"cascade\": true in a plan)")) {
            try apply(database, .close(table: .lines, key: ["11202"], date: nil, cascade: false))
        }
        #expect(try database.settledSHA256() == before)
        try apply(database, .close(table: .lines, key: ["11202"], date: "2030-01-01", cascade: true))
        let expected: [String] = ["DELETE lines 11202"] + (1...6).map { "DELETE stations 112020\($0)" }
        #expect(try updates(database, version: 2) == expected)
    }

    @Test func closingACompanyCascadesToItsLinesAndStations() throws {
        let database = try scratch.baseDatabase()
        try apply(database, .close(table: .companies, key: ["99"], date: nil, cascade: true))
        let stations: [String] = ["9900101", "9900102", "9900103", "9900104", "9900105", "9900107"].map { "DELETE stations \($0)" }
        #expect(try updates(database, version: 2) == ["DELETE companies 99", "DELETE lines 99001"] + stations)
    }

    @Test func restoringAClosedStationReopensIt() throws {
        let database = try scratch.baseDatabase()
        try apply(database, .restore(table: .stations, key: ["9900106"]))
        #expect(try updates(database, version: 2) == ["RESTORE stations 9900106"])
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 9900106") == 0)
        #expect(try database.value("SELECT close_ymd FROM stations WHERE station_cd = 9900106") as String? == nil)
    }

    @Test func splittingAStationAddsItThenRecordsTheDuplicate() throws {
        let database = try scratch.baseDatabase()
        try apply(database,
            .add(table: .lines, values: ["line_cd": "99206", "company_cd": "99", "line_name": "青い森鉄道線", "e_status": "0"]),
            .split(old: 1120101, new: 9920607, line: 99206, values: ["station_name": "八戸(青い森)"], connectTo: [1120102]))
        let log = try LogReader(database).log(LogFilter(version: 2))
        #expect(log.map { "\($0.type.rawValue) \($0.tableName) \($0.keyID)" } == [
            "INSERT lines 99206", "INSERT stations 9920607", "INSERT connections 99206/9920607/1120102",
            "DUPLICATE 1120101 9920607",
        ])
        #expect(log.last!.upID > log[1].upID)
        let row = try database.read { try Row.fetchOne($0, sql: "SELECT * FROM stations WHERE station_cd = 9920607") }!
        #expect(row["station_name"] as String? == "八戸(青い森)")
        #expect(row["line_cd"] as Int? == 99206)
        #expect(row["station_g_cd"] as Int? == 1120101)
        #expect(row["address"] as String? == "青森県八戸市尻内町")
    }

    @Test(arguments: [
        (PlanOperation.split(old: 1120101, new: 1120101, line: nil, values: [:], connectTo: []),
         "split 1120101 → 1120101: the old and new codes are the same (expected two stations)"),
        (.split(old: 1129999, new: 9920607, line: nil, values: [:], connectTo: []),
         "split 1129999 → 9920607: station 1129999 does not exist (expected an existing station to split)"),
        (.split(old: 9900106, new: 9920607, line: nil, values: [:], connectTo: []),
         "split 9900106 → 9920607: station 9900106 is closed (expected an open station; restore it first)"),
        (.split(old: 1120101, new: 1120102, line: nil, values: [:], connectTo: []),
         "split 1120101 → 1120102: station code 1120102 is already in use (expected a new code)"),
        (.add(table: .stations, values: ["station_cd": "1120101", "station_name": "x", "line_cd": "11201", "e_status": "0"]),
         "stations 1120101 already exists (use edit)"),
        (.add(table: .stations, values: ["station_cd": "1120199", "station_name": "x", "line_cd": "11299", "e_status": "0"]),
         "stations 1120199: line_cd 11299 names no row of lines (expected an existing line_cd)"),
        (.edit(table: .stations, key: ["1120101"], values: ["lat": "north"]),
         "lat \"north\" is not a number (expected degrees from -90.0 to 90.0)"),
        (.edit(table: .stations, key: ["1120101"], values: ["platform": "1"]),
         "stations has no column \"platform\" (expected one of: station_cd, station_g_cd, station_name, station_name_k, station_name_r, line_cd, pref_cd, post, address, lon, lat, open_ymd, close_ymd, e_status, e_sort, weight)"),
        (.edit(table: .stations, key: ["1120101"], values: ["station_cd": "1"]),
         "station_cd is part of the key and cannot be edited (add a new row, or split a station)"),
        (.transferLine(line: 11201, toCompany: 7), "companies 7 does not exist"),
        (.close(table: .stations, key: ["9900106"], date: nil, cascade: false), "stations 9900106 is already closed"),
        (.close(table: .connections, key: ["11201", "1120101", "1120102"], date: nil, cascade: false),
         "connections rows are removed, not closed (use disconnect for connections)"),
        (.restore(table: .stations, key: ["1120101"]), "stations 1120101 is not closed"),
        (.disconnect(line: 11201, stations: [1120101, 1120120]), "connection 11201/1120101/1120120 does not exist"),
        (.moveStations(stations: [1120101], toLine: 5), "lines 5 does not exist"),
    ])
    func refusedOperationsSayWhyAndWriteNothing(_ operation: PlanOperation, _ message: String) throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        do {
            try apply(database, operation)
            Issue.record("not refused: \(operation)")
        } catch let error as LocalizedError {
            let text = error.errorDescription ?? ""
            #expect(text == message || text == "command line: \(message)")
        }
        #expect(try database.settledSHA256() == before)
    }

    @Test func aSecondDuplicateOfTheSamePairAndALoopAreRefused() throws {
        let database = try scratch.baseDatabase()
        try apply(database, .split(old: 1120101, new: 9920607, line: nil, values: [:], connectTo: []))
        let before = try database.settledSHA256()
        #expect(throws: VersionError.splitRefused(old: 1120101, new: 9920607, reason: "this split is already recorded")) {
            try apply(database, .recordSplit(old: 1120101, new: 9920607))
        }
        try apply(database, .split(old: 9920607, new: 9920608, line: nil, values: [:], connectTo: []))
        #expect(throws: VersionError.splitRefused(old: 9920608, new: 1120101, reason: "it would close a loop of splits back to 9920608")) {
            try apply(database, .recordSplit(old: 9920608, new: 1120101))
        }
        #expect(throws: InputError(.plan, file: "command line", line: nil, message: "stations 9999999 does not exist")) {
            try apply(database, .recordSplit(old: 1120102, new: 9999999))
        }
        #expect(try database.dataVersion() == 3)
        _ = before
    }

    @Test func recordingASplitLinksAStationAnImportAdded() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "0000-00-00,0000-00-00,0,1120206", with: "0000-00-00,2020-03-14,2,1120206")
        try snapshot.appendLine("station.csv", "9980104,1120206,白銀,,,99001,2,031-0822,八戸市白銀町,141.5494,40.5291,2020-03-14,0000-00-00,0,9980104")
        try Importer(database).importSnapshot([snapshot.path])
        try apply(database, .recordSplit(old: 1120206, new: 9980104))
        #expect(try updates(database, version: 3) == ["DUPLICATE 1120206 9980104"])
    }

    @Test func dryRunReportsEverythingAndWritesNothing() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let report = try Curator(database).apply([LocatedOperation(.split(old: 1120101, new: 9920607, line: nil, values: [:], connectTo: [1120102]))], dryRun: true)
        #expect(!report.committed && report.version == 2)
        #expect(report.changes.map(\.summary).last == "DUPLICATE stations 1120101 → 9920607")
        #expect(report.changes.first?.summary.hasPrefix("INSERT stations 9920607 八戸: station_g_cd=1120101, station_name=八戸") == true)
        #expect(try database.settledSHA256() == before)
        #expect(try database.dataVersion() == 1)
    }

    @Test func logByKeyTellsAStationsStoryIncludingItsSplit() throws {
        let database = try scratch.baseDatabase()
        try apply(database, .edit(table: .stations, key: ["1120101"], values: ["weight": "2"]))
        try apply(database, .split(old: 1120101, new: 9920607, line: nil, values: [:], connectTo: []))
        try apply(database, .close(table: .stations, key: ["1120101"], date: "2010-12-04", cascade: false))
        let story = try LogReader(database).story(key: "1120101")
        #expect(story.first?.summary.hasPrefix("v1 INSERT stations 1120101 八戸: station_g_cd=1120101, station_name=八戸, line_cd=11201") == true)
        #expect(story.dropFirst().map(\.summary) == [
            "v2 UPDATE stations 1120101 八戸: weight 13 → 2",
            "v3 DUPLICATE stations 1120101 → 9920607",
            "v4 DELETE stations 1120101 八戸: close_ymd NULL → 2010-12-04, e_status 0 → 2",
        ])
    }
}
