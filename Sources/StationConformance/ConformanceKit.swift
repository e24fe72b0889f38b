import Foundation
import StationSupport

/// `station-admin conformance`: the release protocol's scenarios (`ConformanceScenario.all`) run
/// against any client's updater through its command line (`ClientCommand`), as TUF's
/// conformance suite runs every client implementation against one set of repositories.
///
/// ```swift
/// let kit = ConformanceKit(.init(client: try ClientCommand("station-phone update --db {db} --from {url} --trust {key}"),
///                                workFolder: "/tmp/conformance"))
/// let report = try await kit.run()
/// print(report.failed.map(\.id))
/// ```
///
/// The kit makes its own signed releases (`ConformanceReleases`), serves them on loopback
/// (`MisbehavingServer`), prepares the client's database for each scenario, runs the command and
/// checks what it left: the version, the release tables equal to the release's client database,
/// every user record kept and each split's copied once and never over a record, the app's own
/// tables untouched, nothing changed on a refusal; every run within the deadline and the memory
/// bound, measured.
public struct ConformanceKit: Sendable {
    public struct Configuration: Sendable {
        public var client: ClientCommand
        /// A new or empty folder for the releases and the client databases.
        public var workFolder: String
        /// The longest one run may take, in seconds; the kit kills it then.
        public var deadline: Double = 20
        /// The largest resident memory one run may reach (its processes' largest).
        public var memoryBoundBytes = 256 << 20
        /// The most one run may write (its processes' `wchar`, `/proc/PID/io`): a client that
        /// inflates a bomb to a file instead of memory crosses it; every honest run of the kit's
        /// small releases writes a few MiB.
        public var writtenBoundBytes = 256 << 20
        /// Scenario ids or group names to run; empty runs every scenario.
        public var only: [String] = []
        /// Decides the kill instants: the same seed, the same instants.
        public var seed: UInt64 = 1
        /// Scenarios run at once (most of a run is waiting on the client or the network).
        public var parallelScenarios = 3

        public init(client: ClientCommand, workFolder: String) {
            self.client = client
            self.workFolder = workFolder
        }
    }

    /// What the kit tells while it runs.
    public enum Progress: Sendable {
        /// The releases are being made.
        case preparing
        /// A scenario ended: its result, how many have ended, of how many.
        case finished(ScenarioResult, done: Int, total: Int)
    }

    public let configuration: Configuration

    public init(_ configuration: Configuration) { self.configuration = configuration }

    /// The scenarios `only` picks, in the catalog's order.
    public func selectedScenarios() throws -> [ConformanceScenario] { try selecting(configuration.only) }

    /// The scenarios `names` (ids or groups) pick, in the catalog's order; all for none.
    public func selecting(_ names: [String]) throws -> [ConformanceScenario] {
        guard !names.isEmpty else { return ConformanceScenario.all }
        let known = ConformanceScenario.all.map(\.id) + ConformanceScenario.Group.allCases.map(\.rawValue)
        for name in names where !known.contains(name) {
            throw ConformanceError.unknownScenario(name, known: ConformanceScenario.Group.allCases.map(\.rawValue) + ["or a scenario id (`conformance --list`)"])
        }
        return ConformanceScenario.all.filter { names.contains($0.id) || names.contains($0.group.rawValue) }
    }

    /// Runs the selected scenarios; a scenario that fails is in the report, not thrown.
    /// - Throws: `ConformanceError` when the kit cannot prepare (a work folder in use, a command without placeholders).
    public func run(progress: @escaping @Sendable (Progress) -> Void = { _ in }) async throws -> ConformanceReport {
        let scenarios = try selectedScenarios()
        let work = configuration.workFolder
        if let contents = try? FileManager.default.contentsOfDirectory(atPath: work), !contents.isEmpty {
            throw ConformanceError.workFolderNotEmpty(work)
        }
        let started = ContinuousClock.now
        progress(.preparing)
        let releases: ConformanceReleases
        do {
            releases = try ConformanceReleases.make(in: (work as NSString).appendingPathComponent("releases"))
        } catch let error as ConformanceError {
            throw error
        } catch {
            throw ConformanceError.kit(ErrorText.describe(error))
        }
        let configuration = self.configuration
        // The server's answers, the scenarios' checks and their waits for the client, all on the
        // kit's own threads: what else this process runs cannot hold them up (`KitThreads`).
        let threads = KitThreads(count: max(1, configuration.parallelScenarios) + 2)
        defer { threads.finish() }
        let results = try await withTaskExecutorPreference(threads) {
            try await MisbehavingServer(releases: releases).serving { base in
                try await withThrowingTaskGroup(of: ScenarioResult.self) { group in
                    var pending = scenarios[...], results: [ScenarioResult] = []
                    func start(_ scenario: ConformanceScenario) {
                        group.addTask { try await ScenarioRunner(scenario: scenario, releases: releases, baseURL: base, configuration: configuration).run() }
                    }
                    for _ in 0..<max(1, configuration.parallelScenarios) { if let next = pending.popFirst() { start(next) } }
                    while let result = try await group.next() {
                        results.append(result)
                        progress(.finished(result, done: results.count, total: scenarios.count))
                        if let next = pending.popFirst() { start(next) }
                    }
                    return results
                }
            }
        }
        let order = Dictionary(uniqueKeysWithValues: scenarios.enumerated().map { ($1.id, $0) })
        return ConformanceReport(
            client: configuration.client.template, seed: configuration.seed, deadlineSeconds: configuration.deadline,
            memoryBoundBytes: configuration.memoryBoundBytes,
            scenarios: results.sorted { order[$0.id, default: 0] < order[$1.id, default: 0] },
            seconds: ClientProcess.seconds(since: started))
    }
}

/// One scenario's runs and checks.
struct ScenarioRunner: Sendable {
    let scenario: ConformanceScenario
    let releases: ConformanceReleases
    let baseURL: String
    let configuration: ConformanceKit.Configuration

    func run() async throws -> ScenarioResult {
        let folder = (configuration.workFolder as NSString).appendingPathComponent("scenarios/\(scenario.id)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var result = ScenarioResult(scenario)
        let started = ContinuousClock.now
        do {
            try await check(in: folder, &result)
        } catch {
            result.problems.append("the kit could not check it: \(ErrorText.describe(error))")
        }
        result.seconds = ClientProcess.seconds(since: started)
        return result
    }

    private func url(_ run: ConformanceScenario.Run) -> String { "\(baseURL)/\(run.behaviour.rawValue)/\(run.folder.rawValue)/" }

    private func launch(_ run: ConformanceScenario.Run, database: String, folder: String, killAfter: Double? = nil,
                        _ result: inout ScenarioResult) async throws -> ClientRunOutcome {
        let line = configuration.client.line(database: database, url: url(run), key: releases.trustedKeyPath)
        result.runs += 1
        let temporary = folder + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let outcome = try await ClientProcess.run(line, logFile: folder + "/run-\(result.runs).log", temporaryFolder: temporary,
                                                  deadline: configuration.deadline,
                                                  killAfter: killAfter)
        result.peakMemoryBytes = max(result.peakMemoryBytes, outcome.peakMemoryBytes)
        return outcome
    }

    private func check(in folder: String, _ result: inout ScenarioResult) async throws {
        let database = try ClientDatabase.prepare(scenario.start, releases: releases, at: folder + "/client.sqlite")
        let appBefore = try database.appSnapshot()
        let kitNames = try database.kitObjectNames(releases: releases)
        if scenario.kills > 0, let first = scenario.runs.first {
            try await kills(first, database, appBefore: appBefore, kitNames: kitNames, folder: folder, &result)
            guard result.problems.isEmpty else { return }
        }
        for (index, run) in scenario.runs.enumerated() {
            var before = try database.snapshot()
            let outcome = try await launch(run, database: database.path, folder: folder, &result)
            let label = scenario.runs.count > 1 ? "run \(index + 1) (\(run.folder.rawValue), \(run.behaviour.rawValue)): " : ""
            var problems = bounds(outcome)
            var expectation = run.expectation
            if case .reachesOrRefuses(let version) = expectation {
                expectation = outcome.status == 0 ? .reaches(version) : .refuses
            }
            switch expectation {
            case .reachesOrRefuses:
                break
            case .reaches(let version):
                if outcome.status != 0 && !outcome.deadlineExceeded {
                    problems.append("exited \(outcome.status.map(String.init) ?? "by a signal"), expected 0 (it said: \(outcome.output.suffix(400)))")
                }
                if !outcome.deadlineExceeded && outcome.status == 0 {
                    problems += try database.problems(reaching: version, releases: releases, appBefore: appBefore)
                }
            case .refuses, .unchanged:
                let refuses = expectation == .refuses
                if refuses && outcome.status == 0 { problems.append("exited 0: the client accepted what it must refuse") }
                if !refuses && outcome.status != 0 && !outcome.deadlineExceeded {
                    problems.append("exited \(outcome.status.map(String.init) ?? "by a signal"), expected 0 (it said: \(outcome.output.suffix(400)))")
                }
                // A client may record what it accepted in a table of its own: the kit's objects must stay.
                let after = try database.snapshot()?.restricted(to: kitNames)
                before = before?.restricted(to: kitNames)
                if after != before {
                    problems.append("the database changed: \(before.map { after.map($0.difference) ?? "it is gone" } ?? "it was made")")
                }
            }
            result.problems += problems.map { label + $0 }
            if !problems.isEmpty { return }
        }
    }

    /// The deadline and the memory bound, for any run.
    private func bounds(_ outcome: ClientRunOutcome) -> [String] {
        var problems: [String] = []
        if outcome.deadlineExceeded {
            problems.append("still running after the \(Int(configuration.deadline)) s deadline (killed)")
        }
        if outcome.peakMemoryBytes > configuration.memoryBoundBytes {
            problems.append("used \(outcome.peakMemoryBytes >> 20) MiB of memory, over the bound of \(configuration.memoryBoundBytes >> 20) MiB")
        }
        if outcome.writtenBytes > configuration.writtenBoundBytes {
            problems.append("wrote \(outcome.writtenBytes >> 20) MiB, over the bound of \(configuration.writtenBoundBytes >> 20) MiB")
        }
        return problems
    }

    /// Kill runs: the run's duration measured on a copy, then `kills` runs each killed at an
    /// instant drawn from the seed within it; after each, the database is the old one or the new
    /// one, whole (a new one is put back to the old for the next kill).
    private func kills(_ run: ConformanceScenario.Run, _ database: ClientDatabase, appBefore: ClientDatabase.Snapshot?, kitNames: Set<String>,
                       folder: String, _ result: inout ScenarioResult) async throws {
        let pristine = folder + "/pristine.sqlite"
        try FileManager.default.copyItem(atPath: database.path, toPath: pristine)
        let calibration = folder + "/calibration.sqlite"
        try FileManager.default.copyItem(atPath: database.path, toPath: calibration)
        let timed = try await launch(run, database: calibration, folder: folder, &result)
        guard timed.status == 0 else {
            result.problems.append("the honest run before the kills failed (exited \(timed.status.map(String.init) ?? "by a signal"): \(timed.output.suffix(300)))")
            return
        }
        // A kill after the client recorded the manifest it accepted (in a table of its own) and
        // before it installed anything leaves the old database: the kit's objects are compared.
        let old = try database.snapshot()?.restricted(to: kitNames)
        var random = SplitMix64(seed: configuration.seed &+ UInt64(bitPattern: scenario.id.hashValueStable))
        // Drawn until `kills` runs were killed before they ended. A run that ends before its
        // instant narrows the window to its own length: the measured run may have been slowed by
        // a loaded host, and instants drawn past the client's usual end would mostly miss.
        var window = timed.seconds
        var attempts = 0
        while result.kills < scenario.kills && attempts < scenario.kills * 6 {
            attempts += 1
            let kill = attempts
            let instant = random.unit() * window
            let outcome = try await launch(run, database: database.path, folder: folder, killAfter: instant, &result)
            result.kills += outcome.killedByKit ? 1 : 0
            if !outcome.killedByKit { window = min(window, outcome.seconds) }
            if let problem = bounds(outcome).first {
                result.problems.append("kill \(kill) at \(String(format: "%.3f", instant)) s: \(problem)")
                return
            }
            let now = try database.snapshot()?.restricted(to: kitNames)
            if now == old { continue }
            let problems = try database.problems(reaching: ConformanceScenario.newest, releases: releases, appBefore: appBefore)
            guard problems.isEmpty else {
                result.problems.append("killed at \(String(format: "%.3f", instant)) s (kill \(kill)), the database is neither the old one nor the new: "
                                       + (old.map { now.map($0.difference) ?? "gone" } ?? "") + "; as the new one: " + problems.prefix(3).joined(separator: "; "))
                return
            }
            // New and whole: back to the old for the next kill.
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
            try FileManager.default.copyItem(atPath: pristine, toPath: database.path)
        }
        if result.kills < scenario.kills {
            result.problems.append("only \(result.kills) of \(attempts) runs were killed before they ended (\(scenario.kills) needed): the client ends faster than the kit can aim")
        }
    }
}

extension String {
    /// A hash that is the same on every run (Swift's `hashValue` is seeded per process).
    fileprivate var hashValueStable: Int64 {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return Int64(bitPattern: hash)
    }
}
