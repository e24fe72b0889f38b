import Foundation
import GRDB
import StationCSV
import StationCheck
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationSchema
import StationSupport
import StationVersion
import Testing

/// A second source beside the primary (`import --source trainlcd`) on the real data: ekidata's
/// free snapshots and two TrainLCD/StationAPI commits (datasets/trainlcd/SOURCE.md).
@Suite struct SecondSourceTests {
    let scratch = Scratch()
    static let trainlcd2025June = Fixtures.repository.appendingPathComponent("datasets/trainlcd/2025-06-28").path
    static let trainlcd2025December = Fixtures.repository.appendingPathComponent("datasets/trainlcd/2025-12-13").path

    func master() throws -> MasterDatabase { try MasterDatabase.create(at: scratch.path("master-\(UUID().uuidString.prefix(6)).sqlite")) }

    @discardableResult
    func fill(_ database: MasterDatabase, _ folder: String) throws -> ChangeReport {
        var options = ImportOptions(describeLimit: 0)
        options.source = .trainlcd
        return try Importer(database).importSnapshot([folder], options: options)
    }

    func value<T: DatabaseValueConvertible>(_ database: MasterDatabase, _ sql: String, _ arguments: StatementArguments = []) throws -> T? {
        try database.read { try T.fetchOne($0, sql: sql, arguments: arguments) }
    }

    /// A curator's `edit` of one column of one station, as a batch of its whole row.
    func edit(_ database: MasterDatabase, station: Int64, _ column: String, _ value: String, memo: String) throws {
        let row = try #require(try database.read { try Row.fetchOne($0, sql: "SELECT * FROM stations WHERE station_cd = ?", arguments: [station]) })
        var values: [String: DatabaseValueConvertible?] = [:]
        for (name, stored) in row { values[name] = stored }
        values[column] = value
        var batch = ChangeBatch(database.declared)
        batch.put(.stations, values)
        try Curator(database).commit(batch, memo: memo)
    }

    /// A TrainLCD file's lines, without their CRLF (to Swift one `Character`: `split` on "\n" finds none).
    static func lines(of path: String) throws -> [String] {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        return bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
    }

    /// `lines` written with CRLF, as TrainLCD publishes them.
    static func write(_ lines: [String], to path: String) throws {
        try Data(lines.map { $0 + "\r\n" }.joined().utf8).write(to: URL(fileURLWithPath: path))
    }

    static let danglingConnections = """
        SELECT printf('%d/%d/%d', line_cd, station_cd1, station_cd2) FROM connections c
        WHERE NOT EXISTS (SELECT 1 FROM stations s WHERE s.station_cd = c.station_cd1)
           OR NOT EXISTS (SELECT 1 FROM stations s WHERE s.station_cd = c.station_cd2)
        ORDER BY 1
        """

    @Test func trainLCDFillsWhatEkidataLacksAndKeepsEkidatasValues() throws {
        let database = try master()
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        let danglingBefore = try database.read { try String.fetchAll($0, sql: Self.danglingConnections) }
        #expect(danglingBefore.count == 146)
        #expect(try value(database, "SELECT COUNT(*) FROM stations WHERE station_name_k IS NULL") == 10865)

        let report = try fill(database, Self.trainlcd2025June)
        #expect(report.committed && report.version == 2)
        #expect(report.counts["stations"]?["INSERT"] == 278)
        // The Shinkansen stations are rows, read and spelled: 掛川 on the Tōkaidō Shinkansen.
        #expect(try value(database, "SELECT station_name || ' ' || station_name_k || ' ' || station_name_r FROM stations WHERE station_cd = 100209") == "掛川 カケガワ Kakegawa")
        // Of the join file's 146 connections to stations it lacked, two still name a station
        // neither source has (TrainLCD dropped 海部's line and 新大宮's).
        let danglingAfter = try database.read { try String.fetchAll($0, sql: Self.danglingConnections) }
        #expect(danglingAfter == ["11804/1180429/1180430", "28007/2800701/2800702"])
        #expect(try value(database, "SELECT COUNT(*) FROM stations WHERE station_name_k IS NULL") == 1)
        // ekidata's values stand where TrainLCD's differ (石狩太美 was renamed 太美 in 2022), found by check.
        #expect(try value(database, "SELECT station_name FROM stations WHERE station_cd = 1111212") == "石狩太美")
        let findings = try Checker(database).check().findings.filter { $0.rule == .sourceDisagrees }
        let renamed = try #require(findings.first { $0.key == "1111212" })
        #expect(renamed.message.contains("station_name is \"石狩太美\" as the primary has it, trainlcd has \"太美\""))
        #expect(findings.count > 500)
        // Published as ekidata writes it: e_status 3 is in service, a colour has no '#', an
        // address with its prefecture in front is the same address.
        #expect(try value(database, "SELECT e_status FROM stations WHERE station_cd = 100701") == 0)
        #expect(try value(database, "SELECT line_color_c FROM lines WHERE line_cd = 1002") == "0000FF")
        #expect(try value(database, "SELECT COUNT(*) FROM source_disagreements WHERE column_name = 'address' AND key_id = '1110101'") == 0)

        // A curator who takes TrainLCD's name settles the finding.
        try edit(database, station: 1111212, "station_name", "太美", memo: "renamed 2022-03-12")
        #expect(try !Checker(database).check().findings.contains { $0.rule == .sourceDisagrees && $0.key == "1111212" })

        // Each change names where it came from: the primary's snapshot, the fill's, or nobody's (a curator's).
        let story = try LogReader(database).story(key: "1111212", table: "stations")
        #expect(story.map { $0.source?.description } == ["ekidata 2021-03-12", "trainlcd 2025-06-28", nil])
        #expect(try LogReader(database).story(key: "100209", table: "stations").map { $0.source?.description } == ["trainlcd 2025-06-28"])

        let sources = try SourceLedger(database).sources()
        #expect(sources.map(\.name) == ["ekidata", "trainlcd"])
        #expect(sources.map(\.role) == ["primary", "fills"])
        #expect(sources[1].tables.first { $0.table == "stations" }?.rows == 278)
        #expect(sources[1].disagreements == (try value(database, "SELECT COUNT(*) FROM source_disagreements") ?? -1))
        #expect(sources[1].disagreements >= findings.count)
    }

    /// ekidata 2019, TrainLCD's June commit, ekidata 2021 (a re-import of the primary), a curator's
    /// edit of a filled romaji, TrainLCD's December commit; then each release verified on sqlite3.
    @Test func aReimportOfEkidataKeepsTheFillAndTheNextCommitMergesThreeWays() throws {
        let database = try master()
        let folder = scratch.path("release")
        try Importer(database).importSnapshot([Fixtures.ekidata2019])
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        try fill(database, Self.trainlcd2025June)
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        // 高輪ゲートウェイ (2020) came from TrainLCD first; ekidata 2021 brought it without a reading.
        #expect(try value(database, "SELECT station_name_k FROM stations WHERE station_cd = 1130230") == "タカナワゲートウェイ")
        #expect(try value(database, "SELECT COUNT(*) FROM stations WHERE station_name_k IS NULL") == 2)
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))

        try edit(database, station: 1120608, "station_name_r", "Pureipia Shirahama", memo: "as signed at the station")
        let report = try fill(database, Self.trainlcd2025December)
        #expect(report.counts["stations"]?["UPDATE"] == 62)
        #expect(try value(database, "SELECT station_name_r FROM stations WHERE station_cd = 1120608") == "Pureipia Shirahama")
        #expect(try value(database, "SELECT station_name_r FROM stations WHERE station_cd = 1123119") == "Nihommatsu")
        #expect(report.warnings.contains { $0.contains("stations 1120608 station_name_r: kept the curator's \"Pureipia Shirahama\"") })
        // The version's log names the source and its snapshot.
        #expect(try value(database, "SELECT memo FROM versions WHERE version = ?", [report.version]) == "trainlcd 2025-12-13")

        let release = try Publisher(database).release(ReleaseOptions(outputFolder: folder))
        #expect(release.verification?.failures == [])
        // Every older version's phone reaches the newest by its delta on sqlite3, and by every
        // path (delta, full download, app update) with the same user records.
        #expect(release.verification?.deltasPassed == release.released.version - 1)
        #expect(release.verification?.pathsPassed.count == 1)

        // The June commit again, after December's: refused as the primary's older snapshot is.
        let older = try #require(throws: ImportError.self) { try fill(database, Self.trainlcd2025June) }
        guard case let .olderSnapshot(file, _, date, newest, _) = older else { Issue.record("\(older)"); return }
        #expect(file.hasPrefix(Self.trainlcd2025June) && date == "2025-06-28" && newest == "2025-12-13")
        #expect(older.localizedDescription.contains("--allow-older"))
    }

    @Test func aStationOnlyTrainLCDCarriedClosesWhenItDropsIt() throws {
        let database = try master()
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        try fill(database, Self.trainlcd2025June)
        let copy = scratch.path("trainlcd-without-kakegawa")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.trainlcd2025December) {
            var lines = try Self.lines(of: Self.trainlcd2025December + "/" + name)
            if name == "3!stations.csv" { lines.removeAll { $0.hasPrefix("100209,") } }
            try Self.write(lines, to: copy + "/" + name)
        }
        let report = try fill(database, copy)
        #expect(report.committed)
        #expect(try value(database, "SELECT e_status FROM stations WHERE station_cd = 100209") == MasterTable.closedStatus)
        // ekidata's own stations are not TrainLCD's to close.
        #expect(try value(database, "SELECT COUNT(*) FROM stations WHERE e_status = 2") ?? 0 < 700)
    }

    @Test func aSourceFileTheProfileDoesNotDescribeIsRefusedNamingItsFileLineAndColumn() throws {
        let database = try master()
        #expect(throws: ImportError.noPrimary(source: "trainlcd")) { try fill(database, Self.trainlcd2025June) }
        try Importer(database).importSnapshot([Fixtures.ekidata2021])

        func copy(_ name: String, editing edit: (inout [String]) -> Void) throws -> String {
            let folder = scratch.path("trainlcd-\(name)-\(UUID().uuidString.prefix(6))")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for file in try FileManager.default.contentsOfDirectory(atPath: Self.trainlcd2025June) {
                var lines = try Self.lines(of: Self.trainlcd2025June + "/" + file)
                if file == "3!stations.csv" { edit(&lines) }
                try Self.write(lines, to: folder + "/" + file)
            }
            return folder
        }
        let extraColumn = try copy("extra") { lines in
            lines = lines.enumerated().map { $0 == 0 ? $1 + ",platforms" : $1 + ",2" }
        }
        let unknown = try #require(throws: InputError.self) { try fill(database, extraColumn) }
        #expect(unknown.file == extraColumn + "/3!stations.csv" && unknown.line == 1)
        #expect(unknown.message.hasPrefix("unknown column \"platforms\" in field 24 of a stations header of source trainlcd"))

        let badStatus = try copy("status") { lines in
            var fields = lines[2].components(separatedBy: ",")
            fields[21] = "7"
            lines[2] = fields.joined(separator: ",")
        }
        let outside = try #require(throws: InputError.self) { try fill(database, badStatus) }
        #expect(outside.file == badStatus + "/3!stations.csv" && outside.line == 3)
        #expect(outside.message.hasPrefix("e_status 7 is out of range"))

        let twice = try copy("twice") { lines in lines.append(lines[1]) }
        let repeated = try #require(throws: InputError.self) { try fill(database, twice) }
        #expect(repeated.file == twice + "/3!stations.csv" && repeated.line == 11144)  // the header, 11,142 stations, the repeat
        #expect(repeated.message == "station_cd 100201 again (first on line 2; expected one row per key)")
        #expect(try database.dataVersion() == 1)
    }
}
