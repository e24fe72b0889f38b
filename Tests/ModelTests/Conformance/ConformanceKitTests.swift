import Foundation
import StationConformance
import Testing

/// The conformance kit has teeth: `station-phone` passes every scenario, a deliberately naive
/// client (curl, gunzip and sqlite3) fails exactly those that need what it leaves out, and the
/// reports are what a person and a CI read.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct ConformanceKitTests {
    let scratch = Scratch()

    /// station-phone's command line, with transfer limits a test can wait for.
    static var stationPhone: String {
        "\(ClientCommand.quotedForShell(StationPhoneProgram.url.path)) update --db {db} --from {url} --trust {key} --grace 2 --idle-timeout 5"
    }

    static let naiveClient = Fixtures.root.appendingPathComponent("conformance/naive-client").path

    /// The deadline of a shell client's runs here: bash, python3 and sqlite3 start beside a whole
    /// test run's processes on two cores; the bounds scenarios' endless answers last 60 s, so
    /// they still meet it.
    static let loadedHostDeadline = 45.0

    @Test func stationPhonePassesEveryScenarioWithinTwoMinutes() throws {
        let junit = scratch.path("conformance.xml")
        let started = Date()
        let result = try CommandRunner.run(["conformance", "--client", Self.stationPhone, "--work-folder", scratch.path("kit"),
                                            "--json", "--junit", junit])
        let wall = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.stderr.suffix(3000))")
        let report = try JSONDecoder().decode(ConformanceReport.self, from: Data(result.stdout.utf8))
        #expect(report.scenarios.count == ConformanceScenario.all.count && report.scenarios.count >= 30)
        #expect(report.failed.map(\.id) == [])
        #expect(Set(report.scenarios.map(\.id)).count == report.scenarios.count)
        // Every kill scenario killed the client at least 20 times, each followed by a whole database.
        let kills = report.scenarios.filter { $0.group == .recovery && $0.id.hasPrefix("recovery.killed") }
        #expect(kills.count == 2 && kills.allSatisfy { $0.kills >= 20 }, "\(kills.map { ($0.id, $0.kills) })")
        // Each run measured: station-phone holds far less than the bound, even against the gzip bomb.
        #expect(report.scenarios.allSatisfy { $0.peakMemoryBytes > 0 && $0.peakMemoryBytes < report.memoryBoundBytes })
        #expect(wall < 120, "the kit took \(wall) s")
        // The JSON is what docs/schemas/conformance.schema.json says; the JUnit file what CI servers read.
        #expect(try scratch.schemaFindings(result.stdout, against: "docs/schemas/conformance.schema.json") == "")
        #expect(try Self.junitFindings(junit) == "")
        // docs/json.md's example holds the same keys at every depth, and its schema's.
        let documented = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/json.md"), encoding: .utf8)
            .components(separatedBy: "## `conformance --json`")[1].components(separatedBy: "```json\n")[1].components(separatedBy: "\n```")[0]
        #expect(try scratch.schemaFindings(documented, against: "docs/schemas/conformance.schema.json") == "")
        let example = try #require(try JSONSerialization.jsonObject(with: Data(documented.utf8)) as? [String: Any])
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(example.keys.sorted() == printed.keys.sorted())
        #expect(((example["scenarios"] as? [[String: Any]])?.first?.keys.sorted()) == ((printed["scenarios"] as? [[String: Any]])?.first?.keys.sorted()))
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.components(separatedBy: "<testcase ").count - 1 == report.scenarios.count && !xml.contains("<failure"))
        // A scenario's line on stderr as each ended, under --json.
        #expect(result.stderr.contains("pass  freshness.rollback"))
    }

    @Test func theNaiveClientFailsExactlyTheTrustFreshnessAndBoundScenarios() async throws {
        let report = try await loadedRun("\(Self.naiveClient) {db} {url}", in: "naive")
        // Its honest paths pass: a delta in one transaction, a full download installed in place.
        // First, with their own words: a CI log keeps only the start of a long message.
        let honestPaths: Set<ConformanceScenario.Group> = [.delta, .full, .splits, .schema, .recovery]
        let honestFailures = report.scenarios.filter { honestPaths.contains($0.group) && !$0.passed }
        #expect(honestFailures.map(\.id) == [], "\(honestFailures.map(\.line).joined(separator: "\n"))")
        let failed = Set(report.failed.map(\.id))
        #expect(failed.subtracting(honestFailures.map(\.id)) == [
            "trust.manifest-altered", "trust.unsigned", "trust.other-key", "trust.delta-altered", "trust.database-altered",
            "trust.delta-result-not-its-version", "trust.delta-result-not-its-content",
            "freshness.rollback-with-forward-path", "freshness.expired", "freshness.clock-behind", "freshness.other-dataset",
            "bounds.endless-manifest", "bounds.huge-manifest", "bounds.one-byte-a-second", "bounds.gzip-bomb",
        ], "\(report.failed.map(\.line).joined(separator: "\n").prefix(2000))")
        let problems = Dictionary(uniqueKeysWithValues: report.failed.map { ($0.id, $0.problems.joined(separator: "; ")) })
        // Each for its own reason: it ran what it should have refused, waited without end, or held the bomb.
        #expect(problems["trust.unsigned"]?.contains("exited 0: the client accepted what it must refuse") == true)
        #expect(problems["trust.delta-altered"]?.contains("is missing") == true)
        #expect(problems["trust.delta-result-not-its-version"]?.contains("the database is at version 4, not 5") == true)
        #expect(problems["bounds.one-byte-a-second"]?.contains("still running after the 45 s deadline") == true)
        #expect(["MiB of memory, over the bound of 256 MiB", "still running after the 45 s deadline"].contains { problems["bounds.gzip-bomb"]?.contains($0) == true })
        // The JUnit file of a failing run validates too: the problems quote the client's words.
        try report.junitXML().write(toFile: scratch.path("naive.xml"), atomically: true, encoding: .utf8)
        #expect(try Self.junitFindings(scratch.path("naive.xml")) == "")
        #expect(try String(contentsOfFile: scratch.path("naive.xml"), encoding: .utf8).components(separatedBy: "<failure ").count - 1 == 15)
    }

    /// The kit run against a shell `command` in the work folder `folder`, with the loaded host's
    /// deadline, four scenarios at once.
    func loadedRun(_ command: String, in folder: String, only: [String] = []) async throws -> ConformanceReport {
        var configuration = ConformanceKit.Configuration(client: try ClientCommand(command), workFolder: scratch.path(folder))
        configuration.deadline = Self.loadedHostDeadline
        configuration.parallelScenarios = 4
        configuration.only = only
        return try await ConformanceKit(configuration).run()
    }

    static let referenceClient = Fixtures.root.appendingPathComponent("conformance/reference-client").path

    /// The reference updater, written from docs/clients.md alone in Python, passes every scenario.
    @Test func theReferenceUpdaterFromTheDocsPassesEveryScenario() async throws {
        let report = try await loadedRun("\(Self.referenceClient) {db} {url} {key}", in: "reference")
        #expect(report.scenarios.count == ConformanceScenario.all.count)
        #expect(report.failed.map(\.line) == [])
    }

    /// Each promise of the protocol, and the scenarios that fail a copy of the reference updater
    /// without it (`REFERENCE_MUTANT`, the reference's own table of mutants): a promise whose
    /// mutant no scenario fails is a promise the kit does not test. A promise added later comes
    /// with its mutant here.
    static let mutants: [(mutant: String, caughtBy: Set<String>)] = [
        ("signature", ["trust.manifest-altered", "trust.unsigned", "trust.other-key"]),
        ("sequence", ["freshness.rollback", "freshness.rollback-with-forward-path"]),
        ("expiry", ["freshness.expired", "freshness.clock-behind"]),
        ("expiry-floor", ["freshness.clock-behind"]),
        ("dataset", ["freshness.other-dataset"]),
        ("content-hash", ["trust.delta-result-not-its-content"]),
        // The app's column on `stations` (the kit's `ClientDatabase.appColumn`) is hashed: every delta is refused.
        ("content-columns", ["delta.from-1", "delta.from-2", "delta.from-3", "delta.from-4", "update.in-two-steps", "splits.copied-once",
                             "schema.grown-by-delta"]),
        ("inflate-bound", ["bounds.gzip-bomb"]),
        ("download-bound", ["bounds.endless-manifest", "bounds.huge-manifest"]),
        ("rate-floor", ["bounds.one-byte-a-second"]),
        // The kills during a delta catch it too when one lands inside its statements (most runs).
        ("one-transaction", ["trust.delta-result-not-its-version", "trust.delta-result-not-its-content"]),
        ("split-over-record", ["full.from-1", "splits.chain-by-full"]),
        ("app-tables", ["full.from-1", "full.from-2", "full.from-3", "full.from-4", "splits.chain-by-full", "recovery.killed-during-full"]),
        ("schema", ["full.from-1", "full.from-2", "full.from-3", "full.from-4", "splits.chain-by-full", "recovery.killed-during-full"]),
    ]

    @Test func everyPromiseHasAMutantAndEveryMutantAScenarioThatCatchesIt() throws {
        let declared = try String(contentsOfFile: Self.referenceClient, encoding: .utf8)
            .components(separatedBy: "MUTANTS = {")[1].components(separatedBy: "\n}")[0]
            .split(separator: "\n").compactMap { $0.split(separator: "\"").dropFirst().first.map(String.init) }
        #expect(declared == Self.mutants.map(\.mutant))
        let ids = Set(ConformanceScenario.all.map(\.id))
        for (mutant, caughtBy) in Self.mutants {
            #expect(!caughtBy.isEmpty && caughtBy.isSubset(of: ids), "\(mutant): \(caughtBy.subtracting(ids))")
        }
    }

    /// Each mutant fails every scenario its row names (one that passes a scenario of its row
    /// lost its teeth), run with the rest of their groups, which pass but for a kill scenario
    /// whose instants happened to land in the mutant's weakness.
    @Test(.serialized, arguments: mutants.map(\.mutant))
    func eachMutantOfTheReferenceFailsTheScenariosOfItsPromise(mutant: String) async throws {
        let caughtBy = try #require(Self.mutants.first { $0.mutant == mutant }?.caughtBy)
        let groups = Set(caughtBy.compactMap { $0.split(separator: ".").first.map(String.init) })
        let report = try await loadedRun("REFERENCE_MUTANT=\(mutant) \(Self.referenceClient) {db} {url} {key}", in: "mutant-\(mutant)", only: groups.sorted())
        let failed = Set(report.failed.map(\.id))
        #expect(caughtBy.isSubset(of: failed), "\(report.scenarios.filter { caughtBy.contains($0.id) }.map(\.line).joined(separator: "\n").prefix(2000))")
        #expect(failed.subtracting(caughtBy).allSatisfy { $0.hasPrefix("recovery.killed-") }, "\(report.failed.map(\.line).joined(separator: "\n").prefix(2000))")
    }

    /// The web service's sync, through an adapter that mirrors its PostgreSQL schema into the
    /// kit's SQLite file after each committed run (Fixtures/conformance/sync-postgres-adapter),
    /// passes the scenarios that apply to a server: trust, freshness (rollback, expiry, dataset),
    /// splits copied once, bounds. Its transfers give up after 30 s of less than 1 KiB/s: the
    /// deadline is above that.
    @Test func syncPostgresPassesTheScenariosThatApplyToIt() async throws {
        guard let server = PostgresServer.shared else {
            Issue.record("PostgreSQL is not installed (scripts/test and .ci/run install postgresql)")
            return
        }
        let database = try server.makeDatabase()
        let adapter = Fixtures.root.appendingPathComponent("conformance/sync-postgres-adapter").path
        let environment = ["CONFORMANCE_POSTGRES_URL": server.address(database), "STATION_ADMIN": CommandRunner.executable.path,
                           "PSQL": server.binaries + "/psql"].map { "\($0.key)=\(ClientCommand.quotedForShell($0.value))" }
        var configuration = ConformanceKit.Configuration(
            client: try ClientCommand(environment.joined(separator: " ") + " \(ClientCommand.quotedForShell(adapter)) {db} {url} {key}"),
            workFolder: scratch.path("web"))
        // Not `freshness.rollback-with-forward-path`: its cut run is the adapter's first sync
        // (`--baseline`), which, like a phone's new install, has no state to record the manifest
        // in; a later run records it before its download (PostgresSyncTests.aCutDownload…).
        let groups: Set<ConformanceScenario.Group> = [.trust, .freshness, .splits, .bounds]
        configuration.only = ConformanceScenario.all.filter { groups.contains($0.group) && $0.id != "freshness.rollback-with-forward-path" }.map(\.id)
        configuration.deadline = 45
        configuration.parallelScenarios = 6
        let report = try await ConformanceKit(configuration).run()
        #expect(report.scenarios.count == 20)
        #expect(report.failed.map(\.line) == [])
        // The sync ran: a schema per kit database, and the split's records copied for user 1 in PostgreSQL itself.
        #expect(try Int(server.psql(database, "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'kit\\_%'")) ?? 0 >= 18)
    }

    /// A client that installs a full download by swapping the files (the carry-over's way) keeps
    /// the records but loses the app's own tables: every full-path scenario with them says so.
    @Test func aClientThatSwapsFilesLosesTheAppsTablesAndTheKitSaysSo() async throws {
        var configuration = ConformanceKit.Configuration(client: try ClientCommand("NAIVE_SWAPS_FILES=1 \(Self.naiveClient) {db} {url}"),
                                                         workFolder: scratch.path("swapping"))
        configuration.deadline = Self.loadedHostDeadline
        configuration.only = ["full", "splits.chain-by-full"]
        let report = try await ConformanceKit(configuration).run()
        #expect(report.failed.map(\.id) == ["full.from-1", "full.from-2", "full.from-3", "full.from-4", "splits.chain-by-full"])
        #expect(report.failed.allSatisfy { $0.problems.joined().contains("the app's own tables changed: gone: ") && $0.problems.joined().contains("table app_visits: ") },
                "\(report.failed.map(\.line))")
        // Its records are all there: only the app's tables are lost.
        #expect(report.failed.allSatisfy { !$0.problems.joined().contains("record") })
        #expect(report.scenarios.first { $0.id == "full.new-install" }?.passed == true)
    }

    /// The app's spatial index and foreign keys are checked as well as compared: a client that
    /// updates honestly and then leaves the R-tree out of step with itself, or a photo whose
    /// visit is gone, fails with what broke.
    @Test func aClientThatBreaksTheAppsRTreeOrForeignKeysIsNamed() async throws {
        let breaking = "sqlite3 {db} 'PRAGMA foreign_keys = OFF; DELETE FROM app_places_rowid WHERE rowid = 3; DELETE FROM app_visits WHERE id = 3'"
        var configuration = ConformanceKit.Configuration(client: try ClientCommand("\(Self.naiveClient) {db} {url} && \(breaking)"),
                                                         workFolder: scratch.path("breaking"))
        configuration.deadline = Self.loadedHostDeadline
        configuration.only = ["delta.from-4"]
        let report = try await ConformanceKit(configuration).run()
        let problems = report.failed.first?.problems.joined(separator: "; ") ?? ""
        #expect(report.failed.map(\.id) == ["delta.from-4"])
        #expect(problems.contains("app_places fails its integrity check: "), "\(problems)")
        #expect(problems.contains("app_visit_photos: 1 rows name a visit that is gone"), "\(problems)")
    }

    /// The kit serves and checks on threads of its own: in a process whose cooperative threads
    /// are all held while the client runs (an in-process kit beside a test run's synchronous
    /// suites), an honest client's full download is still served and checked within the deadline.
    /// Held in a child process of this test binary, so that no other test here waits on the hold.
    @Test func aProcessWhoseCooperativeThreadsAreAllHeldStillGetsItsScenariosServed() throws {
        let child = try CommandRunner.run(["--testing-library", "swift-testing", "--filter", "scenarioServedWhileTheCooperativeThreadsAreHeld"],
                                          environment: [Self.heldThreadsFolder: scratch.path("held")],
                                          program: URL(fileURLWithPath: CommandLine.arguments[0]))
        let said = child.stdout + child.stderr
        #expect(child.status == 0 && said.contains("Test scenarioServedWhileTheCooperativeThreadsAreHeld() passed"), "\(said.suffix(3000))")
    }

    static let heldThreadsFolder = "CONFORMANCE_HELD_THREADS_FOLDER"

    /// The child's half: as the client starts (a marker it writes), every cooperative thread is
    /// taken by a task that blocks until the kit reports the scenario ended, or 60 s.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[heldThreadsFolder] != nil))
    func scenarioServedWhileTheCooperativeThreadsAreHeld() async throws {
        let folder = try #require(ProcessInfo.processInfo.environment[Self.heldThreadsFolder])
        let marker = folder + "/client-started"
        let threads = ProcessInfo.processInfo.activeProcessorCount
        let release = DispatchSemaphore(value: 0)
        let held = Locked(0), heldWhenItEnded = Locked(-1)
        for _ in 0..<threads {
            Task.detached {
                while !FileManager.default.fileExists(atPath: marker) { try? await Task.sleep(for: .milliseconds(5)) }
                held.withLock { $0 += 1 }
                _ = release.wait(timeout: .now() + 60)
            }
        }
        var configuration = ConformanceKit.Configuration(
            client: try ClientCommand("touch \(ClientCommand.quotedForShell(marker)) && sleep 0.5 && \(Self.naiveClient) {db} {url}"),
            workFolder: folder + "/kit")
        configuration.deadline = 30
        configuration.only = ["full.from-1"]
        let report = try await ConformanceKit(configuration).run { progress in
            guard case .finished = progress else { return }
            heldWhenItEnded.withLock { $0 = held.withLock { $0 } }
            for _ in 0..<threads { release.signal() }
        }
        // Every cooperative thread was held while the kit served and checked the client's run.
        #expect(heldWhenItEnded.withLock { $0 } == threads)
        #expect(report.failed.map(\.line) == [])
        #expect(report.scenarios.map(\.id) == ["full.from-1"])
    }

    @Test func oneScenarioRerunsByItsIdAndAFailureExitsOne() throws {
        let rerun = try CommandRunner.run(["conformance", "--client", "\(Self.naiveClient) {db} {url}", "--scenario", "trust.unsigned",
                                           "--work-folder", scratch.path("one")])
        #expect(rerun.status == 1)
        #expect(rerun.stdout.hasPrefix("[1/1] FAIL  trust.unsigned"), "\(rerun.stdout)")
        #expect(rerun.stdout.contains("0 of 1 scenarios passed") && rerun.stdout.contains("failed: trust.unsigned"))
        #expect(rerun.stderr.contains("\(scratch.path("one"))/scenarios/ID/run-N.log"))
        let log = try String(contentsOfFile: scratch.path("one/scenarios/trust.unsigned/run-1.log"), encoding: .utf8)
        #expect(log.isEmpty || !log.contains("Error"), "\(log)")
    }

    @Test func theCommandRefusesWhatItCannotRun() throws {
        let noURL = try CommandRunner.run(["conformance", "--client", "app --db {db}"])
        #expect(noURL.status == 2 && noURL.stderr.contains("has no {url}"))
        let unknown = try CommandRunner.run(["conformance", "--client", "app {db} {url}", "--scenario", "trust.unsgned"])
        #expect(unknown.status == 2 && unknown.stderr.contains("no scenario or group 'trust.unsgned'"))
        let listed = try CommandRunner.run(["conformance", "--list"])
        #expect(listed.stdout.split(separator: "\n").count == ConformanceScenario.all.count)
        try FileManager.default.createDirectory(atPath: scratch.path("used/x"), withIntermediateDirectories: true)
        let used = try CommandRunner.run(["conformance", "--client", "app {db} {url}", "--work-folder", scratch.path("used")])
        #expect(used.status == 1 && used.stderr.contains("the work folder must be new or empty"))
        #expect(FileManager.default.fileExists(atPath: scratch.path("used/x")))
    }

    /// What xmllint says of the file against the JUnit schema; "" when it validates.
    static func junitFindings(_ path: String) throws -> String {
        let result = try CommandRunner.run(["--noout", "--schema", Fixtures.root.appendingPathComponent("conformance/junit.xsd").path, path],
                                           program: URL(fileURLWithPath: "/usr/bin/xmllint"))
        return result.status == 0 ? "" : result.stderr
    }
}
