import ArgumentParser
import Foundation
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
    /// `STATION_PHONE_KILL_AFTER`-th occurrence (default 1).
    static func faultInjection() -> @Sendable (UpdateStep) -> Void {
        let environment = ProcessInfo.processInfo.environment
        guard let name = environment["STATION_PHONE_KILL_AT"], let target = UpdateStep(rawValue: name) else { return { _ in } }
        let after = Int(environment["STATION_PHONE_KILL_AFTER"] ?? "") ?? 1
        let seen = Counter()
        return { step in
            if step == target && seen.increment() == after { kill(getpid(), SIGKILL) }
        }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }

    static func fail(_ error: Error) -> ExitCode {
        FileHandle.standardError.write(Data("station-phone: \(error.localizedDescription)\n".utf8))
        return ExitCode.failure
    }
}

struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring the database to the newest release (a missing file is a new install).",
        discussion: "Example: station-phone update --db phone.sqlite --from http://127.0.0.1:8080/ --trust signing-2026.pub")

    @Option(help: ArgumentHelp("The phone's database.", valueName: "file")) var db: String
    @Option(help: ArgumentHelp("The release folder: an http(s) URL, or a folder on disk.", valueName: "url")) var from: String
    @Option(help: ArgumentHelp("A public key the app pins (a .pub file); repeatable.", valueName: "pub-file")) var trust: [String] = []
    @Option(help: "The app's dataset (the master's lineage); default: the first accepted manifest's.") var dataset: String?
    @Flag(help: "Accept a release folder that is not signed.") var allowUnsigned = false
    @Option(help: ArgumentHelp("Download in ranges of this many bytes.", valueName: "bytes")) var partBytes = 4 << 20
    @Option(help: ArgumentHelp("The phone's clock, UTC (2026-11-27T03:10:00Z); default: now.", valueName: "time")) var now: String?

    func run() async throws {
        do {
            let keys = try trust.map(TrustedKey.init(contentsOfFile:))
            let source: any ReleaseSource
            if from.hasPrefix("http://") || from.hasPrefix("https://") {
                guard let url = URL(string: from), url.host != nil else { throw ValidationError("--from '\(from)' is not a URL such as http://host:8080/") }
                source = HTTPReleaseSource(baseURL: url)
            } else {
                source = FolderReleaseSource(folder: from)
            }
            let clock = try now.map { text -> Date in
                guard let date = ISO8601DateFormatter().date(from: text) else { throw ValidationError("--now takes a time such as 2026-11-27T03:10:00Z") }
                return date
            }
            let updater = try StationUpdater(database: db, configuration: .init(
                source: source, keys: keys, dataset: dataset, allowsUnsigned: allowUnsigned, partBytes: partBytes,
                now: { clock ?? Date() }, onStep: StationPhone.faultInjection()))
            let outcome = try await updater.update()
            switch outcome.plan {
            case .upToDate(let version):
                print("up to date at version \(version)")
            case let .delta(from, to, _), let .full(from, to, _):
                let kind = if case .delta = outcome.plan { "delta" } else { "full" }
                print("updated \(from) → \(to) by \(kind): \(outcome.downloadedBytes) bytes downloaded"
                      + (outcome.resumedAt > 0 ? ", resumed at byte \(outcome.resumedAt)" : ""))
            }
        } catch let error as ValidationError {
            throw error
        } catch {
            throw StationPhone.fail(error)
        }
    }
}

struct InstallBundled: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install-bundled",
        abstract: "At app launch: install the bundled database when it is newer than the working one.",
        discussion: "Example: station-phone install-bundled --db phone.sqlite --database release/4/stations.sqlite --carry-over release/4/carry-over.sql")

    @Option(help: ArgumentHelp("The phone's database.", valueName: "file")) var db: String
    @Option(help: ArgumentHelp("The database the app bundles.", valueName: "file")) var database: String
    @Option(help: ArgumentHelp("Its carry-over script.", valueName: "file")) var carryOver: String

    func run() async throws {
        do {
            let updater = try StationUpdater(database: db, configuration: .init(
                source: FolderReleaseSource(folder: "."), keys: [], onStep: StationPhone.faultInjection()))
            let before = try updater.currentVersion()
            if try updater.installBundled(database: database, carryOver: carryOver) {
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
            let updater = try StationUpdater(database: db, configuration: .init(source: FolderReleaseSource(folder: "."), keys: []))
            print("version \(try updater.currentVersion())")
            if let state = FileManager.default.contents(atPath: db + ".trust.json") {
                print("accepted: \(String(decoding: state, as: UTF8.self))")
            }
        } catch {
            throw StationPhone.fail(error)
        }
    }
}
