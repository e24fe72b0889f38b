import Foundation
import StationImport
import StationSchema
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
