import Foundation
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// History at a glance: `versions`, who made each version, and `log` as git users read it.
@Suite struct VersionHistoryTests {
    let scratch = Scratch()

    /// Version 1 the base fixture (by "hanako"), version 2 a rename and a split (by $STATION_ADMIN_AUTHOR).
    func twoVersions() throws -> String {
        let path = scratch.path("m.sqlite")
        _ = try MasterDatabase.create(at: path)
        let imported = try CommandRunner.run(["import", "--db", path, Fixtures.base.path, "--memo", "base", "--author", "hanako"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let split = try CommandRunner.run(
            ["split", "--db", path, "1120101", "9920607", "station_name=八戸（新）", "--memo", "Aoimori"],
            environment: ["STATION_ADMIN_AUTHOR": "taro"])
        #expect(split.status == 0, "\(split.stderr)")
        return path
    }

    @Test func versionsListsEachVersionNewestFirstWithItsAuthorAndCounts() throws {
        let path = try twoVersions()
        let versions = try LogReader(MasterDatabase.open(at: path)).versions()
        #expect(versions.map(\.version) == [2, 1])
        #expect(versions.map(\.author) == ["taro", "hanako"])
        #expect(versions.map(\.memo) == ["Aoimori", "base"])
        #expect(versions[0].counts == ["stations": ["INSERT": 1, "DUPLICATE": 1]])
        #expect(versions[0].changes == 2)

        let text = try CommandRunner.run(["versions", "--db", path])
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("v2  "))
        #expect(lines[0].hasSuffix("  taro  stations 1 INSERT 1 DUPLICATE  (Aoimori)"))
        #expect(lines[1].hasPrefix("v1  ") && lines[1].hasSuffix("  hanako  prefectures 2 INSERT, companies 2 INSERT, lines 3 INSERT, stations 24 INSERT, connections 21 INSERT  (base)"))
        #expect(try CommandRunner.run(["versions", "--db", path, "-n", "1"]).stdout.split(separator: "\n").count == 1)

        let json = try CommandRunner.run(["versions", "--db", path, "--json"])
        let objects = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [[String: Any]]
        #expect(objects.map { $0["version"] as? Int } == [2, 1])
        #expect(objects.first?["author"] as? String == "taro")
    }

    @Test func theLoginNameIsTheAuthorWhenNoneIsGiven() throws {
        let path = scratch.path("m.sqlite")
        _ = try MasterDatabase.create(at: path)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "STATION_ADMIN_AUTHOR")
        #expect(try CommandRunner.run(["import", "--db", path, Fixtures.base.path]).status == 0)
        #expect(try LogReader(MasterDatabase.open(at: path)).versions().first?.author == ProcessInfo.processInfo.userName)
    }

    /// The author is curator data: no client database or delta carries it.
    @Test func theAuthorIsNeverPublished() throws {
        let path = try twoVersions()
        let database = try MasterDatabase.open(at: path)
        try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release")))
        let client = try Data(contentsOf: URL(fileURLWithPath: scratch.path("release/2/stations.sqlite")))
        #expect(client.range(of: Data("hanako".utf8)) == nil && client.range(of: Data("taro".utf8)) == nil)
        let delta = try Gunzip.read(scratch.path("release/2/delta-from-1.sql.gz"))
        #expect(delta.range(of: Data("taro".utf8)) == nil && delta.range(of: Data("Aoimori".utf8)) == nil)
    }

    @Test func logIsNewestFirstWithALimitAndAType() throws {
        let path = try twoVersions()
        let log = try CommandRunner.run(["log", "--db", path, "-n", "2", "--oneline"])
        let lines = log.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].contains("\tv2\t") && lines[0].contains("\tDUPLICATE\tstations 1120101 → 9920607"))
        let inserts = try CommandRunner.run(["log", "--db", path, "--type", "insert", "--version", "2", "--oneline"])
        #expect(inserts.stdout.split(separator: "\n").count == 1)
        #expect(inserts.stdout.contains("\tINSERT\tstations 9920607"))
    }

    @Test func aVersionOrKeyTheLogDoesNotHaveIsAnError() throws {
        let path = try twoVersions()
        let version = try CommandRunner.run(["log", "--db", path, "--version", "9"])
        #expect(version.status == 1)
        #expect(version.stderr == "data version 9 does not exist (expected 1 to 2; `station-admin versions` lists them)\n")
        let key = try CommandRunner.run(["log", "--db", path, "--key", "7777777"])
        #expect(key.status == 1)
        #expect(key.stderr == "no updates row names key \"7777777\" (expected a code the log knows, e.g. a station_cd, or line_cd/station_cd1/station_cd2)\n")
        #expect(try CommandRunner.run(["log", "--db", path, "--key", "1120101"]).status == 0)
    }
}
