import ArgumentParser
import Foundation
import GRDB
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import StationClient
import StationSignatures

/// `station-phone`: an example app on `StationClient`, the phone the tests, `scripts/demo` and the guides
/// use. Exit 0 on success, 1 when the update is refused or fails (the database is as it was).
@main
struct StationPhone: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "station-phone",
        abstract: "A phone's side of StationAdmin: update a database from a release folder, safely.",
        subcommands: [Update.self, InstallBundled.self, Status.self])

    /// Where the crash tests kill it: `STATION_PHONE_KILL_AT=step` (an `UpdateStep`), at its
    /// `STATION_PHONE_KILL_AFTER`-th occurrence (default 1); with `STATION_PHONE_STEPS=1`, when
    /// each step first came instead.
    static func faultInjection() -> @Sendable (UpdateStep) -> Void {
        let environment = ProcessInfo.processInfo.environment
        if environment["STATION_PHONE_STEPS"] == "1" {
            // Each step's first occurrence with the seconds since the start, on stderr: where an update spends its time.
            let start = Date(), seen = Mutex(Set<UpdateStep>())
            return { step in
                guard seen.withLock({ $0.insert(step).inserted }) else { return }
                FileHandle.standardError.write(Data(String(format: "%7.3f s  %@\n", Date().timeIntervalSince(start), step.rawValue).utf8))
            }
        }
        // The kill switch exists in the debug build the tests run, never in a release build.
        #if DEBUG
        guard let name = environment["STATION_PHONE_KILL_AT"], let target = UpdateStep(rawValue: name) else { return { _ in } }
        let after = Int(environment["STATION_PHONE_KILL_AFTER"] ?? "") ?? 1
        let seen = Counter()
        return { step in
            if step == target && seen.increment() == after { kill(getpid(), SIGKILL) }
        }
        #else
        return { _ in }
        #endif
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func increment() -> Int { value.withLock { $0 += 1; return $0 } }
    }

    /// With `STATION_PHONE_PROFILE=1`, the process's peak resident memory on stderr (`VmHWM`), for
    /// the tests that bound what a hostile server can make it hold.
    static func reportPeakMemory() {
        guard ProcessInfo.processInfo.environment["STATION_PHONE_PROFILE"] == "1",
              let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return }
        let kibibytes = line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "0"
        FileHandle.standardError.write(Data("peak memory: \(kibibytes) KiB\n".utf8))
    }

    /// The error's message and what an app would do about it (its category), on stderr.
    static func fail(_ error: Error) -> ExitCode {
        reportPeakMemory()
        let category = (error as? StationClientError).map { " [\($0.category.rawValue)]" } ?? ""
        FileHandle.standardError.write(Data("station-phone: \(error.localizedDescription)\(category)\n".utf8))
        return ExitCode.failure
    }

    /// The example app's own update of its data: the statements of a file, run in the update's
    /// transaction, with `:from`, `:to` and `:path` bound (each statement may use any of them).
    static func appData(_ file: String?) throws -> AppDataHook? {
        guard let file else { return nil }
        let sql = try String(contentsOfFile: file, encoding: .utf8)
        return { db, context in
            try db.execute(sql: sql, arguments: ["from": context.from, "to": context.to, "path": context.path.rawValue])
        }
    }

    /// A release folder: an http(s) URL, or a folder on disk.
    static func source(_ from: String, idleTimeout: Double) throws -> any ReleaseSource {
        if from.hasPrefix("http://") || from.hasPrefix("https://") {
            guard let url = URL(string: from), url.host != nil else { throw ValidationError("--from '\(from)' is not a URL such as http://host:8080/") }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = idleTimeout
            return HTTPReleaseSource(baseURL: url, configuration: configuration)
        }
        return FolderReleaseSource(folder: URL(fileURLWithPath: from))
    }

    /// Prints progress on stderr, a line per stage and tenth, with the whole update's share done.
    static func printProgress(_ progress: AsyncStream<UpdateProgress>) async {
        var told: [String: Int] = [:]
        for await step in progress {
            let stage = switch step.stage { case .downloading(let path): "downloading \(path)"; case .inflating: "inflating"; case .installing: "installing" }
            let tenth = step.total > 0 ? step.completed * 10 / step.total : 10
            guard told[stage].map({ tenth > $0 }) ?? true else { continue }
            told[stage] = tenth
            FileHandle.standardError.write(Data("\(stage): \(step.completed) of \(step.total) \(step.unit.rawValue) (\(Int(step.fractionCompleted * 100)) % of the update)\n".utf8))
        }
    }
}

struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring the database to the newest release (a missing file is a new install).",
        discussion: "Example: station-phone update --db phone.sqlite --from http://127.0.0.1:8080/ --trust signing-2026.pub")

    @Option(help: ArgumentHelp("The phone's database.", valueName: "file")) var db: String
    @Option(help: ArgumentHelp("The release folder: an http(s) URL, or a folder on disk.", valueName: "url")) var from: String
    @Option(help: ArgumentHelp("A .pub file of keys the app pins (every line a key); repeatable.", valueName: "pub-file")) var trust: [String] = []
    @Option(help: "The app's dataset (the master's lineage); default: the first accepted manifest's.") var dataset: String?
    @Flag(help: "Accept a release folder that is not signed.") var allowUnsigned = false
    @Flag(help: "Download the full database even where a delta is offered.") var preferFull = false
    @Option(help: ArgumentHelp("SQL the app runs in the update's transaction (:from, :to, :path bound).", valueName: "file")) var appSql: String?
    @Option(help: ArgumentHelp("Download in ranges of this many bytes.", valueName: "bytes")) var partBytes = 4 << 20
    @Option(help: ArgumentHelp("Abandon a transfer slower than this on average…", valueName: "bytes-per-second")) var minimumRate = 1024.0
    @Option(help: ArgumentHelp("…after this many seconds.", valueName: "seconds")) var grace = 30.0
    @Option(help: ArgumentHelp("Give up a transfer when no byte arrives for this long.", valueName: "seconds")) var idleTimeout = 60.0
    @Option(help: ArgumentHelp("Wait this long for another update of the database.", valueName: "seconds")) var lockTimeout = 30.0
    @Option(help: ArgumentHelp("The phone's clock, UTC (2026-11-27T03:10:00Z); default: now.", valueName: "time")) var now: String?
    @Flag(help: "Print progress on stderr.") var progress = false

    func run() async throws {
        do {
            let keys = try trust.flatMap(TrustedKey.all(contentsOfFile:))
            let source = try StationPhone.source(from, idleTimeout: idleTimeout)
            let clock = try now.map { text -> Date in
                guard let date = ISO8601DateFormatter().date(from: text) else { throw ValidationError("--now takes a time such as 2026-11-27T03:10:00Z") }
                return date
            }
            var configuration = StationUpdater.Configuration(
                source: source, keys: keys, dataset: dataset, allowsUnsigned: allowUnsigned, partBytes: partBytes,
                transferLimits: TransferLimits(minimumBytesPerSecond: minimumRate, graceSeconds: grace), lockTimeout: lockTimeout)
            configuration.now = { clock ?? Date() }
            configuration.onStep = StationPhone.faultInjection()
            let updater = StationUpdater(database: URL(fileURLWithPath: db), configuration: configuration)
            let appData = try StationPhone.appData(appSql)
            let outcome: UpdateOutcome
            do {
                outcome = try await update(updater, appData: appData)
            } catch let error as StationClientError where error.category == .checkAgain {
                // Another process updated the database between the check and the update: as an app
                // would, check again.
                outcome = try await update(updater, appData: appData)
            }
            StationPhone.reportPeakMemory()
            switch outcome.plan.method {
            case .upToDate:
                print("up to date at version \(outcome.plan.to)")
            case .delta, .full:
                print("updated \(outcome.plan.from) → \(outcome.plan.to) by \(outcome.plan.method.rawValue): \(outcome.downloadedBytes) bytes downloaded"
                      + (outcome.resumedAt > 0 ? ", resumed at byte \(outcome.resumedAt)" : ""))
            }
        } catch let error as ValidationError {
            throw error
        } catch {
            throw StationPhone.fail(error)
        }
    }
}

extension Update {
    /// Checks, then carries out the plan (the full download when asked), printing progress when asked.
    func update(_ updater: StationUpdater, appData: AppDataHook?) async throws -> UpdateOutcome {
        var plan = try await updater.check()
        if preferFull { plan = plan.preferringFull() }
        guard progress else { return try await updater.update(plan, appData: appData) }
        let running = updater.startUpdate(plan, appData: appData)
        await StationPhone.printProgress(running.progress)
        return try await running.outcome
    }
}

struct InstallBundled: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install-bundled",
        abstract: "At app launch: install the bundled database when it is newer than the working one.",
        discussion: "Example: station-phone install-bundled --db phone.sqlite --database release/4/stations.sqlite --manifest release/manifest.json")

    @Option(help: ArgumentHelp("The phone's database.", valueName: "file")) var db: String
    @Option(help: ArgumentHelp("The database the app bundles.", valueName: "file")) var database: String
    @Option(help: ArgumentHelp("The release's manifest.json, bundled beside it (default: the one two folders above the database).", valueName: "file"))
    var manifest: String?
    @Option(help: ArgumentHelp("SQL the app runs in the update's transaction (:from, :to, :path bound).", valueName: "file")) var appSql: String?
    @Option(help: ArgumentHelp("Wait this long for another update of the database.", valueName: "seconds")) var lockTimeout = 30.0

    func run() async throws {
        do {
            var configuration = StationUpdater.Configuration(source: FolderReleaseSource(folder: URL(fileURLWithPath: ".")), keys: [],
                                                             lockTimeout: lockTimeout)
            configuration.onStep = StationPhone.faultInjection()
            let updater = StationUpdater(database: URL(fileURLWithPath: db), configuration: configuration)
            let folder = URL(fileURLWithPath: database).deletingLastPathComponent().deletingLastPathComponent()
            let manifestURL = manifest.map { URL(fileURLWithPath: $0) } ?? folder.appendingPathComponent("manifest.json")
            let bundle = BundledRelease(database: URL(fileURLWithPath: database), manifest: manifestURL)
            let before = try updater.currentVersion()
            if try await updater.installBundled(bundle, appData: try StationPhone.appData(appSql)) {
                print("installed the bundled database: \(before) → \(try updater.currentVersion())")
            } else {
                print("the bundled database is not newer (\(before)); nothing to do")
            }
        } catch {
            throw StationPhone.fail(error)
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The database's version, and what the phone accepted last.")

    @Option(help: ArgumentHelp("The phone's database.", valueName: "file")) var db: String

    func run() async throws {
        do {
            let updater = StationUpdater(database: URL(fileURLWithPath: db), configuration: .init(
                source: FolderReleaseSource(folder: URL(fileURLWithPath: ".")), keys: []))
            print("version \(try updater.currentVersion())")
            if let accepted = try updater.acceptedRelease() {
                print("accepted: sequence \(accepted.sequence), published \(accepted.publishedAt ?? "-"), dataset \(accepted.dataset ?? "-")")
            }
        } catch {
            throw StationPhone.fail(error)
        }
    }
}
