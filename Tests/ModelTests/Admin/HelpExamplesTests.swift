import Foundation
import StationSchema
import Testing

/// Every subcommand's `--help` example runs as written, on the master the demo leaves
/// (`scripts/demo`: 2019-12-27 and 2021-03-12 imported, the Hokuriku plan, map weights, the
/// Seikan waiver, releases 1, 2 and 4 signed), or on the master a help names ("on a master at
/// version 2", "on a new master"), each command's examples in a copy of their own; and what the help says of the
/// command tree (which commands take `--db`) is checked against it.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct HelpExamplesTests {
    /// Every command, as a curator types it. `theListIsTheCommandTree` keeps it whole.
    static let commands = [
        "init", "backup", "synth", "diff", "import", "sources", "status", "versions", "log", "add", "edit", "transfer-line", "move-stations",
        "close", "restore", "split", "record-split", "connect", "disconnect", "apply", "revert", "weights", "check", "waive",
        "unwaive", "review", "suggest", "release", "delta", "verify", "serve", "keys", "keys generate", "keys show", "resign",
        "sync-postgres", "conformance",
    ]

    /// The commands that write a version: an example of one (not a dry run) must change something.
    static let writingCommands: Set<String> = [
        "import", "add", "edit", "transfer-line", "move-stations", "close", "restore", "split", "record-split", "connect",
        "disconnect", "apply", "revert", "weights",
    ]

    /// The examples of a help text: the command lines after `Example:` or `Examples:` (on that
    /// line, or indented under it), each without the description that may follow it after two
    /// spaces; and the words between `Example` and the colon (`, on a master at version 2`).
    static func examples(inHelp text: String) -> (qualifier: String, lines: [String]) {
        var lines: [String] = [], qualifier = "", inBlock = false
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Example"), let colon = trimmed.firstIndex(of: ":") {
                inBlock = true
                qualifier = String(trimmed[..<colon])
                let rest = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if !rest.isEmpty { lines.append(rest) }
                continue
            }
            guard inBlock else { continue }
            guard line.hasPrefix("  "), trimmed.hasPrefix("station-admin ") || trimmed.hasPrefix("curl ") else {
                inBlock = false
                continue
            }
            lines.append(trimmed)
        }
        let commands = lines.map { $0.components(separatedBy: "  ")[0].trimmingCharacters(in: .whitespaces) }
        return (qualifier, commands)
    }

    static func help(_ command: String) throws -> String {
        let result = try CommandRunner.run(command.split(separator: " ").map(String.init) + ["--help"], environment: ["COLUMNS": "400"])
        #expect(result.status == 0, "\(command) --help: \(result.stderr)")
        return result.stdout
    }

    // MARK: The master the demo leaves

    struct FixtureFailure: Error, Sendable, CustomStringConvertible {
        let description: String
    }

    /// The demo's state, made once for every example: `demo/` holds the master at version 4 and
    /// its release folder, `.station-admin/` the signing key (the copies' home), `at-version-2.sqlite` the
    /// master before its plan, `new.sqlite` an empty one.
    static let fixture: Result<String, FixtureFailure> = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("help-examples-\(getpid())").path
        atexit { try? FileManager.default.removeItem(atPath: HelpExamplesTests.fixtureFolder) }
        let script = """
            set -e
            station-admin() { "\(CommandRunner.executable.path)" "$@"; }
            mkdir -p "\(folder)/demo/.station-admin" && cd "\(folder)/demo"
            ln -s "\(Fixtures.repository.appendingPathComponent("datasets").path)" datasets
            export HOME="$PWD"
            station-admin init
            cp master.sqlite ../new.sqlite
            station-admin import datasets/ekidata/2019-12-27 --memo "ekidata 2019-12-27"
            station-admin import datasets/ekidata/2021-03-12 --memo "ekidata 2021-03-12"
            cp master.sqlite ../at-version-2.sqlite
            station-admin keys generate --out ~/.station-admin/signing-2026
            station-admin release --out release --version 1 --sign ~/.station-admin/signing-2026
            station-admin release --out release --sign ~/.station-admin/signing-2026
            station-admin apply datasets/plans/2024-03-16-hokuriku.jsonl
            station-admin weights --seed 1 --propose-major
            station-admin waive connection-too-long connections 11118/1111802/1111806 --reason "Seikan Tunnel: 59.6 km, no station between"
            station-admin release --out release --sign ~/.station-admin/signing-2026
            rm datasets
            """
        guard let made = try? CommandRunner.run(["-c", script], unset: ["STATION_ADMIN_DB"], program: URL(fileURLWithPath: "/bin/bash")) else {
            return .failure(FixtureFailure(description: "bash did not run"))
        }
        guard made.status == 0 else { return .failure(FixtureFailure(description: "the demo's master: \(made.stderr)")) }
        return .success(folder)
    }()

    static var fixtureFolder: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("help-examples-\(getpid())").path
    }

    // MARK: The tests

    /// The subcommands a help lists (`  name   abstract` under a `… SUBCOMMANDS:` heading).
    static func subcommands(inHelp text: String) -> [String] {
        var names: [String] = [], inList = false
        for line in text.components(separatedBy: "\n") {
            if line.hasSuffix("SUBCOMMANDS:") { inList = true; continue }
            if line.isEmpty { inList = false }
            guard inList, line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first,
                  name.allSatisfy({ $0.isLowercase || $0 == "-" }) else { continue }
            names.append(String(name))
        }
        return names.filter { $0 != "help" }
    }

    @Test func theListIsTheCommandTree() throws {
        let tree = Self.subcommands(inHelp: try Self.help("")) + Self.subcommands(inHelp: try Self.help("keys")).map { "keys " + $0 }
        #expect(tree.count == Self.commands.count && Set(tree) == Set(Self.commands), "the tree: \(tree)")
    }

    /// README and curating.md say which commands take `--db`: the commands whose help lists it.
    @Test func theGuidesNameTheCommandsWithoutDB() throws {
        var without: [String] = []
        for command in Self.commands where command != "keys" {
            if !(try Self.help(command)).contains("--db <path>") { without.append(command) }
        }
        let named = without.map { "`\($0)`" }
        let list = named.count > 1 ? named.dropLast().joined(separator: ", ") + " and " + named.last! : named.joined()
        for guide in ["README.md", "docs/curating.md"] {
            let text = try String(contentsOf: Fixtures.repository.appendingPathComponent(guide), encoding: .utf8)
            let flowing = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(flowing.contains("but \(list), which work on files, folders and servers"), "\(guide) should name \(list)")
        }
    }

    /// The library's messages spell options for the command line to take (`choose another
    /// --out`): each option any of them names is one a command has, so that renaming an option in
    /// Admin cannot leave stale advice behind. Doc comments and the review page's CSS custom
    /// properties (`var(--ink)`) are not advice.
    @Test func everyOptionTheLibraryNamesIsOneACommandHas() throws {
        var options: Set<String> = ["--help", "--version", "--generate-completion-script"]
        let declared = try NSRegularExpression(pattern: #"^\s+(?:-[a-zA-Z], )?(--[a-z][a-z-]*)"#, options: [.anchorsMatchLines])
        for command in Self.commands {
            let help = try Self.help(command)
            for match in declared.matches(in: help, range: NSRange(help.startIndex..., in: help)) {
                options.insert(String(help[Range(match.range(at: 1), in: help)!]))
            }
        }
        let named = try NSRegularExpression(pattern: #"(?<![\w(-])--[a-z][a-z-]*[a-z](?![\w:-])"#)
        var stale: [String] = [], seen = 0
        for folder in ["Sources/Model", "Sources/StationServe", "Sources/StationWeb"] {
            let root = Fixtures.repository.appendingPathComponent(folder)
            let files = FileManager.default.enumerator(atPath: root.path)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
            for file in files {
                let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.components(separatedBy: "\n").enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    for match in named.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                        let option = String(line[Range(match.range, in: line)!])
                        seen += 1
                        if !options.contains(option) { stale.append("\(folder)/\(file):\(number + 1): \(option)") }
                    }
                }
            }
        }
        #expect(stale.isEmpty, "options the library names that no command has:\n\(stale.joined(separator: "\n"))")
        #expect(options.count > 60 && seen > 50, "\(seen) named; the commands have \(options.sorted())")
    }

    @Test(arguments: commands) func theExamplesRunAsWritten(_ command: String) throws {
        let examples = Self.examples(inHelp: try Self.help(command))
        try #require(!examples.lines.isEmpty, "\(command) --help has no example")
        #expect(examples.lines.contains { $0.hasPrefix("station-admin \(command) ") }, "\(command)'s examples do not run it: \(examples.lines)")
        let fixture = try Self.fixture.get()
        let scratch = Scratch()
        let copy = scratch.path("demo")
        try FileManager.default.copyItem(atPath: fixture + "/demo", toPath: copy)
        try FileManager.default.createSymbolicLink(atPath: copy + "/datasets", withDestinationPath: Fixtures.repository.appendingPathComponent("datasets").path)
        for (words, master) in [("on a master at version 2", "at-version-2.sqlite"), ("on a new master", "new.sqlite")]
        where examples.qualifier.contains(words) {
            // The demo's master with its write-ahead log, if it left one: another file's log would
            // be replayed onto the replacement.
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + "/master.sqlite" + suffix) }
            try FileManager.default.copyItem(atPath: fixture + "/" + master, toPath: copy + "/master.sqlite")
        }
        let versionBefore = try MasterDatabase.open(at: copy + "/master.sqlite").dataVersion()

        // As a user types them, but on a free port and the test's PostgreSQL server.
        let port = try ServeTests.freePort()
        // `station-admin` on the PATH, so that `station-admin serve … &` is the server itself, for the trap to stop.
        try FileManager.default.createDirectory(atPath: scratch.path("bin"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: scratch.path("bin/station-admin"), withDestinationPath: CommandRunner.executable.path)
        // And `station-phone`, the client `conformance --client 'station-phone …'` runs.
        try FileManager.default.createSymbolicLink(atPath: scratch.path("bin/station-phone"), withDestinationPath: StationPhoneProgram.url.path)
        var script = ["export PATH=\"\(scratch.path("bin")):$PATH\"", "trap 'status=$?; kill $(jobs -p) 2>/dev/null || true; wait || true; exit $status' EXIT", "set -e"]
        for line in examples.lines {
            var typed = line.replacingOccurrences(of: "8080", with: "\(port)")
            if typed.contains("postgres://") {
                guard let server = PostgresServer.shared else {
                    Issue.record("PostgreSQL is not installed (scripts/test and .ci/run install postgresql)")
                    return
                }
                let database = try server.makeDatabase()
                if examples.qualifier.contains("on the web service's database") {
                    // The table as docs/web.md's tour makes it.
                    let tour = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/web.md"), encoding: .utf8)
                    let statement = try #require(tour.components(separatedBy: "-c \"").dropFirst().map { $0.components(separatedBy: "\"")[0] }
                        .first { $0.hasPrefix("CREATE TABLE completions") })
                    try server.psql(database, statement)
                }
                typed = typed.replacingOccurrences(of: "postgres://web@127.0.0.1:5432/app", with: server.address(database))
            }
            script.append(typed)
            if typed.hasSuffix(" &") {
                // The server is up once it answers.
                script.append("for _ in $(seq 100); do curl -s -o /dev/null localhost:\(port)/manifest.json && break; sleep 0.1; done")
            }
        }
        let result = try CommandRunner.run(["-c", script.joined(separator: "\n")], in: URL(fileURLWithPath: copy),
                                           environment: ["HOME": copy], unset: ["STATION_ADMIN_DB"], program: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 0, "\(command)'s example failed: \(examples.lines.joined(separator: "; "))\n\(result.stderr)")
        if Self.writingCommands.contains(command), !examples.lines.joined().contains("--dry-run") {
            #expect(try MasterDatabase.open(at: copy + "/master.sqlite").dataVersion() > versionBefore,
                    "\(command)'s example changed nothing: \(result.stdout) \(result.stderr)")
        }
    }
}
