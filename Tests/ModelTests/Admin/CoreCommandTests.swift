import Foundation
import StationDelta
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// The core commands as a curator types them: exit codes, stdout and stderr.
@Suite struct CoreCommandTests {
    let scratch = Scratch()

    @Test func usageErrorsExitTwo() throws {
        let result = try CommandRunner.run(["log", "--table", "platforms", "--db", scratch.path("m.sqlite")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("Unknown table 'platforms'"))
        #expect(try CommandRunner.run(["import", "--no-such-flag"]).status == 2)
    }

    @Test func aMissingDatabaseSaysHowToCreateOne() throws {
        let path = scratch.path("absent.sqlite")
        let result = try CommandRunner.run(["status", "--db", path])
        #expect(result.status == 1)
        #expect(result.stderr == "\(path): no master database here (create one with `station-admin init --db \(path)`)\n")
    }

    /// A delta's output is only ever a file: what is already at the path and is not one (a
    /// folder, a pipe, a device such as /dev/full) is refused before any work, and a folder
    /// that does not exist is named with the system's reason, not as a Foundation error dump.
    @Test func deltaOutputErrorsNameThePathAndTouchNothingElse() throws {
        let database = try scratch.baseDatabase()
        let folder = scratch.path("a-folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let pipe = scratch.path("a-pipe")
        #expect(mkfifo(pipe, 0o644) == 0)
        for target in [folder, pipe] {
            let result = try CommandRunner.run(["delta", "--db", database.path, "--from", "0", "--output", target])
            #expect(result.status == 1)
            #expect(result.stderr == "cannot replace \(target): it is not a regular file (a device, a folder or a pipe); give the path of a file to write\n")
        }
        var status = stat()
        #expect(stat(pipe, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        // Refused before any work: no temporary file was left beside them.
        #expect(try !FileManager.default.contentsOfDirectory(atPath: scratch.url.path).contains(where: AtomicFile.isTemporaryName))

        let missing = scratch.path("no-such-folder") + "/d.sql"
        let result = try CommandRunner.run(["delta", "--db", database.path, "--from", "0", "--output", missing])
        #expect(result.status == 1)
        #expect(result.stderr == "cannot write \(missing): no such file or directory (choose another --output)\n")
    }

    @Test func theDatabaseComesFromTheEnvironmentWhenNotGiven() throws {
        let path = scratch.path("env.sqlite")
        #expect(try CommandRunner.run(["init"], environment: ["STATION_ADMIN_DB": path]).status == 0)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try CommandRunner.run(["init", "--db", path]).status == 1)
    }

    @Test func importJSONHasVersionCountsAndWarnings() throws {
        let path = scratch.path("m.sqlite")
        _ = try CommandRunner.run(["init", "--db", path])
        let result = try CommandRunner.run(["import", "--db", path, "--json", Fixtures.base.path])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(object["version"] as? Int == 1)
        let counts = object["counts"] as! [String: [String: Int]]
        #expect(counts["stations"] == ["insert": 24, "update": 0, "delete": 0, "restore": 0, "duplicate": 0])
        #expect((object["warnings"] as! [String]).count == 1)
    }

    @Test func logJSONUsesTheColumnNames() throws {
        let path = scratch.path("m.sqlite")
        _ = try CommandRunner.run(["init", "--db", path])
        _ = try CommandRunner.run(["import", "--db", path, "--memo", "base", Fixtures.base.path])
        let result = try CommandRunner.run(["log", "--db", path, "--json", "--key", "1120101"])
        // A key's story (docs/json.md): each updates row with the columns it changed.
        let entries = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [[String: Any]]
        #expect(entries.count == 1)
        #expect(Set(entries[0].keys) == ["update", "name", "fields", "source"])
        #expect((entries[0]["source"] as? [String: Any])?["name"] as? String == "ekidata")
        let row = entries[0]["update"] as! [String: Any]
        #expect(Set(row.keys) == ["up_id", "type", "table_name", "key_id", "user_version", "update_date", "memo"])
        #expect(row["type"] as? String == "INSERT" && row["memo"] as? String == "base")
        #expect(entries[0]["name"] as? String == "八戸")
        let fields = entries[0]["fields"] as! [[String: Any]]
        #expect(fields.contains { $0["column"] as? String == "station_name" && $0["new"] as? String == "八戸" && $0["old"] is NSNull })
    }

    @Test func importWithNoChangesSaysSoAndMakesNoVersion() throws {
        let path = scratch.path("m.sqlite")
        _ = try CommandRunner.run(["init", "--db", path])
        _ = try CommandRunner.run(["import", "--db", path, Fixtures.base.path])
        let result = try CommandRunner.run(["import", "--db", path, Fixtures.base.path])
        #expect(result.status == 0)
        #expect(result.stdout == "No changes: the database stays at version 1.\n")
    }
}
