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

/// Curated work survives the next upstream import (DOMAIN.md, "Upstream and curators"): the
/// three-way import, its conflicts and their decisions, provisional rows adopted, and no import
/// backwards; on the bundled ekidata files.
@Suite struct ThreeWayImportTests {
    let scratch = Scratch()

    /// 2019-12-27 (v1) and 2021-03-12 (v2), then a curator's closing date for 静内海水浴場 (v3).
    func curatedMaster() throws -> MasterDatabase {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2019], options: ImportOptions(memo: "2019"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021], options: ImportOptions(memo: "2021"))
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1111116"], values: ["close_ymd": "2017-07-05"]))],
                           memo: "closing date from the operator")
        return database
    }

    /// The next snapshot: 2021's files dated 2021-04-01, with 静内海水浴場's closing date as `closeDate`
    /// (ekidata's unknown date by default) and 陸奥市川 renamed.
    func nextSnapshot(closeDate: String = "0000-00-00", name: String = "next") throws -> String {
        try UpstreamSnapshots.from2021(into: scratch.path(name), date: "20210401") { file, line in
            guard file.hasPrefix("station") else { return line }
            if line.hasPrefix("1111116,") { return line.replacingOccurrences(of: ",0000-00-00,0000-00-00,2,", with: ",0000-00-00,\(closeDate),2,") }
            return line.replacingOccurrences(of: ",陸奥市川,", with: ",陸奥市川駅,")
        }
    }

    func closeDate(_ database: MasterDatabase) throws -> String? {
        try database.value("SELECT close_ymd FROM stations WHERE station_cd = 1111116")
    }

    @Test func aCuratedFixSurvivesTheSameAndTheNextSnapshot() throws {
        let database = try curatedMaster()
        let again = try Importer(database).importSnapshot([Fixtures.ekidata2021])
        #expect(again.totalChanges == 0 && !again.committed)
        #expect(again.mergeNotes.map(\.description) == ["stations 1111116 close_ymd: kept 2017-07-05 from v3 (the file says NULL)"])
        #expect(try closeDate(database) == "2017-07-05")

        let next = try Importer(database).importSnapshot([try nextSnapshot()], options: ImportOptions(memo: "2021-04-01"))
        #expect(next.committed && next.version == 4 && next.totalChanges == 1)
        #expect(next.changes.map(\.summary) == ["UPDATE stations 1120102 陸奥市川駅: station_name 陸奥市川 → 陸奥市川駅"])
        #expect(try closeDate(database) == "2017-07-05")
        // The log says where the kept value came from.
        #expect(try LogReader(database).mergeNotes(key: "1111116").map(\.description) == ["stations 1111116 close_ymd: kept 2017-07-05 from v3 (the file says NULL)"])
        #expect(try LogReader(database).mergeNotes(key: "1111116").first?.version == 4)
        // Upstream catching up with the curator is no conflict.
        let caughtUp = try Importer(database).importSnapshot([try nextSnapshot(closeDate: "2017-07-05", name: "caught-up")])
        #expect(caughtUp.conflicts.isEmpty && caughtUp.totalChanges == 0)
    }

    /// A later version that changes another column of the row is not where the kept value came
    /// from: the note names the version that wrote the column, in the report, the log and a
    /// conflict alike.
    @Test func aKeptValueNamesTheVersionThatWroteItsColumn() throws {
        let database = try curatedMaster()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1111116"], values: ["weight": "4"]))], memo: "weight only")
        #expect(try database.value("SELECT MAX(user_version) FROM updates") as Int? == 4)

        let again = try Importer(database).importSnapshot([Fixtures.ekidata2021])
        #expect(again.mergeNotes.map(\.description) == ["stations 1111116 close_ymd: kept 2017-07-05 from v3 (the file says NULL)"])

        let next = try Importer(database).importSnapshot([try nextSnapshot()], options: ImportOptions(memo: "2021-04-01"))
        #expect(next.version == 5)
        #expect(try LogReader(database).mergeNotes(key: "1111116").map(\.description) == ["stations 1111116 close_ymd: kept 2017-07-05 from v3 (the file says NULL)"])
        #expect(try LogReader(database).mergeNotes(key: "1111116").first?.oursVersion == 3)
        // A damaged note is told, never read as NULL.
        let copy = try MasterDatabase.open(at: try database.backup(to: scratch.path("damaged.sqlite")).path)
        try copy.write { db in
            try db.execute(sql: "UPDATE merge_notes SET ours = '{\"broken' WHERE key_id = '1111116'")
            return ((), true)
        }
        #expect(throws: MergeNoteError.unreadable(version: 5, table: "stations", key: "1111116", column: "close_ymd", field: "ours",
                                                  text: "{\"broken")) { try LogReader(copy).mergeNotes(key: "1111116") }

        #expect {
            try Importer(database).importSnapshot([try nextSnapshot(closeDate: "2017-07-01", name: "conflicting")])
        } throws: { error in
            guard case let ImportError.undecided(conflicts, _) = error else { return false }
            return conflicts.map(\.description)
                == ["stations 1111116 close_ymd: base NULL; ours 2017-07-05 (v3, \"closing date from the operator\"); theirs 2017-07-01"]
        }
    }

    @Test func aConflictRefusesWithTheMasterByteIdentical() throws {
        let database = try curatedMaster()
        let next = try nextSnapshot(closeDate: "2017-07-01")
        let before = try database.settledSHA256()
        #expect {
            try Importer(database).importSnapshot([next])
        } throws: { error in
            guard case let ImportError.undecided(conflicts, adoptions) = error else { return false }
            return adoptions.isEmpty && conflicts.map(\.description)
                == ["stations 1111116 close_ymd: base NULL; ours 2017-07-05 (v3, \"closing date from the operator\"); theirs 2017-07-01"]
        }
        #expect(try database.settledSHA256() == before)
        // A diff lists the conflict, undecided, and keeps ours in its preview.
        let diff = try Importer(database).diff([next])
        #expect(diff.conflicts.map(\.decision) == [nil])
        #expect(diff.changes.map(\.key) == ["1120102"])
    }

    @Test func eachWayOfDecidingCommitsExactlyTheDecidedValues() throws {
        let database = try curatedMaster()
        // Two conflicts: the closing date, and 陸奥市川's reading, which the curator set as well.
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["station_name_k": "ムツイチカワ"]))], memo: "reading")
        let next = try UpstreamSnapshots.from2021(into: scratch.path("next"), date: "20210401") { file, line in
            guard file.hasPrefix("station") else { return line }
            if line.hasPrefix("1111116,") { return line.replacingOccurrences(of: ",0000-00-00,0000-00-00,2,", with: ",0000-00-00,2017-07-01,2,") }
            if line.hasPrefix("1120102,") { return line.replacingOccurrences(of: ",陸奥市川,,", with: ",陸奥市川,ムツイチガワ,") }
            return line
        }
        let copies = try (1...3).map { index -> MasterDatabase in
            let path = scratch.path("copy\(index).sqlite")
            _ = try database.settledSHA256()
            try FileManager.default.copyItem(atPath: database.path, toPath: path)
            return try MasterDatabase.open(at: path)
        }
        func values(_ copy: MasterDatabase) throws -> [String?] {
            [try copy.value("SELECT close_ymd FROM stations WHERE station_cd = 1111116"),
             try copy.value("SELECT station_name_k FROM stations WHERE station_cd = 1120102")]
        }
        try Importer(copies[0]).importSnapshot([next], options: ImportOptions(decisions: MergeDecisions(prefer: .theirs)))
        #expect(try values(copies[0]) == ["2017-07-01", "ムツイチガワ"])
        try Importer(copies[1]).importSnapshot([next], options: ImportOptions(decisions: MergeDecisions(prefer: .ours)))
        #expect(try values(copies[1]) == ["2017-07-05", "ムツイチカワ"])
        // One each way from a resolution file, as `diff --conflicts` writes it and a curator fills it in.
        let skeleton = try MergeDecisions.skeleton(conflicts: try Importer(copies[2]).diff([next]).conflicts, adoptions: [])
        let filled = skeleton.split(separator: "\n").map { line -> String in
            let take = line.contains("close_ymd") ? "\"theirs\"" : "\"ours\""
            return line.replacingOccurrences(of: "\"take\":null", with: "\"take\":\(take)")
        }.joined(separator: "\n")
        let resolution = scratch.path("decisions.jsonl")
        try filled.write(toFile: resolution, atomically: true, encoding: .utf8)
        var decisions = MergeDecisions()
        decisions = try decisions.adding(resolutionFile: resolution)
        let report = try Importer(copies[2]).importSnapshot([next], options: ImportOptions(decisions: decisions))
        #expect(try values(copies[2]) == ["2017-07-01", "ムツイチカワ"])
        #expect(report.mergeNotes.map(\.outcome) == [.theirs, .ours])
        #expect(try LogReader(copies[2]).mergeNotes(key: "1120102").map(\.outcome) == [.ours])
    }

    @Test func aResolutionFileIsCheckedLineByLine() throws {
        let database = try curatedMaster()
        let next = try nextSnapshot(closeDate: "2017-07-01")
        let file = scratch.path("bad.jsonl")
        func refusal(_ text: String) throws -> String {
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            var decisions = MergeDecisions()
            do {
                decisions = try decisions.adding(resolutionFile: file)
                try Importer(database).importSnapshot([next], options: ImportOptions(decisions: decisions))
            } catch let error as InputError where error.input == .resolution {
                return error.localizedDescription
            }
            return "accepted"
        }
        #expect(try refusal("# decisions\n{\"table\": \"stations\", \"key\": \"1111116\", \"column\": \"close_ymd\", \"take\": \"mine\"}\n")
            == "\(file):2: \"take\" is \"mine\" (expected \"ours\" or \"theirs\")")
        #expect(try refusal("{\"table\": \"stations\", \"key\": 1111116, \"column\": \"close_ymd\", \"take\": null}\n")
            == "\(file):1: \"take\" is missing or null (expected \"ours\" or \"theirs\")")
        #expect(try refusal("{\"table\": \"stations\", \"key\": 1111116, \"column\": \"close_ymd\", \"take\": \"ours\"}\n{\"table\": \"stations\", \"key\": 1111117, \"column\": \"close_ymd\", \"take\": \"ours\"}\n")
            == "\(file):2: stations 1111117 close_ymd is no conflict of this merge (expected one that `diff --conflicts` lists)")
        #expect(try refusal("not json\n") .hasPrefix("\(file):1: not a decision"))
        #expect(try closeDate(database) == "2017-07-05")
    }

    /// The Hokuriku plan (v2) records 2024-03-16 with provisional codes; upstream's snapshot of the
    /// same day (v3) records it under its own.
    @Test func theHokurikuPlanIsAdoptedAndPhonesKeepTheirRecordsOnEveryPath() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021], options: ImportOptions(memo: "2021"))
        let folder = scratch.path("release")
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.skipChecks = true
        try Publisher(database).release(options)
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        try Publisher(database).release(options)
        let upstream = try UpstreamSnapshots.hokuriku2024(into: scratch.path("upstream"))

        let before = try database.settledSHA256()
        #expect {
            try Importer(database).importSnapshot([upstream])
        } throws: { error in
            guard case let ImportError.undecided(conflicts, adoptions) = error else { return false }
            // The columns that name a provisional code are no conflict once the pairs are known.
            return conflicts.isEmpty && adoptions.map(\.description) == [
                "companies 301 ハピラインふくい → 303 ハピラインふくい", "lines 99440 ハピラインふくい線 → 99428 ハピラインふくい線",
                "stations 9944001 敦賀 → 9942801 敦賀", "stations 9944019 大聖寺 → 9942819 大聖寺",
            ] && adoptions.allSatisfy { $0.version == 2 }
        }
        #expect(try database.settledSHA256() == before)

        // `--adopt` decides every pair: a diff shows what it would do.
        let adoptAll = try Importer(database).diff([upstream], options: ImportOptions(decisions: MergeDecisions(adoptAll: true)))
        #expect(adoptAll.adoptions.allSatisfy { $0.adopted == true } && adoptAll.count("stations", .duplicate) == 2)
        // Decided pair by pair, in the resolution file `diff --conflicts` writes.
        let skeleton = try MergeDecisions.skeleton(conflicts: [], adoptions: try Importer(database).diff([upstream]).adoptions)
        #expect(skeleton.split(separator: "\n").count == 5)
        let resolution = scratch.path("adopt.jsonl")
        try skeleton.replacingOccurrences(of: "\"take\":null", with: "\"take\":\"adopt\"").write(toFile: resolution, atomically: true, encoding: .utf8)
        var decisions = MergeDecisions()
        decisions = try decisions.adding(resolutionFile: resolution)
        #expect(decisions.adoptions.count == 4 && decisions.adoptions.values.allSatisfy { $0 })
        let report = try Importer(database).importSnapshot([upstream], options: ImportOptions(memo: "ekidata 2024-03-16", decisions: decisions))
        #expect(report.committed && report.conflicts.isEmpty)
        #expect(report.count("stations", .duplicate) == 2)
        #expect(try database.read { try UpdateLog.splits($0, after: 2, through: 3) }.map { "\($0.old)→\($0.new)" } == ["9944001→9942801", "9944019→9942819"])
        let open: [Int64] = try database.read { try Int64.fetchAll($0, sql: """
            SELECT station_cd FROM stations WHERE station_name = '敦賀' AND e_status <> 2 ORDER BY station_cd
            """) }
        #expect(open == [1141512, 1142224, 9942801], "one 敦賀 for JR West's two lines, one for Hapi-Line: never two Hapi-Line 敦賀")
        #expect(try database.value("SELECT e_status FROM companies WHERE company_cd = 301") == 2)
        #expect(try database.value("SELECT e_status FROM lines WHERE line_cd = 99440") == 2)
        #expect(try database.value("SELECT close_ymd FROM stations WHERE station_cd = 9944001") == "2024-03-16")
        #expect(try database.value("SELECT COUNT(*) FROM stations WHERE line_cd = 99428 AND e_status <> 2") == 19)
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE line_cd = 99440") == 0)
        #expect(!report.suggestions.contains { $0.old == 9944001 || $0.old == 9944019 })
        // Nor by `suggest` afterwards: an adopted station's records moved once, to upstream's code.
        #expect(!(try Checker(database).suggestSplits()).contains { $0.old == 9944001 || $0.old == 9944019 })

        // A phone at version 2 that visited the provisional 敦賀 keeps the visit on upstream's, by all
        // three paths; `verify` checks every older version the same way.
        options.verify = true
        let result = try Publisher(database).release(options)
        #expect(result.verification?.failures == [])
        #expect(result.verification?.passed.last == "delta, full download, app update: user records identical for versions 1…2")
        let phone = try scratch.phone(from: scratch.path("release/2/stations.sqlite"), name: "phone.sqlite",
                                      completions: [(9944001, "2024-04-01", "Hapi-Line", 1)])
        let delta = try #require(result.released.downloads.first { $0.from == 2 })
        #expect(try scratch.apply(delta: (folder as NSString).appendingPathComponent(delta.path), to: phone).status == 0)
        #expect(try completions(ofDatabase: phone) == [9944001: ["2024-04-01", "Hapi-Line", "1"], 9942801: ["2024-04-01", "Hapi-Line", "1"]])
    }

    /// Upstream records the event with a station of its own, 西松任 9942602, between 西金沢 and
    /// 金沢, which the plan connected directly, and gives its new stations no opening date.
    /// Adopting the event removes the plan's connection for upstream's two, and closes the
    /// provisional stations on the plan's day.
    /// A provisional station alone: no row of upstream's file is held apart, and its own station
    /// of the same name beside it is still offered for adoption (the merge is not skipped for
    /// having no row of the file to merge).
    @Test func aProvisionalStationIsOfferedWhenNothingElseIsHeldApart() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021], options: ImportOptions(memo: "2021"))
        try Curator(database).apply([LocatedOperation(.add(table: .stations, values: [
            "station_cd": "9911101", "station_g_cd": "9911101", "station_name": "函館新駅", "line_cd": "11101", "pref_cd": "1",
            "lon": "140.7300", "lat": "41.7750", "e_status": "0",
        ]))], memo: "opens next month")
        let upstream = try UpstreamSnapshots.from2021(into: scratch.path("upstream"), date: "20210401", appended: [
            "station20210401free.csv": ["1110199,1110199,函館新駅,,,11101,1,,,140.730100,41.775100,0000-00-00,0000-00-00,0,1110199"],
        ])
        let before = try database.settledSHA256()
        #expect {
            try Importer(database).importSnapshot([upstream])
        } throws: { error in
            guard case let ImportError.undecided(conflicts, adoptions) = error else { return false }
            return conflicts.isEmpty && adoptions.map(\.description) == ["stations 9911101 函館新駅 → 1110199 函館新駅"]
        }
        #expect(try database.settledSHA256() == before)
        let adopted = try Importer(database).importSnapshot([upstream], options: ImportOptions(decisions: MergeDecisions(adoptAll: true)))
        #expect(adopted.committed && adopted.count("stations", .duplicate) == 1)
    }

    @Test func adoptingAnEventCoversItsConnectionsAndDates() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021], options: ImportOptions(memo: "2021"))
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        let upstream = try UpstreamSnapshots.hokuriku2024(into: scratch.path("upstream"), stationBetween: true, openDates: false)
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE line_cd = 99426 AND station_cd1 = 1141542 AND station_cd2 = 9942601") == 1)

        let preview = try Importer(database).diff([upstream], options: ImportOptions(decisions: MergeDecisions(adoptAll: true)))
        let removed = preview.mergeNotes.filter { $0.table == "connections" }.map(\.description)
        #expect(removed == ["connections 99426/1141542/9942601: provisional, removed for upstream's connections of line 99426"])
        #expect(preview.count("connections", .delete) >= 1)
        // Left undecided, nothing of the event is touched: the diff keeps the plan's connection.
        #expect(try Importer(database).diff([upstream]).mergeNotes.filter { $0.table == "connections" }.isEmpty)

        let report = try Importer(database).importSnapshot([upstream], options: ImportOptions(decisions: MergeDecisions(adoptAll: true)))
        #expect(report.committed)
        let fileConnections = try String(contentsOfFile: (upstream as NSString).appendingPathComponent("join20240316.csv"), encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("99426,") }.count
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE line_cd = 99426") == fileConnections)
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE line_cd = 99426 AND station_cd1 = 1141542 AND station_cd2 = 9942601") == 0)
        // Upstream gave no opening date: the plan closed 金沢 1141543 on 2024-03-16, its event's day.
        #expect(try database.value("SELECT close_ymd FROM stations WHERE station_cd = 9944001") == "2024-03-16")
        #expect(try database.value("SELECT close_ymd FROM stations WHERE station_cd = 9944019") == "2024-03-16")
        #expect(try database.read { try MergeNote.notes(table: "connections", key: "99426/1141542/9942601", $0) }.map(\.outcome) == [.adopted])
    }

    @Test func anOlderSnapshotIsRefused() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1111116"], values: ["close_ymd": "2017-07-05"]))])
        // The same snapshot again changes nothing: the refusal still names the version that brought it (1), not the curator's (2).
        #expect(try !Importer(database).importSnapshot([Fixtures.ekidata2021]).committed)
        let before = try database.settledSHA256()
        #expect(throws: ImportError.olderSnapshot(file: "\(Fixtures.ekidata2019)/company20180424.csv", table: "companies",
                                                  date: "2018-04-24", newest: "2020-06-19", newestVersion: 1)) {
            try Importer(database).importSnapshot([Fixtures.ekidata2019])
        }
        // Taken as older on purpose, it still reopens what 2021 closed: the mirror of the mass-close guard.
        #expect {
            try Importer(database).importSnapshot([Fixtures.ekidata2019], options: ImportOptions(allowOlder: true))
        } throws: { error in
            guard case let ImportError.massReopening(_, table, reopening, _) = error else { return false }
            return table == "stations" && reopening > 10
        }
        #expect(try database.settledSHA256() == before)
        // A file whose name has no date takes the curator's.
        let undated = try MasterDatabase.create(at: scratch.path("undated.sqlite"))
        try Importer(undated).importSnapshot([Fixtures.base.path], options: ImportOptions(snapshotDate: "2024-01-01"))
        #expect(throws: ImportError.self) {
            try Importer(undated).importSnapshot([Fixtures.base.path], options: ImportOptions(snapshotDate: "2023-12-31"))
        }
        #expect(throws: ImportError.badSnapshotDate("2024-02-30")) {
            try Importer(undated).importSnapshot([Fixtures.base.path], options: ImportOptions(snapshotDate: "2024-02-30"))
        }
        #expect(SnapshotDate.fromFileName("datasets/station20210312free.csv") == "2021-03-12")
        #expect(SnapshotDate.fromFileName("pref.csv") == nil)
        #expect(SnapshotDate.fromFileName("export-2021031299.csv") == nil)
    }

    @Test func aRowNoImportBroughtIsNotClosedForBeingAbsent() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        try Curator(database).apply([LocatedOperation(.add(table: .companies, values: ["company_cd": "990", "company_name": "むつ湾鉄道", "e_status": "0"]))])
        let report = try Importer(database).importSnapshot([try nextSnapshot()])
        #expect(report.count("companies", .delete) == 0)
        #expect(try database.value("SELECT e_status FROM companies WHERE company_cd = 990") == 0)
        // A row upstream had and dropped closes, as before.
        let dropped = try UpstreamSnapshots.from2021(into: scratch.path("dropped"), date: "20210501") { file, line in
            file.hasPrefix("station") && line.hasPrefix("1120102,") ? nil : line
        }
        let closing = try Importer(database).importSnapshot([dropped])
        #expect(closing.changes.map(\.summary).contains("DELETE stations 1120102 陸奥市川駅: e_status 0 → 2"))
    }
}
