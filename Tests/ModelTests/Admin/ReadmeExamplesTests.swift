import Foundation
import StationLog
import StationManifest
import StationRelease
import StationSchema
import Testing

/// The examples of README and of the guides run as written, in order, as sqlite-utils tests its docs.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct ReadmeExamplesTests {
    let scratch = Scratch()

    /// The guides whose examples build on each other, in the order they run.
    static let guides = ["docs/curating.md", "docs/publishing.md", "docs/clients.md"]

    static func text(_ document: String) throws -> String {
        try String(contentsOf: Fixtures.repository.appendingPathComponent(document), encoding: .utf8)
    }

    /// The command lines of the `sh` blocks of `text`, but for building and the alias, which the
    /// test replaces.
    static func commands(in text: String) -> [String] {
        var commands: [String] = [], inBlock = false
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inBlock = line == "```sh"; continue }
            guard inBlock, !line.isEmpty, !line.hasPrefix("#"), !line.hasPrefix("swift build"), !line.hasPrefix("alias ") else { continue }
            commands.append(line)
        }
        return commands
    }

    /// Runs `commands` in the scratch folder as a user types them; `station-admin serve … &`
    /// keeps serving while the commands after it run. Returns the server, if one was started.
    func run(_ commands: [String], _ document: String) throws -> RunningProgram? {
        // The examples name datasets/… relative to the repository: a folder that has them.
        try? FileManager.default.createSymbolicLink(
            atPath: scratch.path("datasets"), withDestinationPath: Fixtures.repository.appendingPathComponent("datasets").path)
        var server: RunningProgram?
        for (number, command) in commands.enumerated() {
            let uncommented = command.components(separatedBy: " #")[0].trimmingCharacters(in: .whitespaces)
            if uncommented.hasSuffix(" &") {
                let arguments = uncommented.dropLast(2).split(separator: " ").dropFirst().map(String.init)
                let started = try RunningProgram(CommandRunner.executable.path, arguments, in: scratch.url)
                #expect(started.wait(for: "Serving release on http://127.0.0.1:"), "\(document) example \(number + 1): \(started.stderr)")
                server = started
                continue
            }
            // As a user types it: `station-admin` is the built tool, the master ./master.sqlite.
            let phone = CommandRunner.executable.deletingLastPathComponent().appendingPathComponent("station-phone").path
            let result = try CommandRunner.run(
                ["-c", "station-admin() { \"\(CommandRunner.executable.path)\" \"$@\"; }\nstation-phone() { \"\(phone)\" \"$@\"; }\n\(command)"],
                in: scratch.url,
                // `conformance --client 'station-phone …'` runs the client by its name, from a shell of its own.
                environment: ["PATH": CommandRunner.executable.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")],
                unset: ["STATION_ADMIN_DB"], program: URL(fileURLWithPath: "/bin/bash"))
            #expect(result.status == 0, "\(document) example \(number + 1) failed: \(command)\n\(result.stderr)")
            if result.status != 0 { break }
            // What the comment quotes ("kept 2017-07-05 from v14 …") is what the command printed.
            let comment = command.components(separatedBy: " #").dropFirst().joined(separator: " #")
            for quoted in comment.components(separatedBy: "\"").enumerated().filter({ $0.offset % 2 == 1 }).map(\.element) {
                #expect((result.stdout + result.stderr).contains(quoted), "\(document) example \(number + 1) does not print \"\(quoted)\": \(result.stdout)")
            }
        }
        return server
    }

    /// README's tour of the curator's loop, on its own.
    @Test func theReadmeTourRunsAsWritten() throws {
        let readme = try Self.text("README.md")
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 200)
        let tour = readme.components(separatedBy: "\n## The curator's loop")[1].components(separatedBy: "\n## ")[0]
        let commands = Self.commands(in: tour)
        #expect(commands.count >= 10)
        let server = try run(commands, "README.md")
        defer { _ = server?.stop(SIGTERM) }
        let database = try MasterDatabase.open(at: scratch.path("master.sqlite"))
        #expect(try database.dataVersion() == 3)
        let manifest = try CommandRunner.run(["-s", "http://127.0.0.1:8081/manifest.json"], program: URL(fileURLWithPath: "/usr/bin/curl"))
        #expect(try Manifest.decode(Data(manifest.stdout.utf8)).newest == 3)
    }

    /// The manifest format publishing.md names is the one a release writes.
    @Test func publishingNamesTheManifestFormatWritten() throws {
        let flowing = try Self.text("docs/publishing.md").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let format = Manifest.currentFormat
        #expect(flowing.contains("`format` (\(format)),") && flowing.contains("(up to \(format))") && flowing.contains("brings the folder to \(format)."))
    }

    @Test func theGuidesExamplesRunInOrderAsWritten() throws {
        let commands = try Self.guides.map { Self.commands(in: try Self.text($0)) }
        #expect(commands.joined().count >= 25)
        // The commands, and what a phone does with what they publish (a copy, sqlite3).
        #expect(commands.joined().allSatisfy { ["station-admin ", "station-phone ", "cp ", "sqlite3 "].contains(where: $0.hasPrefix) })
        let server = try run(commands[0] + commands[1], "curating.md and publishing.md")
        defer { _ = server?.stop() }
        // The curl session of publishing.md's "Serving releases", where a reader of the two guides
        // is: curating.md's server serving its release folder.
        let session = try Self.text("docs/publishing.md").components(separatedBy: "```console\n")[1].components(separatedBy: "```")[0].split(separator: "\n")
        let curl = try CommandRunner.run(["-c", String(session[0].dropFirst(2))], program: URL(fileURLWithPath: "/bin/bash"))
        #expect(curl.stdout.split(separator: "\n") == Array(session.dropFirst()), "\(curl.stdout)")
        _ = try run(commands[2], "clients.md")
        let database = try MasterDatabase.open(at: scratch.path("master.sqlite"))
        #expect(try database.dataVersion() == 15)
        #expect(try LogReader(database).versions().last?.memo == "ekidata 2019-12-27")
        #expect(try database.value("SELECT company_cd FROM lines WHERE line_cd = 99990") == 108)
        #expect(try Publisher(database).verifyRelease(folder: scratch.path("release")).failures == [])
        #expect(server?.stop(SIGTERM) == 0)
        // The phone that updated the app kept its split credit.
        #expect(try completions(ofDatabase: scratch.path("new.sqlite")).keys.sorted() == [1120309, 9999001])
    }
}
