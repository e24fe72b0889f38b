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
import Testing

/// Text a curator may meet (a NUL byte, a lone CR, a 4-byte emoji, U+FEFF and U+2028) goes
/// through every write path (import, add, edit, close, restore, split, a plan, a waiver reason)
/// and reaches the master, the client database and the delta byte for byte.
@Suite struct TextRoundTripTests {
    let scratch = Scratch()

    /// The awkward values, each with the hex of its UTF-8 bytes.
    static let nul = "函\u{0}館"                   // E587BD 00 E9A4A8
    static let loneCR = "陸奥\r市川"
    static let emoji = "🚃本八戸"
    static let invisible = "\u{FEFF}小中野\u{2028}駅"

    static func hex(_ text: String) -> String { text.utf8.map { String(format: "%02X", $0) }.joined() }

    func hexOf(_ column: String, station: Int64, in path: String) throws -> String? {
        let result = try sqlite3Query("SELECT hex(\(column)) FROM stations WHERE station_cd = \(station)", database: path)
        return result.isEmpty ? nil : result
    }

    /// Every station whose text the test sets, with what the column must hold at the end.
    func expectations() -> [(station: Int64, column: String, text: String)] {
        [
            (1120101, "station_name", Self.nul),        // imported, then edited (weight) and put in a plan
            (1120102, "station_name", Self.loneCR),     // imported, closed, restored
            (1120103, "station_name", Self.emoji),      // imported, split
            (1120104, "station_name", Self.invisible),  // imported
            (1120101, "address", Self.invisible + Self.nul),  // edited in a plan
            (1120105, "address", Self.emoji + "\r" + Self.nul),  // edited
            (9999001, "station_name", Self.emoji),      // the split's new station keeps the old name
            (9999002, "station_name", Self.nul + Self.loneCR),   // added
        ]
    }

    @Test func awkwardTextSurvivesEveryWritePathIntoMasterClientAndDelta() throws {
        // Import: the awkward names arrive from a CSV file (a lone CR needs quotes in CSV).
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "1120101,1120101,八戸,", with: "1120101,1120101,\"\(Self.nul)\",")
        try snapshot.replace("station.csv", "1120102,1120102,陸奥市川,", with: "1120102,1120102,\"\(Self.loneCR)\",")
        try snapshot.replace("station.csv", "1120103,1120103,下田,", with: "1120103,1120103,\(Self.emoji),")
        try snapshot.replace("station.csv", "1120104,1120104,向山,", with: "1120104,1120104,\(Self.invisible),")
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([snapshot.path], options: ImportOptions(memo: "import"))
        let releases = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: releases, version: 1, verify: false))

        // Curated operations, one version each, the memo awkward too.
        func apply(_ operation: PlanOperation) throws {
            try Curator(database).apply([LocatedOperation(operation)], memo: "memo " + Self.nul)
        }
        try apply(.edit(table: .stations, key: ["1120101"], values: ["weight": "3"]))
        try apply(.edit(table: .stations, key: ["1120105"], values: ["address": Self.emoji + "\r" + Self.nul]))
        try apply(.close(table: .stations, key: ["1120102"], date: "2024-04-01", cascade: false))
        try apply(.restore(table: .stations, key: ["1120102"]))
        try apply(.split(old: 1120103, new: 9999001, line: 11201, values: [:], connectTo: []))
        try apply(.add(table: .stations, values: [
            "station_cd": "9999002", "station_name": Self.nul + Self.loneCR, "line_cd": "11201", "e_status": "0",
        ]))
        // A plan: the JSON escapes are decoded to the same bytes.
        let plan = scratch.path("plan.jsonl")
        try """
            {"plan": "awkward", "memo": "plan memo \\u0000 kept"}
            {"op": "edit", "table": "stations", "key": 1120101, "set": {"address": "\\ufeff小中野\\u2028駅函\\u0000館", "weight": 4}}
            """.write(toFile: plan, atomically: true, encoding: .utf8)
        try Curator(database).apply(planAt: plan)
        try Checker(database).waive(rule: "duplicate-name-on-line", table: "stations", key: "1120101", reason: "reason \(Self.nul) \(Self.loneCR) kept", ahead: true)

        // The master holds every value byte for byte, and so do the memos and the waiver.
        let master = scratch.path("master.sqlite")
        for (station, column, text) in expectations() {
            #expect(try hexOf(column, station: station, in: master) == Self.hex(text), "master \(station) \(column)")
        }
        let newest = try LogReader(database).status().version
        #expect(try sqlite3Query("SELECT hex(memo) FROM versions WHERE version = 2", database: master) == Self.hex("memo " + Self.nul))
        #expect(try sqlite3Query("SELECT DISTINCT hex(memo) FROM updates WHERE user_version = 2", database: master) == Self.hex("memo " + Self.nul))
        #expect(try sqlite3Query("SELECT hex(memo) FROM versions WHERE version = \(newest)", database: master) == Self.hex("plan memo \u{0} kept"))
        #expect(try sqlite3Query("SELECT hex(reason) FROM waivers", database: master) == Self.hex("reason \(Self.nul) \(Self.loneCR) kept"))

        // The release's client database, and the delta from version 1 applied by the real sqlite3.
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: releases))
        #expect(result.verification?.failures == [])
        let client = (releases as NSString).appendingPathComponent(result.released.database.path)
        let delta = try #require(result.released.deltas.first { $0.from == 1 })
        let phone = try scratch.phone(from: (releases as NSString).appendingPathComponent("1/stations.sqlite"), name: "phone.sqlite", completions: [])
        let applied = try scratch.apply(delta: (releases as NSString).appendingPathComponent(delta.file.path), to: phone)
        #expect(applied.status == 0, "\(applied.error)")
        for (station, column, text) in expectations() {
            #expect(try hexOf(column, station: station, in: client) == Self.hex(text), "client \(station) \(column)")
            #expect(try hexOf(column, station: station, in: phone) == Self.hex(text), "delta \(station) \(column)")
        }
    }
}

/// Every text column has a maximum length (`MasterTable.TextLimit`), refused on every write path.
@Suite struct TextLimitTests {
    let scratch = Scratch()

    @Test func anEditLongerThanTheColumnsLimitIsRefusedAndChangesNothing() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let long = String(repeating: "駅", count: 10_000)
        #expect(throws: InputError(.plan, file: "command line", line: nil, message:
            "station_name is 30000 bytes long (expected at most 300 bytes of UTF-8, about 100 Japanese characters; shorten it)")) {
            try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120101"], values: ["station_name": long]))], memo: "x")
        }
        #expect(throws: InputError.self) {
            try Curator(database).apply([LocatedOperation(.add(table: .companies, values: [
                "company_cd": "990", "company_name": "x", "company_url": "https://example.com/" + String(repeating: "a", count: 2_100), "e_status": "0",
            ]))], memo: "x")
        }
        #expect(try database.settledSHA256() == before)
    }

    @Test func aPlanLineLongerThanTheLimitNamesItsLine() throws {
        let database = try scratch.baseDatabase()
        let plan = scratch.path("plan.jsonl")
        try """
            {"plan": "too long"}
            {"op": "split", "old": 1120101, "new": 9999001, "line": 11201, "set": {"station_name": "\(String(repeating: "あ", count: 101))"}}
            """.write(toFile: plan, atomically: true, encoding: .utf8)
        #expect(throws: InputError(.plan, file: plan, line: 2, message:
            "station_name is 303 bytes long (expected at most 300 bytes of UTF-8, about 100 Japanese characters; shorten it)")) {
            try Curator(database).apply(planAt: plan)
        }
    }

    @Test func theLongestRealValuesAreWellWithinTheLimits() throws {
        // The 2021 ekidata's longest name is 63 bytes and its longest address 70.
        let database = try MasterDatabase.create(at: scratch.path("real.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021], options: ImportOptions(memo: "real"))
        for table in MasterTable.all {
            for column in table.columns where column.kind == .text {
                let longest: Int = try database.value("SELECT COALESCE(MAX(length(CAST(\(column.name) AS BLOB))), 0) FROM \(table.name)") ?? 0
                let limit = try #require(column.textLimit).rawValue
                #expect(longest * 4 <= limit, "\(table.name).\(column.name): \(longest) bytes")
            }
        }
    }
}
