import Foundation
import StationImport
import StationSchema
import StationSupport
import Testing

/// A write to stdout or stderr that fails (a full disk behind a redirection) never crashes and
/// never exits 0, and a full stdout is not blamed on the master.
@Suite struct OutputErrorTests {
    let scratch = Scratch()

    /// Runs `station-admin ARGUMENTS REDIRECTION` in bash, the way a user's shell would.
    func run(_ arguments: String, _ redirection: String) throws -> CommandRunner.Result {
        try CommandRunner.run(["-c", "\"\(CommandRunner.executable.path)\" \(arguments) \(redirection)"], program: URL(fileURLWithPath: "/bin/bash"))
    }

    @Test func aFullStandardOutputIsAnErrorThatNamesIt() throws {
        let database = try scratch.baseDatabase()
        for command in ["status --json", "log --json", "delta --from 0", "versions"] {
            let result = try run("\(command) --db \(database.path)", "> /dev/full")
            #expect(result.status == 1, "\(command): \(result.status)")
            #expect(result.stderr.contains("standard output"), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains(database.path), "\(command) blames the master: \(result.stderr)")
        }
    }

    @Test func aFullStandardErrorExitsOneWithoutACrash() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        // The import warns on stderr (connections to stations the free data lacks) after it committed.
        let imported = try run("import --db \(database.path) \(Fixtures.base.path)", "2> /dev/full")
        #expect(imported.status == 1)
        #expect(try database.dataVersion() == 1, "the version committed stands, and status shows it")
        // Whatever it has to say on stderr, it says so by its status, never by a crash (132 was SIGILL).
        let checked = try run("check --db \(database.path)", "2> /dev/full")
        #expect(checked.status == 0 || checked.status == 1, "\(checked.status)")
    }
}

/// A master SQLite finds damaged is named as such by every command, and nothing is written onto it.
@Suite struct DamagedMasterTests {
    let scratch = Scratch()

    @Test func aDamagedPageIsNamedAndNoWriteGoesOnIt() throws {
        let database = try scratch.baseDatabase()
        _ = try database.settledSHA256()
        let (pageSize, root): (Int, Int) = try database.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA page_size")!, try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'stations'")!)
        }
        // The stations table's first page, its header overwritten: SQLite reads it as malformed.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: database.path))
        try handle.seek(toOffset: UInt64((root - 1) * pageSize))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 16))
        try handle.close()
        let before = try FileDigest.sha256(ofFile: database.path)

        let integrity = try CommandRunner.run(["check", "--db", database.path, "--integrity"])
        #expect(integrity.status == 1 && integrity.stderr.contains("the master database is damaged"), "\(integrity.stderr)")
        let edit = try CommandRunner.run(["edit", "--db", database.path, "stations", "1120102", "weight=3"])
        #expect(edit.status == 1 && edit.stderr.contains("the master database is damaged (SQLite: "), "\(edit.stderr)")
        #expect(edit.stderr.contains("Restore the newest backup"))
        #expect(try FileDigest.sha256(ofFile: database.path) == before)
    }

    /// The last page of the stations table, or of the log, overwritten: no write, release or
    /// backup goes ahead, each names the master, and the master stays byte for byte as it was.
    @Test(arguments: ["stations", "updates"]) func aDamagedPageInsideATableRefusesEveryWriteReleaseAndBackup(_ table: String) throws {
        let database = try scratch.baseDatabase()
        _ = try database.settledSHA256()
        let (pageSize, page): (Int, Int) = try database.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA page_size")!,
             try #require(try Int.fetchOne(db, sql: "SELECT max(pageno) FROM dbstat WHERE name = ?",
                                           arguments: [table])))
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: database.path))
        try handle.seek(toOffset: UInt64((page - 1) * pageSize))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 16))
        try handle.close()
        let before = try FileDigest.sha256(ofFile: database.path)
        let folder = scratch.path("release-\(table)"), copy = scratch.path("backup-\(table).sqlite")
        let commands: [[String]] = [
            ["edit", "--db", database.path, "stations", "1120102", "weight=3"],
            ["import", "--db", database.path, Fixtures.base.path],
            ["release", "--db", database.path, "--out", folder],
            ["backup", "--db", database.path, "--out", copy],
        ]
        for command in commands {
            let result = try CommandRunner.run(command)
            #expect(result.status == 1 && result.stderr.contains("\(database.path): the master database is damaged (SQLite: "),
                    "\(table) \(command[0]): \(result.stderr)")
            #expect(try FileDigest.sha256(ofFile: database.path) == before, "\(table) \(command[0])")
        }
        #expect(!FileManager.default.fileExists(atPath: folder) && !FileManager.default.fileExists(atPath: copy))
    }
}
