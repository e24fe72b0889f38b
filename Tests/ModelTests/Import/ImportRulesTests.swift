import Foundation
import GRDB
import StationCSV
import StationCheck
import StationDelta
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationVersion
import Testing

/// The diff rules of the core issue, each on the small base fixture.
@Suite struct ImportRulesTests {
    let scratch = Scratch()

    @Test func initCreatesAnEmptyDatabaseAtVersionZero() throws {
        let database = try MasterDatabase.create(at: scratch.path("new.sqlite"))
        #expect(try database.dataVersion() == 0)
        #expect(try LogReader(database).status().tables.allSatisfy { $0.rows == 0 })
    }

    @Test func initRefusesToOverwrite() throws {
        _ = try MasterDatabase.create(at: scratch.path("new.sqlite"))
        #expect(throws: MasterDatabaseError.alreadyExists(scratch.path("new.sqlite"))) {
            try MasterDatabase.create(at: scratch.path("new.sqlite"))
        }
    }

    @Test func firstImportInsertsEveryRowAsVersionOne() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        let report = try Importer(database).importSnapshot([Fixtures.base.path], options: ImportOptions(memo: "base"))
        #expect(report.version == 1 && report.committed)
        #expect(report.counts["stations"] == ["INSERT": 24, "UPDATE": 0, "DELETE": 0, "RESTORE": 0])
        #expect(report.count("connections", .insert) == 21)
        #expect(report.count("prefectures", .insert) == 2)
        let log = try LogReader(database).log()
        #expect(log.count == 2 + 3 + 24 + 21 + 2)
        #expect(log.allSatisfy { $0.userVersion == 1 && $0.type == .insert && $0.memo == "base" })
        #expect(log.map(\.tableName).first == "prefectures")
        #expect(try database.value("SELECT weight FROM stations WHERE station_cd = 1120101") == 13)
    }

    @Test func quotedFieldsKeepTheirCommasAndQuotes() throws {
        let database = try scratch.baseDatabase()
        #expect(try database.value("SELECT address FROM stations WHERE station_cd = 9900101") == "東京都千代田区丸の内1-9-1, テストビル")
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 9900103") == "テスト\"西\"")
    }

    @Test func reimportingTheSameSnapshotMakesNoVersion() throws {
        let database = try scratch.baseDatabase()
        let report = try Importer(database).importSnapshot([Fixtures.base.path])
        #expect(report.totalChanges == 0 && !report.committed)
        #expect(try database.dataVersion() == 1)
    }

    @Test func coordinatesWithinAMillionthOfADegreeAreNoChange() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "141.42896,40.57129", with: "141.428960000000004,40.571290")
        try snapshot.replace("station.csv", "141.377403,40.616222", with: "141.3774035,40.6162224")
        #expect(try Importer(database).diff([snapshot.path]).totalChanges == 0)
        try snapshot.replace("station.csv", "141.3774035,40.6162224", with: "141.377403,40.616224")
        let report = try Importer(database).diff([snapshot.path])
        #expect(report.changes.map(\.summary) == ["UPDATE stations 1120103 下田: lat 40.616222 → 40.616224"])
    }

    @Test func blankAndZeroDatesAreBothNull() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "141.42896,40.57129,0000-00-00,0000-00-00", with: "141.42896,40.57129,,")
        try snapshot.replace("station.csv", "1891-09-01", with: " 1891-09-01 ")
        #expect(try Importer(database).diff([snapshot.path]).totalChanges == 0)
    }

    @Test func addHeaderMeansAddress() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "post,address,lon", with: "post,add,lon")
        try snapshot.replace("station.csv", "八戸市市川町", with: "八戸市市川町２")
        let report = try Importer(database).diff([snapshot.path])
        #expect(report.changes.map(\.summary) == ["UPDATE stations 1120102 陸奥市川: address 八戸市市川町 → 八戸市市川町２"])
    }

    @Test func statusToAbolishedIsDeleteAndBackIsRestore() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "0000-00-00,0000-00-00,0,1120104", with: "0000-00-00,2021-03-13,2,1120104")
        try snapshot.replace("station.csv", "0000-00-00,2001-03-31,2,9900106", with: "0000-00-00,0000-00-00,0,9900106")
        let report = try Importer(database).importSnapshot([snapshot.path], options: ImportOptions(memo: "v2"))
        #expect(report.count("stations", .delete) == 1 && report.count("stations", .restore) == 1)
        #expect(report.count("stations", .update) == 0)
        let log = try LogReader(database).log(LogFilter(version: 2))
        #expect(log.map { "\($0.type.rawValue) \($0.tableName) \($0.keyID)" } == [
            "DELETE stations 1120104", "RESTORE stations 9900106",
        ])
        #expect(try database.value("SELECT close_ymd FROM stations WHERE station_cd = 1120104") == "2021-03-13")
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 9900106") == 0)
    }

    @Test func aMissingStationIsClosedAndKept() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.removeLine("station.csv", containing: "1120206,")
        try snapshot.removeLine("station.csv", containing: "9900106,")  // already closed: nothing to do
        try snapshot.removeLine("join.csv", containing: "1120205,1120206")
        let report = try Importer(database).importSnapshot([snapshot.path])
        #expect(report.counts["stations"] == ["INSERT": 0, "UPDATE": 0, "DELETE": 1, "RESTORE": 0])
        #expect(report.counts["connections"] == ["INSERT": 0, "UPDATE": 0, "DELETE": 1, "RESTORE": 0])
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 1120206") == 2)
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 1120206") == "白銀")
        #expect(try database.value("SELECT COUNT(*) FROM stations") == 24)
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE station_cd2 = 1120206") == 0)
        #expect(try LogReader(database).log(LogFilter(version: 2)).map(\.keyID) == ["1120206", "11202/1120205/1120206"])
    }

    @Test func aMissingCompanyOrLineIsClosed() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.removeLine("company.csv", containing: "テスト鉄道")
        let report = try Importer(database).importSnapshot([snapshot.file("company.csv")], options: ImportOptions(allowMassClose: true))
        #expect(report.counts == ["companies": ["INSERT": 0, "UPDATE": 0, "DELETE": 1, "RESTORE": 0]])
        #expect(try database.value("SELECT e_status FROM companies WHERE company_cd = 99") == 2)
    }

    @Test func onlyTablesWhoseFileIsGivenAreDiffed() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.remove("pref.csv")
        try snapshot.remove("join.csv")
        #expect(try Importer(database).diff([snapshot.path]).counts.keys.sorted() == ["companies", "lines", "stations"])
        #expect(try Importer(database).importSnapshot([snapshot.path]).totalChanges == 0)
        #expect(try database.value("SELECT COUNT(*) FROM prefectures") == 2)
    }

    @Test func theTableIsRecognisedByHeaderNotName() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        let folder = scratch.url.appendingPathComponent("renamed")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (from, to) in [("company", "a"), ("line", "b"), ("station", "c"), ("join", "d"), ("pref", "e")] {
            try FileManager.default.copyItem(
                at: Fixtures.base.appendingPathComponent("\(from).csv"), to: folder.appendingPathComponent("\(to).CSV"))
        }
        let report = try Importer(database).importSnapshot([folder.path])
        #expect(report.count("stations", .insert) == 24 && report.count("connections", .insert) == 21)
    }

    @Test func byteOrderMarkAndCRLFAreAccepted() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        let path = snapshot.file("station.csv")
        let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "\n", with: "\r\n")
        try (Data([0xEF, 0xBB, 0xBF]) + Data(text.utf8)).write(to: URL(fileURLWithPath: path))
        #expect(try Importer(database).diff([path]).totalChanges == 0)
    }

    @Test func curatorWeightsSurviveAnImport() throws {
        let database = try scratch.baseDatabase()
        try database.write { db in
            (try db.execute(sql: "UPDATE stations SET weight = 3 WHERE station_cd = 1120101"), true)
        }
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "青森県八戸市尻内町,141.430854,40.508877,1891-09-01", with: "八戸市尻内町,141.430854,40.508877,1891-09-01")
        let report = try Importer(database).importSnapshot([snapshot.path])
        #expect(report.changes.map(\.summary) == ["UPDATE stations 1120101 八戸: address 青森県八戸市尻内町 → 八戸市尻内町"])
        #expect(try database.value("SELECT weight FROM stations WHERE station_cd = 1120101") == 3)
    }

    @Test func historyKeepsTheSupersededRow() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")
        try Importer(database).importSnapshot([snapshot.path])
        #expect(try database.value("SELECT station_name FROM stations_history WHERE key_id = '1120102' AND valid_to = 2") == "陸奥市川")
        #expect(try database.value("SELECT COUNT(*) FROM stations_history") == 1)
    }

    @Test func aRemovedConnectionComesBackAsInsert() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.removeLine("join.csv", containing: "99001,9900105,9900107")
        try Importer(database).importSnapshot([snapshot.path])
        let report = try Importer(database).importSnapshot([Fixtures.base.path])
        #expect(report.counts["connections"] == ["INSERT": 1, "UPDATE": 0, "DELETE": 0, "RESTORE": 0])
        #expect(try LogReader(database).log(LogFilter(key: "99001/9900105/9900107")).map(\.type) == [.insert, .delete, .insert])
    }

    @Test func diffAndDryRunWriteNothing() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")
        #expect(try Importer(database).diff([snapshot.path]).totalChanges == 1)
        let dryRun = try Importer(database).diff([snapshot.path], options: ImportOptions())
        #expect(dryRun.totalChanges == 1 && !dryRun.committed && dryRun.version == 2)
        #expect(try database.settledSHA256() == before)
        #expect(try database.dataVersion() == 1)
    }

    @Test func closingMoreThanFivePercentNeedsPermission() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.removeLine("station.csv", containing: "1120205,")
        try snapshot.removeLine("station.csv", containing: "1120206,")
        let before = try database.settledSHA256()
        #expect(throws: ImportError.massClosure(file: snapshot.file("station.csv"), table: "stations", closing: 2, open: 23)) {
            try Importer(database).importSnapshot([snapshot.file("station.csv")])
        }
        #expect(try database.settledSHA256() == before)
        let report = try Importer(database).importSnapshot([snapshot.file("station.csv")], options: ImportOptions(allowMassClose: true))
        #expect(report.count("stations", .delete) == 2)
    }

    /// The guards weigh against the rows before the version as the compare's scan counted them
    /// (no second scan): every row of the table once, the closed among them, against the master
    /// or against upstream's last file alike; an empty table has none.
    @Test func theCompareCountsTheRowsTheMassGuardsWeighAgainst() throws {
        let database = try scratch.baseDatabase()
        try database.write { db in
            try db.execute(sql: "UPDATE stations SET e_status = 2, close_ymd = '2020-01-01' WHERE station_cd IN (1120204, 1120205, 1120206)")
            return ((), true)
        }
        let files = try ImportSource.files(from: [try scratch.snapshot().path], database.declared)
        for comparison in [StreamingTableDiff.Comparison.master, .upstream] {
            let counted = try database.write { db -> ([MasterTable: StreamingTableDiff.RowCount], Bool) in
                let version = try PendingVersion(db, database.declared)
                return (try Dictionary(uniqueKeysWithValues: files.map { ($0.table, try version.stage($0, comparison: comparison).rowsBefore) }), false)
            }
            #expect(counted.count == 5)
            for (table, count) in counted {
                let rows: Int = try database.value("SELECT COUNT(*) FROM \(table.name)")!
                let closed: Int = table.closesByStatus ? try database.value("SELECT COUNT(*) FROM \(table.name) WHERE e_status = 2")! : 0
                #expect(count == StreamingTableDiff.RowCount(rows: rows, closedRows: closed), "\(table.name), against \(comparison)")
            }
            #expect(counted[.stations].map { $0.closedRows >= 3 && $0.openRows > 0 } == true)
        }
        let empty = try MasterDatabase.create(at: scratch.path("empty.sqlite"))
        let loaded = try empty.write { db -> (StreamingTableDiff.RowCount, Bool) in
            (try PendingVersion(db, empty.declared).stage(files.first { $0.table == .stations }!).rowsBefore, false)
        }
        #expect(loaded == StreamingTableDiff.RowCount())
    }

    @Test func connectionsToMissingStationsAreWarnedAndImported() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        let report = try Importer(database).importSnapshot([Fixtures.base.path])
        #expect(report.warnings.count == 1)
        #expect(report.warnings[0].contains("1 connection names a station or line that does not exist"))
        #expect(report.warnings[0].contains("line 16: 1002,100201,100202"))
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE line_cd = 1002") == 1)
    }

    /// The warnings are counted on a second connection that reads the master as it was before
    /// the import, and rows are never removed: a station the file leaves out is closed, not
    /// gone, and a connection to it is no warning; one to a code neither has is.
    @Test func aConnectionToAStationOnlyTheMasterStillHasIsNoWarning() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.removeLine("station.csv", containing: "1120205,")
        try snapshot.appendLine("join.csv", "11202,1120206,9999901")
        let report = try Importer(database).importSnapshot([snapshot.path])
        #expect(report.count("stations", .delete) == 1)
        #expect(report.count("connections", .insert) == 1)
        #expect(report.warnings.count == 1)
        #expect(report.warnings[0].contains("2 connections name a station or line that does not exist"))
        #expect(report.warnings[0].contains("line 16: 1002,100201,100202"))
        #expect(report.warnings[0].contains("11202,1120206,9999901"))
        #expect(!report.warnings[0].contains("1120205"))
    }

    @Test func aSecondWriterGetsAClearBusyErrorAndNothingChanges() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let impatient = try MasterDatabase.open(at: database.path, busyTimeout: 0.2)
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")
        let blocker = try DatabaseQueue(path: database.path)
        try blocker.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            #expect(throws: MasterDatabaseError.busy(database.path)) {
                try Importer(impatient).importSnapshot([snapshot.path])
            }
        }
        #expect(try database.settledSHA256() == before)
        #expect(try Importer(impatient).importSnapshot([snapshot.path]).totalChanges == 1)
    }
}
