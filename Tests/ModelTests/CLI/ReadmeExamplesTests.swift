import Foundation
import StationLog
import StationRelease
import StationSchema
import Testing

/// README's examples run as written, in order, as sqlite-utils tests its docs.
@Suite struct ReadmeExamplesTests {
    let scratch = Scratch()

    /// The command lines of the `sh` blocks of README's "Using it" section (which holds
    /// "Curated changes"), but for building and the alias, which the test replaces.
    static func usingItCommands() throws -> [String] {
        let readme = try String(contentsOf: Fixtures.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let section = readme.components(separatedBy: "\n## Using it\n")[1].components(separatedBy: "\n## ")[0]
        var commands: [String] = [], inBlock = false
        for line in section.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inBlock = line == "```sh"; continue }
            guard inBlock, !line.isEmpty, !line.hasPrefix("#"), !line.hasPrefix("swift build"), !line.hasPrefix("alias ") else { continue }
            commands.append(line)
        }
        return commands
    }

    @Test func theUsingItExamplesRunInOrderAsWritten() throws {
        let commands = try Self.usingItCommands()
        #expect(commands.count >= 25)
        // The commands, and what a phone does with what they publish (a copy, sqlite3).
        #expect(commands.allSatisfy { ["station-admin ", "station-phone ", "cp ", "sqlite3 "].contains(where: $0.hasPrefix) })
        // The examples name datasets/… relative to the repository: a folder that has them.
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("datasets"), withDestinationPath: Fixtures.repository.appendingPathComponent("datasets").path)
        var server: RunningProgram?
        defer { _ = server?.stop() }
        for (number, command) in commands.enumerated() {
            // `station-admin serve … &` keeps serving while the examples after it run.
            let uncommented = command.components(separatedBy: " #")[0].trimmingCharacters(in: .whitespaces)
            if uncommented.hasSuffix(" &") {
                let arguments = uncommented.dropLast(2).split(separator: " ").dropFirst().map(String.init)
                let started = try RunningProgram(CommandRunner.executable.path, arguments, in: scratch.url)
                #expect(started.wait(for: "Serving release on http://127.0.0.1:8080"), "README example \(number + 1): \(started.stderr)")
                server = started
                continue
            }
            // As a user types it: `station-admin` is the built tool, the master ./master.sqlite.
            let phone = CommandRunner.executable.deletingLastPathComponent().appendingPathComponent("station-phone").path
            let result = try CommandRunner.run(
                ["-c", "station-admin() { \"\(CommandRunner.executable.path)\" \"$@\"; }\nstation-phone() { \"\(phone)\" \"$@\"; }\n\(command)"],
                in: scratch.url, unset: ["STATION_ADMIN_DB"], program: URL(fileURLWithPath: "/bin/bash"))
            #expect(result.status == 0, "README example \(number + 1) failed: \(command)\n\(result.stderr)")
            if result.status != 0 { return }
        }
        let database = try MasterDatabase.open(at: scratch.path("master.sqlite"))
        #expect(try database.dataVersion() == 15)
        #expect(try database.versions().last?.memo == "ekidata 2019-12-27")
        #expect(try database.value("SELECT company_cd FROM lines WHERE line_cd = 99990") == 108)
        #expect(try database.verifyRelease(folder: scratch.path("release")).failures == [])
        // The curl session of "Serving releases", against the server started above, which serves
        // the releases published after it started.
        let readme = try String(contentsOf: Fixtures.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let session = readme.components(separatedBy: "```console\n")[1].components(separatedBy: "```")[0].split(separator: "\n")
        let curl = try CommandRunner.run(["-c", String(session[0].dropFirst(2))], program: URL(fileURLWithPath: "/bin/bash"))
        #expect(curl.stdout.split(separator: "\n") == Array(session.dropFirst()), "\(curl.stdout)")
        #expect(server?.stop(SIGTERM) == 0)
        // The phone that updated the app kept its split credit.
        #expect(try completions(ofDatabase: scratch.path("new.sqlite")).keys.sorted() == [1120309, 9999001])
    }
}
