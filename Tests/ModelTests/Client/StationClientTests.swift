import Foundation
import GRDB
import StationClient
import StationLog
import StationRelease
import StationSchema
import StationSignatures
import StationSupport
import Testing

/// `StationClient` through `station-phone`, the example app on it: a phone at every older version
/// reaches the newest by each path, through `serve` and nginx, with the records the splits give;
/// killed (SIGKILL) at each step of each path, the next launch finds the old database or the new
/// one with every record; a cut download resumes; a tampered folder changes nothing.
@Suite(.serialized, .tags(.nginx, .slow), .leftOutOfQuickRuns) struct StationClientTests {
    let scratch = Scratch()

    static let phoneProgram: URL = CommandRunner.executable.deletingLastPathComponent().appendingPathComponent("station-phone")

    struct Folder {
        let database: MasterDatabase
        let path: String
        let key: SigningKey
        let splits: [StationSplit]
        var newest: String { path + "/5" }
    }

    /// `Scratch.servedFolder` (versions 1…5; version 4 downloads the full database), signed.
    func signedFolder() throws -> Folder {
        let (database, folder) = try scratch.servedFolder()
        let key = try SigningKey.generate(to: scratch.path("curator-key"))
        try ManifestResigning.resign(folder: folder, signing: ManifestSigning(keys: [key]))
        return Folder(database: database, path: folder, key: key, splits: try database.read { try UpdateLog.splits($0) })
    }

    /// A phone at `version` with the verifier's synthetic records; what it must hold at 5.
    func phone(_ folder: Folder, at version: Int) throws -> (path: String, before: [Int64: SyntheticCompletions.Record], expected: [Int64: SyntheticCompletions.Record]) {
        let path = scratch.path("phone-\(version)-\(UUID().uuidString.prefix(8)).sqlite")
        try FileManager.default.copyItem(atPath: "\(folder.path)/\(version)/stations.sqlite", toPath: path)
        let splitsAfter = folder.splits.filter { $0.version > version }
        let before = try SyntheticCompletions.add(to: path, splits: splitsAfter)
        return (path, before, SyntheticCompletions.expected(before, splits: splitsAfter))
    }

    func stationPhone(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, killed: Bool, output: String) {
        let process = Process()
        process.executableURL = Self.phoneProgram
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal, String(decoding: output, as: UTF8.self))
    }

    func update(_ phone: String, from source: String, _ folder: Folder, extra: [String] = [], environment: [String: String] = [:]) throws -> (status: Int32, killed: Bool, output: String) {
        try stationPhone(["update", "--db", phone, "--from", source, "--trust", folder.key.path + ".pub"] + extra, environment: environment)
    }

    func userVersion(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? -1 }
    }

    func serve(_ folder: String) throws -> (RunningProgram, String) {
        let (server, port) = try startServe(folder, ["--quiet"])
        return (server, "http://127.0.0.1:\(port)/")
    }

    @Test func aPhoneAtEveryOlderVersionReachesTheNewestByEachPathThroughServeAndNginx() throws {
        let folder = try signedFolder()
        let newestHash = try contentHash(ofDatabase: folder.newest + "/stations.sqlite")
        let servers = [try serve(folder.path), try scratch.nginx(serving: folder.path)]
        defer { for (server, _) in servers { _ = server.stop(SIGTERM) } }
        for (_, base) in servers {
            for version in 1...4 {
                let phone = try phone(folder, at: version)
                let result = try update(phone.path, from: base, folder)
                let path = version == 4 ? "full" : "delta"
                #expect(result.status == 0 && result.output.hasPrefix("updated \(version) → 5 by \(path)"), "\(base) v\(version): \(result.output)")
                #expect(try userVersion(phone.path) == 5)
                #expect(try contentHash(ofDatabase: phone.path) == newestHash, "v\(version) by \(path)")
                #expect(try SyntheticCompletions.read(phone.path) == phone.expected, "v\(version) by \(path): records")
                // The second, independent implementation (Python) ends with the same database.
                let twin = scratch.path("twin-\(version)-\(UUID().uuidString.prefix(8)).sqlite")
                try FileManager.default.copyItem(atPath: "\(folder.path)/\(version)/stations.sqlite", toPath: twin)
                _ = try SyntheticCompletions.add(to: twin, splits: folder.splits.filter { $0.version > version })
                let python = try CommandRunner.run(["python3", Fixtures.repository.appendingPathComponent("scripts/phone-client.py").path,
                                                    "update", base, "--db", twin, "--trust", folder.key.path + ".pub",
                                                    "--dataset", try #require(try folder.database.lineage()), "--state", twin + ".state.json"],
                                                   program: URL(fileURLWithPath: "/usr/bin/env"))
                #expect(python.status == 0, "\(python.stdout)\(python.stderr)")
                #expect(try SyntheticCompletions.read(twin) == SyntheticCompletions.read(phone.path))
                #expect(try contentHash(ofDatabase: twin) == newestHash)
            }
            // A new install: no database yet.
            let fresh = scratch.path("new-install-\(UUID().uuidString.prefix(8)).sqlite")
            let installed = try update(fresh, from: base, folder)
            #expect(installed.status == 0 && installed.output.hasPrefix("updated 0 → 5 by full"), "\(installed.output)")
            #expect(try contentHash(ofDatabase: fresh) == newestHash)
        }
        // The app-update path, at every older version; nothing when the bundle is not newer.
        for version in 1...4 {
            let phone = try phone(folder, at: version)
            let result = try stationPhone(["install-bundled", "--db", phone.path, "--database", folder.newest + "/stations.sqlite",
                                           "--carry-over", folder.newest + "/carry-over.sql"])
            #expect(result.status == 0 && result.output == "installed the bundled database: \(version) → 5\n", "\(result.output)")
            #expect(try SyntheticCompletions.read(phone.path) == phone.expected, "app update from v\(version): records")
            let again = try stationPhone(["install-bundled", "--db", phone.path, "--database", folder.newest + "/stations.sqlite",
                                          "--carry-over", folder.newest + "/carry-over.sql"])
            #expect(again.output == "the bundled database is not newer (5); nothing to do\n")
        }
    }

    /// 100 kills per path, at every step of it in turn (each part of a download, each 64 KiB of an
    /// inflate, inside the delta's transaction, between the carry-over and the swap, in the swap).
    @Test func aPhoneKilledAtAnyStepKeepsTheOldDatabaseOrTheNewWithEveryRecord() throws {
        let folder = try signedFolder()
        let (server, base) = try serve(folder.path)
        defer { _ = server.stop(SIGTERM) }
        let paths: [(name: String, version: Int, steps: [(UpdateStep, Int)])] = [
            ("delta", 1, [(.downloadedPart, 1), (.downloadedPart, 2), (.downloaded, 1), (.deltaRunUncommitted, 1), (.deltaCommitted, 1)]),
            ("full", 4, [(.downloadedPart, 1), (.downloadedPart, 3), (.downloaded, 1), (.inflating, 1), (.inflating, 2),
                         (.carriedOver, 1), (.journalWritten, 1),
                         (.oldSetAside, 1), (.swapped, 1)]),
            ("app update", 2, [(.carriedOver, 1), (.journalWritten, 1), (.oldSetAside, 1), (.swapped, 1)]),
        ]
        for path in paths {
            var outcomes: [String: Int] = [:]
            for kill in 0..<100 {
                let (step, after) = path.steps[kill % path.steps.count]
                let phone = try phone(folder, at: path.version)
                let environment = ["STATION_PHONE_KILL_AT": step.rawValue, "STATION_PHONE_KILL_AFTER": String(after)]
                let killed = path.name == "app update"
                    ? try stationPhone(["install-bundled", "--db", phone.path, "--database", folder.newest + "/stations.sqlite",
                                        "--carry-over", folder.newest + "/carry-over.sql"], environment: environment)
                    : try update(phone.path, from: base, folder, extra: ["--part-bytes", "512"], environment: environment)
                #expect(killed.killed, "\(path.name) at \(step.rawValue) #\(after): not killed: \(killed.output)")
                // The next launch: recovery, then the database is the old one or the new one, whole.
                _ = try stationPhone(["status", "--db", phone.path])
                let reached = try userVersion(phone.path)
                let records = try SyntheticCompletions.read(phone.path)
                let isOld = reached == path.version && records == phone.before
                let isNew = reached == 5 && records == phone.expected
                #expect(isOld || isNew, "\(path.name) killed at \(step.rawValue) #\(after): version \(reached), records differ")
                outcomes[isNew ? "new" : "old", default: 0] += 1
                // And the update then completes.
                let finished = path.name == "app update"
                    ? try stationPhone(["install-bundled", "--db", phone.path, "--database", folder.newest + "/stations.sqlite",
                                        "--carry-over", folder.newest + "/carry-over.sql"])
                    : try update(phone.path, from: base, folder, extra: ["--part-bytes", "512"])
                #expect(finished.status == 0, "\(path.name) after a kill at \(step.rawValue): \(finished.output)")
                #expect(try userVersion(phone.path) == 5 && SyntheticCompletions.read(phone.path) == phone.expected)
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path(""))
                    .filter { $0.hasPrefix((phone.path as NSString).lastPathComponent + ".") && !$0.hasSuffix(".trust.json") }
                #expect(leftovers.isEmpty, "\(path.name): \(leftovers)")
            }
            // Kills before the decision leave the old database, after it the new one.
            #expect(outcomes["old", default: 0] > 0 && outcomes["new", default: 0] > 0, "\(path.name): \(outcomes)")
        }
    }

    @Test func aCutDownloadResumesWhereItStopped() throws {
        let folder = try signedFolder()
        let (server, base) = try serve(folder.path)
        defer { _ = server.stop(SIGTERM) }
        let manifest = try Manifest.decode(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/manifest.json")))
        let gzip = try #require(manifest.version(5)?.databaseGzip.bytes)
        let part = gzip / 4 + 1
        let phone = try phone(folder, at: 4)
        let cut = try update(phone.path, from: base, folder, extra: ["--part-bytes", String(part)],
                             environment: ["STATION_PHONE_KILL_AT": UpdateStep.downloadedPart.rawValue, "STATION_PHONE_KILL_AFTER": "2"])
        #expect(cut.killed)
        let resumed = try update(phone.path, from: base, folder, extra: ["--part-bytes", String(part)])
        #expect(resumed.output == "updated 4 → 5 by full: \(gzip - 2 * part) bytes downloaded, resumed at byte \(2 * part)\n", "\(resumed.output)")
        #expect(try SyntheticCompletions.read(phone.path) == phone.expected)
    }

    @Test func aTamperedOrUnsignedFolderChangesNothing() throws {
        let folder = try signedFolder()
        let phone = try phone(folder, at: 1)
        let before = try FileDigest.sha256(ofFile: phone.path)
        // Through a copy of the folder, changed as an attacker's mirror would change it.
        let mirror = scratch.path("mirror")
        try FileManager.default.copyItem(atPath: folder.path, toPath: mirror)
        var manifest = try Data(contentsOf: URL(fileURLWithPath: mirror + "/manifest.json"))
        manifest[manifest.count / 2] ^= 0x01
        try manifest.write(to: URL(fileURLWithPath: mirror + "/manifest.json"))
        let changed = try update(phone.path, from: mirror, folder)
        #expect(changed.status == 1 && changed.output.contains("refused: no signature of this manifest"), "\(changed.output)")
        try FileManager.default.removeItem(atPath: mirror + "/manifest.json.sig")
        try FileManager.default.copyItem(atPath: folder.path + "/manifest.json", toPath: mirror + "/manifest.json.tmp")
        try FileManager.default.removeItem(atPath: mirror + "/manifest.json")
        try FileManager.default.moveItem(atPath: mirror + "/manifest.json.tmp", toPath: mirror + "/manifest.json")
        let unsigned = try update(phone.path, from: mirror, folder)
        #expect(unsigned.status == 1 && unsigned.output.contains("not signed"), "\(unsigned.output)")
        let stranger = try SigningKey.generate(to: scratch.path("stranger"))
        let foreign = try stationPhone(["update", "--db", phone.path, "--from", folder.path, "--trust", stranger.path + ".pub"])
        #expect(foreign.status == 1 && foreign.output.contains("no signature by a trusted key"), "\(foreign.output)")
        #expect(try FileDigest.sha256(ofFile: phone.path) == before)
        // Opting out of signatures: the unsigned mirror is then accepted.
        let optedOut = try stationPhone(["update", "--db", phone.path, "--from", mirror, "--allow-unsigned"])
        #expect(optedOut.status == 0 && optedOut.output.hasPrefix("updated 1 → 5 by delta"), "\(optedOut.output)")
    }
}
