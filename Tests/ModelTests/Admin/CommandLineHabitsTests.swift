import Foundation
import StationCheck
import StationCurate
import StationDelta
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// What a user of git, sqlite-utils or csvkit expects of a command line: each message of
/// issue 11 that was seen on the old main, as the user now sees it.
@Suite struct CommandLineHabitsTests {
    let scratch = Scratch()

    /// Every command's --help ends its description with what its exit statuses mean.
    @Test func everyCommandsHelpListsItsExitStatuses() throws {
        let root = try CommandRunner.run(["--help"]).stdout
        // Every group's listing: `SET UP SUBCOMMANDS:`, `CURATE SUBCOMMANDS:`, ….
        let commands = root.components(separatedBy: "SUBCOMMANDS:\n").dropFirst().flatMap { $0.split(separator: "\n") }
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.map { String($0.split(separator: " ")[0]) }
        #expect(commands.count >= 28, "\(commands)")
        for command in commands {
            let help = try CommandRunner.run([command, "--help"]).stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(help.contains("Exit status: 0 ") && help.contains("2 for a usage error"), "\(command) --help: \(help.prefix(300))")
        }
        #expect(try CommandRunner.run(["check", "--help"]).stdout.contains("Exit status: 0 when no error-level finding is unwaived"))
        #expect(try CommandRunner.run(["diff", "--help"]).stdout.replacingOccurrences(of: "\n", with: " ").contains("With --exit-code, as GNU diff and cmp: 0 when"))
    }

    /// `--version` is the newest release CHANGELOG.md describes: the two never drift apart.
    @Test func versionPrintsTheChangelogsNewestVersion() throws {
        let changelog = try String(contentsOf: Fixtures.repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]") }?.dropFirst(4).prefix { $0 != "]" })
        let result = try CommandRunner.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "\(newest)\n")
    }

    /// A subcommand's own `--version <version>` is the only `--version` its help lists, and takes its value.
    @Test(arguments: ["log", "check", "review", "release"]) func aSubcommandsVersionOptionIsNotShadowed(_ command: String) throws {
        let help = try CommandRunner.run([command, "--help"], environment: ["COLUMNS": "200"]).stdout
        let options = help.components(separatedBy: "\n").filter { $0.hasPrefix("  --version") }
        #expect(options.count == 1 && options[0].hasPrefix("  --version <version>") && !help.contains("Show the version"), "\(help)")
        let missing = try CommandRunner.run([command, "--version"])
        #expect(missing.status == 2 && missing.stderr.contains("Missing value for '--version <version>'"), "\(missing.stderr)")
    }

    @Test(arguments: [("stauts", "status"), ("imprt", "import"), ("relase", "release"), ("verfy", "verify")])
    func aMistypedCommandSuggestsTheNearest(_ typed: String, _ nearest: String) throws {
        let result = try CommandRunner.run([typed, "datasets/ekidata/2021-03-12"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            Error: '\(typed)' is not a station-admin command. Did you mean '\(nearest)'?
              See 'station-admin --help' for the commands.

            """)
    }

    /// `help improt` is the same mistake as `improt`.
    @Test func helpOfAMistypedCommandSuggestsTheNearest() throws {
        let result = try CommandRunner.run(["help", "improt"])
        #expect(result.status == 2 && result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("Error: 'improt' is not a station-admin command. Did you mean 'import'?\n"), "\(result.stderr)")
    }

    /// The 30-odd commands in groups a person can scan, in the order of the curator's loop.
    @Test func helpGroupsTheCommands() throws {
        let help = try CommandRunner.run(["--help"]).stdout
        let groups = ["SET UP SUBCOMMANDS:", "IMPORT AND LOOK SUBCOMMANDS:", "CURATE SUBCOMMANDS:", "CHECK AND REVIEW SUBCOMMANDS:", "PUBLISH SUBCOMMANDS:"]
        let places = groups.map { help.range(of: $0)?.lowerBound }
        #expect(places.allSatisfy { $0 != nil }, "\(help)")
        #expect(places.compactMap { $0 } == places.compactMap { $0 }.sorted())
        #expect(help.range(of: "  apply ")!.lowerBound > help.range(of: "CURATE SUBCOMMANDS:")!.lowerBound)
    }

    /// `--db` before the command, as curators type it (git takes `-C` there).
    @Test func theMasterMayBeNamedBeforeTheCommand() throws {
        let database = try scratch.baseDatabase()
        for arguments in [["--db", database.path, "status"], ["--db=\(database.path)", "status"]] {
            let result = try CommandRunner.run(arguments, unset: ["STATION_ADMIN_DB"])
            #expect(result.status == 0 && result.stdout.hasPrefix("\(database.path): data version 1"), "\(arguments): \(result.stdout)\(result.stderr)")
        }
    }

    /// `suggest` where the version recorded its splits itself says so, rather than "none".
    @Test func suggestNamesTheSplitsAVersionRecordedAlready() throws {
        let database = try scratch.baseDatabase()
        var batch = ChangeBatch()
        batch.put(.stations, stationRow(9920601, name: "八戸", line: 11201))
        batch.duplicate(old: 1120101, new: 9920601)
        try Curator(database).commit(batch, memo: "split")
        let result = try CommandRunner.run(["suggest", "--db", database.path])
        #expect(result.stdout == "No likely splits or handovers left to record: version 2 recorded 1 split already (1120101 → 9920601).\n",
                "\(result.stdout)\(result.stderr)")
        #expect(try CommandRunner.run(["suggest", "--db", database.path, "--version", "1"]).stdout == "No likely splits or handovers in version 1.\n")
    }

    /// `weights --dry-run` shows the rows its help promises (it printed only counts).
    @Test func weightsDryRunListsTheRowsItWouldWrite() throws {
        let database = try scratch.baseDatabase()
        let result = try CommandRunner.run(["weights", "--db", database.path, "--dry-run"])
        let rows = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  UPDATE stations ") && $0.contains(": weight 13 → ") }
        #expect(result.status == 0 && !rows.isEmpty, "\(result.stdout)")
        #expect(result.stdout.contains("Dry run: would commit version 2: \(rows.count) station"), "\(result.stdout)")
    }

    /// `log --key K --oneline`: real tabs between the fields, as `log --oneline` writes them.
    @Test func aKeysOneLineLogIsTabSeparated() throws {
        let database = try scratch.baseDatabase()
        let result = try CommandRunner.run(["log", "--db", database.path, "--key", "1120101", "--oneline"])
        let fields = result.stdout.split(separator: "\n").first?.split(separator: "\t") ?? []
        #expect(result.status == 0 && fields.count >= 5 && !result.stdout.contains("\\t"), "\(result.stdout)")
        #expect(fields[3] == "INSERT" && fields[4] == "stations 1120101")
    }

    @Test func aWordFarFromEveryCommandGetsOneHelpHint() throws {
        let result = try CommandRunner.run(["teleport"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            Error: Unexpected argument 'teleport'
            Usage: station-admin <subcommand>
              See 'station-admin --help' for more information.

            """)
    }

    @Test func aZeroRadiusSaysItMustBePositive() throws {
        let result = try CommandRunner.run(["suggest", "--radius", "0", "--db", scratch.path("m.sqlite")])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("Error: --radius must be a positive number of metres (e.g. --radius 500).\n"))
        #expect(result.stderr.components(separatedBy: "--help").count == 2)
    }

    /// A negative number is refused with a sentence, not ArgumentParser's "Missing value" (it
    /// reads `-3` as an option), whichever option and form.
    @Test(arguments: [["log", "--version", "-3"], ["suggest", "--radius", "-5"], ["versions", "--limit=-2"], ["delta", "--from", "-1"]])
    func aNegativeNumberIsRefusedWithASentence(_ arguments: [String]) throws {
        let result = try CommandRunner.run(arguments + ["--db", scratch.path("m.sqlite")])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains("takes no negative number") && !result.stderr.contains("Missing value"),
                "\(result.stderr)")
    }

    /// Global options in any number and order before the command, as git takes `-C`.
    @Test func globalOptionsComeBeforeTheCommandInAnyNumber() throws {
        let database = try scratch.baseDatabase()
        for arguments in [["--db", database.path, "--no-pager", "versions"], ["--no-pager", "--db", database.path, "versions"],
                          ["--db=\(database.path)", "--no-pager", "log", "-n", "1"]] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 0 && !result.stdout.isEmpty, "\(arguments): \(result.stderr)")
        }
    }

    /// Every command that takes a version says the same sentence for one the master does not
    /// have, and exits 1: `suggest` too.
    @Test(arguments: [["suggest", "--version", "99"], ["check", "--version", "99"], ["log", "--version", "99"], ["review", "--version", "99"],
                      ["revert", "99"]])
    func aVersionTheMasterDoesNotHaveIsOneSentence(_ arguments: [String]) throws {
        let database = try scratch.baseDatabase()
        let result = try CommandRunner.run(arguments + ["--db", database.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("data version 99 does not exist (expected 1 to 1; `station-admin versions` lists them)"), "\(result.stderr)")
    }

    @Test func aMissingPlanSaysTheFileDoesNotExist() throws {
        let database = try scratch.baseDatabase()
        let result = try CommandRunner.run(["apply", "--db", database.path, "nonexist.jsonl"])
        #expect(result.status == 1)
        #expect(result.stderr == "nonexist.jsonl: no such file (expected a JSON Lines plan, e.g. datasets/plans/2024-03-16-hokuriku.jsonl)\n")
    }

    @Test func closeAndRestoreOfferOnlyTablesThatClose() throws {
        for command in ["close", "restore"] {
            let help = try CommandRunner.run([command, "--help"]).stdout
            #expect(help.contains("(values: companies, lines, stations)"), "\(command)")
            #expect(help.contains("Example: station-admin \(command) "), "\(command)")
        }
        let refused = try CommandRunner.run(["close", "connections", "1/2/3", "--db", scratch.path("m.sqlite")])
        #expect(refused.status == 2)
    }

    @Test func everySubcommandHelpCarriesAnExample() throws {
        let commands = ["init", "diff", "import", "status", "log", "add", "edit", "transfer-line", "move-stations", "close",
                        "restore", "split", "record-split", "connect", "disconnect", "apply", "suggest", "weights", "synth",
                        "release", "delta", "verify"]
        for command in commands {
            let help = try CommandRunner.run([command, "--help"]).stdout
            #expect(help.contains("station-admin \(command) "), "\(command) --help has no example")
            #expect(help.contains("Example"), "\(command) --help has no example")
        }
        #expect(try CommandRunner.run(["--help"]).stdout.contains("--generate-completion-script"))
    }

    @Test func splitTakesColumnValuesAfterConnectTo() throws {
        let database = try scratch.baseDatabase()
        let result = try CommandRunner.run(["split", "--db", database.path, "1120101", "9920607", "--connect-to", "1120102",
                                            "station_name=八戸（新）", "--dry-run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("INSERT stations 9920607 八戸（新）"))
        #expect(result.stdout.contains("INSERT connections 11201/9920607/1120102"))
        let two = try CommandRunner.run(["split", "--db", database.path, "1120101", "9920607", "--connect-to", "1120102,1120103", "--dry-run"])
        #expect(two.stdout.contains("INSERT connections 11201/9920607/1120102") && two.stdout.contains("INSERT connections 11201/9920607/1120103"))
        let bad = try CommandRunner.run(["split", "--db", database.path, "1120101", "9920607", "--connect-to", "abc"])
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("Error: --connect-to 'abc' is not a station code"))
    }

    @Test func diffFiltersCutsAndExitsOneOnChanges() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")
        try snapshot.removeLine("station.csv", containing: "1120103,")
        let result = try CommandRunner.run(["diff", "--db", database.path, snapshot.path, "--table", "stations", "--type", "update", "--exit-code"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("  UPDATE stations 1120102 陸奥市川駅: station_name 陸奥市川 → 陸奥市川駅\n"))
        #expect(!result.stdout.contains("  DELETE stations"))
        #expect(result.stdout.hasPrefix("Changes an import would make as version 2: 2 changes\n"))
        let cut = try CommandRunner.run(["diff", "--db", database.path, snapshot.path, "--show", "0"])
        #expect(cut.stdout.contains("  … and 2 more (--show N describes more)\n"))
        #expect(cut.status == 0)
        let none = try CommandRunner.run(["diff", "--db", database.path, Fixtures.base.path, "--exit-code"])
        #expect(none.status == 0)
    }

    @Test func warningsGoToStandardError() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.appendLine("join.csv", "11201,1129999,1120101")
        for command in ["diff", "import"] {
            let result = try CommandRunner.run([command, "--db", database.path, snapshot.path])
            #expect(result.status == 0)
            #expect(!result.stdout.contains("warning:"), "\(command)")
            #expect(result.stderr.contains("warning: \(snapshot.file("join.csv")): "), "\(command)")
        }
    }

    @Test func aDryRunDoesNotPointAtALogThatStaysEmpty() throws {
        let path = scratch.path("m.sqlite")
        _ = try MasterDatabase.create(at: path)
        let result = try CommandRunner.run(["import", "--db", path, Fixtures.base.path, "--dry-run", "--show", "1"])
        #expect(result.stdout.contains("more (nothing was committed: --show N describes more, --json lists them all)"))
        #expect(!result.stdout.contains("station-admin log --version"))
    }

    @Test func importJSONListsEveryChangeWhateverShowSays() throws {
        let path = scratch.path("m.sqlite")
        _ = try MasterDatabase.create(at: path)
        let result = try CommandRunner.run(["import", "--db", path, Fixtures.base.path, "--json", "--show", "1"])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect((object["changes"] as! [Any]).count == object["total_changes"] as? Int)
        #expect(object["total_changes"] as? Int ?? 0 > 1)
    }

    @Test func countsAreSingularForOne() throws {
        let database = try scratch.baseDatabase()
        let edit = try CommandRunner.run(["edit", "--db", database.path, "stations", "1120101", "weight=2"])
        #expect(edit.stdout.hasPrefix("Committed version 2: 1 change\n"))
        let first = try CommandRunner.run(["release", "--db", database.path, "--out", scratch.path("release"), "--version", "1"])
        #expect(first.stdout.hasSuffix("No older version to verify: phones at version 0 (new installs) download the database.\n"))
        let release = try CommandRunner.run(["release", "--db", database.path, "--out", scratch.path("release")])
        #expect(release.stdout.contains("Verified with sqlite3: 1 delta applied and checked; delta, full download, app update: user records identical for versions 1…1.\n"))
        let delta = try CommandRunner.run(["delta", "--db", database.path, "--from", "1", "--output", scratch.path("d.sql")])
        #expect(delta.stderr.hasPrefix("delta 1 → 2: 1 statement\n"))
        // release and delta count the same statements for the same file.
        #expect(release.stdout.contains("delta-from-1.sql.gz") && release.stdout.contains(", 1 statement, 0 DUPLICATE"))
    }

    /// `delta --gzip` writes binary; like gzip itself it refuses a terminal (through `script`,
    /// which gives the command a pseudo-terminal).
    @Test func deltaGzipRefusesATerminal() throws {
        let database = try scratch.baseDatabase()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let log = scratch.path("typescript")
        process.arguments = ["-qfec", "\(CommandRunner.executable.path) delta --db \(database.path) --from 0 --gzip", log]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
        let screen = try String(contentsOfFile: log, encoding: .utf8)
        #expect(screen.contains("Error: --gzip writes binary data; not to a terminal (redirect it, e.g. > delta.sql.gz, or give --output FILE)."))
        let piped = try CommandRunner.run(["delta", "--db", database.path, "--from", "0", "--gzip"])
        #expect(piped.status == 0 && piped.stdout.utf8.count > 0)
    }
}
