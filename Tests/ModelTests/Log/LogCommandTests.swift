import Foundation
import StationCheck
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationSchema
import Testing

/// `log` reads like `git log`: each change with its row's name and values, `--oneline`,
/// `--reverse`, `--since`/`--until` by version or date, `--author`, and a pager on a terminal.
@Suite struct LogCommandTests {
    let scratch = Scratch()

    /// Version 1 the base fixture, version 2 a weight by hanako, version 3 a close by taro.
    private func history() throws -> MasterDatabase {
        let base = try scratch.baseDatabase()
        let hanako = try MasterDatabase.open(at: base.path, author: "hanako")
        try Curator(hanako).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["weight": "2"]))])
        let taro = try MasterDatabase.open(at: base.path, author: "taro")
        try Curator(taro).apply([LocatedOperation(.close(table: .stations, key: ["9900102"], date: nil, cascade: false))])
        return base
    }

    private func log(_ database: MasterDatabase, _ arguments: [String]) throws -> [String] {
        let result = try CommandRunner.run(["log", "--db", database.path] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func eachLineNamesTheRowAndItsChangeAndOnelineKeepsTheShortForm() throws {
        let database = try history()
        let newest = try log(database, ["-n", "2"])
        #expect(newest.count == 2)
        #expect(newest[0].hasSuffix("DELETE stations 9900102 テスト東: e_status 0 → 2"), "\(newest[0])")
        #expect(newest[1].hasSuffix("UPDATE stations 9900101 テスト中央: weight 13 → 2"), "\(newest[1])")
        #expect(newest[1].contains("  v2  "))
        let short = try log(database, ["-n", "1", "--oneline"])
        #expect(short.count == 1 && short[0].hasSuffix("\tv3\t" + short[0].split(separator: "\t")[2] + "\tDELETE\tstations 9900102"), "\(short)")
    }

    @Test func reverseSinceUntilAndAuthorSelectAsGitLogDoes() throws {
        let database = try history()
        let all = try LogReader(database).log(LogFilter(newestFirst: false))
        let oldestFirst = try log(database, ["--reverse", "--oneline"])
        #expect(oldestFirst.map { $0.split(separator: "\t")[0] } == all.map { Substring(String($0.upID)) })
        #expect(try log(database, ["--since", "v2", "--oneline"]).count == 2)
        #expect(try log(database, ["--since", "2", "--until", "2", "--oneline"]).count == 1)
        #expect(try log(database, ["--until", "v1", "--oneline"]).count == all.filter { $0.userVersion == 1 }.count)
        let day = String(all[0].updateDate.prefix(10))
        #expect(try log(database, ["--since", day, "--until", day, "--oneline"]).count == all.count, "a date bound keeps its whole day")
        #expect(try log(database, ["--until", "2000-01-01"]).isEmpty)
        #expect(try log(database, ["--since", all.last!.updateDate, "--oneline"]).count >= 1)
        let byTaro = try log(database, ["--author", "taro"])
        #expect(byTaro.count == 1 && byTaro[0].contains("9900102"), "\(byTaro)")
        #expect(try log(database, ["--author", "nobody"]).isEmpty)
        let wrong = try CommandRunner.run(["log", "--db", database.path, "--since", "last tuesday"])
        #expect(wrong.status == 2 && wrong.stderr.contains("expected a data version (4 or v4) or a date"), "\(wrong.stderr)")
    }

    @Test func aKeysStoryReadsOldestFirstAndReverseTurnsIt() throws {
        let database = try history()
        let story = try log(database, ["--key", "9900101"])
        #expect(story.count == 2 && story[0].contains("INSERT stations 9900101") && story[1].contains("weight 13 → 2"), "\(story)")
        #expect(try log(database, ["--key", "9900101", "--reverse"]) == story.reversed())
    }

    /// `log --json` and `--nl` without `--key` carry the name and values the text shows, not only the row.
    @Test func theLogsJSONHasTheValuesTheTextShows() throws {
        let database = try history()
        let text = try log(database, ["-n", "2"])
        let json = try CommandRunner.run(["log", "--db", database.path, "-n", "2", "--json"])
        let entries = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [[String: Any]]
        #expect(entries.count == 2 && entries[1]["name"] as? String == "テスト中央", "\(json.stdout)")
        let weight = (entries[1]["fields"] as! [[String: Any]]).first!
        #expect(weight["column"] as? String == "weight" && weight["old"] as? Int == 13 && weight["new"] as? Int == 2, "\(weight)")
        #expect(text[1].hasSuffix("テスト中央: weight 13 → 2"))
        let lines = try log(database, ["-n", "2", "--nl"])
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        #expect(first["name"] as? String == "テスト東" && (first["update"] as? [String: Any])?["type"] as? String == "DELETE", "\(lines[0])")
    }

    /// e_status is an integer in every JSON, the story's included.
    @Test func aStorysJSONGivesNumbersForNumberColumns() throws {
        let database = try history()
        let result = try CommandRunner.run(["log", "--db", database.path, "--key", "9900102", "--json"])
        let story = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [[String: Any]]
        let close = (story.last!["fields"] as! [[String: Any]]).first { $0["column"] as? String == "e_status" }!
        #expect(close["old"] as? Int == 0 && close["new"] as? Int == 2, "\(close)")
        #expect(!result.stdout.contains("\"2\""))
    }

    /// On a terminal the output goes through $PAGER; with --no-pager, in a pipe, or with PAGER=cat it does not.
    @Test func longOutputGoesThroughThePagerOnATerminalOnly() throws {
        let database = try history()
        let terminal = Terminal(scratch: scratch)
        let pager = ["PAGER": "sed s/^/paged:/", "TERM": "xterm"]
        for command in [["log", "-n", "2"], ["check"], ["diff", Fixtures.base.path, "--show", "3"]] {
            let paged = try terminal.run(command + ["--db", database.path], environment: pager)
            #expect(paged.contains("paged:"), "\(command): \(paged)")
            let unpaged = try terminal.run(command + ["--db", database.path, "--no-pager"], environment: pager)
            #expect(!unpaged.contains("paged:"), "\(command)")
        }
        let piped = try CommandRunner.run(["log", "--db", database.path, "-n", "2"], environment: pager)
        #expect(piped.stdout.split(separator: "\n").count == 2 && !piped.stdout.contains("paged:"))
        let cat = try terminal.run(["log", "--db", database.path, "-n", "2"], environment: ["PAGER": "cat", "TERM": "xterm"])
        #expect(cat.contains("weight 13 → 2"))
        // The real default: less -FRX prints a screenful and quits.
        let less = try terminal.run(["log", "--db", database.path, "-n", "2"], environment: ["TERM": "xterm"], unset: ["CI", "PAGER", "LESS"])
        #expect(less.contains("テスト中央: weight 13 → 2"))
    }
}
