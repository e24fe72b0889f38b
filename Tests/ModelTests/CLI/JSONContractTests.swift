import Foundation
import Testing
@testable import Model

/// docs/json.md is the contract: every example there is checked against what its command prints.
@Suite struct JSONContractTests {
    let scratch = Scratch()

    struct Example {
        let command: String
        let json: String
    }

    /// Each `<!-- command: … -->` of docs/json.md and the ```json block after it.
    static func examples() throws -> [Example] {
        let text = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/json.md"), encoding: .utf8)
        var examples: [Example] = []
        for part in text.components(separatedBy: "<!-- command: ").dropFirst() {
            let command = part.components(separatedBy: " -->")[0]
            let block = part.components(separatedBy: "```json\n")[1].components(separatedBy: "\n```")[0]
            examples.append(Example(command: command, json: block))
        }
        return examples
    }

    /// The keys of a JSON value at every depth: objects by their keys, arrays by their first element.
    static func shape(_ value: Any) -> String {
        switch value {
        case let object as [String: Any]:
            return "{" + object.keys.sorted().map { "\($0): \(shape(object[$0]!))" }.joined(separator: ", ") + "}"
        case let array as [Any]:
            return array.first.map { "[\(shape($0))]" } ?? "[]"
        default:
            return "value"  // numbers, strings, booleans and null alike: the contract is about keys
        }
    }

    @Test func everyDocumentedCommandPrintsTheDocumentedKeys() throws {
        // Version 1 the base fixture, version 2 a split by "taro", version 3 a long connection; a release;
        // a snapshot with a rename.
        let path = scratch.path("m.sqlite")
        _ = try MasterDatabase.create(at: path)
        #expect(try CommandRunner.run(["import", "--db", path, Fixtures.base.path, "--memo", "base"]).status == 0)
        #expect(try CommandRunner.run(["split", "--db", path, "1120101", "9920607", "--memo", "Aoimori", "--author", "taro"]).status == 0)
        // Version 3: a connection that check warns about.
        #expect(try CommandRunner.run(["connect", "--db", path, "99001", "9900107", "1120120", "--memo", "long"]).status == 0)
        #expect(try CommandRunner.run(["release", "--db", path, "--out", scratch.path("release"), "--no-verify"]).status == 0)
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")

        let examples = try Self.examples()
        #expect(examples.count == 11)
        for example in examples {
            var arguments = example.command.replacingOccurrences(of: "{SCRATCH}", with: scratch.url.path)
                .split(separator: " ").map(String.init)
            if arguments[0] == "diff" { arguments.insert(snapshot.path, at: 1) }
            let result = try CommandRunner.run(arguments + ["--db", path])
            #expect(result.status == 0, "\(example.command): \(result.stderr)")
            let printed = arguments.contains("--nl") ? String(result.stdout.split(separator: "\n")[0]) : result.stdout
            let actual = try JSONSerialization.jsonObject(with: Data(printed.utf8), options: [.fragmentsAllowed])
            let documented = try JSONSerialization.jsonObject(with: Data(example.json.utf8))
            #expect(Self.shape(actual) == Self.shape(documented), "\(example.command) prints other keys than docs/json.md says")
        }
    }

    @Test func nullsArePrintedNotDropped() throws {
        let database = try scratch.baseDatabase()
        #expect(try CommandRunner.run(["edit", "--db", database.path, "stations", "1120101", "weight=2"]).status == 0)
        let log = try CommandRunner.run(["log", "--db", database.path, "--nl", "-n", "1"])
        let row = try JSONSerialization.jsonObject(with: Data(log.stdout.utf8)) as! [String: Any]
        #expect(row["memo"] is NSNull)
    }

    @Test func deltaJSONNeedsAnOutputFileForTheSQL() throws {
        let database = try scratch.baseDatabase()
        let result = try CommandRunner.run(["delta", "--db", database.path, "--from", "0", "--json"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("Error: --json prints the summary on stdout, where the SQL would go: give --output FILE for the SQL.\n"))
    }
}
