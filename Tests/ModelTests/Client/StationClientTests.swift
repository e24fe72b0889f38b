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
/// reaches the newest by each path, through `serve` and nginx, with the records the splits give
/// and the app's own tables; killed (SIGKILL) at any step of any path, the next single launch
/// reaches the newest version with everything; a cut download resumes; a tampered folder changes
/// nothing.
@Suite(.serialized, .tags(.nginx, .slow), .leftOutOfQuickRuns) struct StationClientTests {
    let scratch = Scratch()

    func serve(_ folder: String) throws -> (RunningProgram, String) {
        let (server, port) = try startServe(folder, ["--quiet"])
        return (server, "http://127.0.0.1:\(port)/")
    }

    @Test func aPhoneAtEveryOlderVersionReachesTheNewestByEachPathThroughServeAndNginx() throws {
        let folder = try ClientFolder(scratch)
        let newestHash = try contentHash(ofDatabase: folder.newest + "/stations.sqlite")
        let servers = [try serve(folder.path), try scratch.nginx(serving: folder.path)]
        defer { for (server, _) in servers { _ = server.stop(SIGTERM) } }
        for (_, base) in servers {
            for version in 1...4 {
                let phone = try Phone(folder, at: version, in: scratch)
                let result = try StationPhoneProgram.update(phone, from: base, folder)
                let path = version == 4 ? "full" : "delta"
                #expect(result.status == 0 && result.output.hasPrefix("updated \(version) → 5 by \(path)"), "\(base) v\(version): \(result.output)")
                #expect(try phone.state() == "new", "v\(version) by \(path)")
                #expect(try contentHash(ofDatabase: phone.path) == newestHash, "v\(version) by \(path)")
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
                #expect(try leftovers(of: phone) == [])
            }
            // A new install: no database yet.
            let fresh = try Phone(folder, at: 1, in: scratch, appTables: false)
            try FileManager.default.removeItem(atPath: fresh.path)
            let installed = try StationPhoneProgram.update(fresh, from: base, folder)
            #expect(installed.status == 0 && installed.output.hasPrefix("updated 0 → 5 by full"), "\(installed.output)")
            #expect(try contentHash(ofDatabase: fresh.path) == newestHash)
        }
        // The app-update path, at every older version; nothing when the bundle is not newer.
        for version in 1...4 {
            let phone = try Phone(folder, at: version, in: scratch)
            let result = try StationPhoneProgram.installBundled(phone, folder)
            #expect(result.status == 0 && result.output == "installed the bundled database: \(version) → 5\n", "\(result.output)")
            #expect(try phone.state() == "new", "app update from v\(version)")
            let again = try StationPhoneProgram.installBundled(phone, folder)
            #expect(again.output == "the bundled database is not newer (5); nothing to do\n")
        }
    }

    /// Kill -9 at every step of each path (delta, full, the bundled database), at an occurrence
    /// drawn at random (seeded: the same 270 draws each run, over 200 of them kills) among those the step has: each part
    /// of a download, each 64 KiB inflated, each release table replaced in the database; the
    /// phone in either journal mode, with the app's corpus of objects (`AppSchemaCorpus`).
    /// After each, the database is the old one or the new one, whole (every app object, row and
    /// rowid as made, FTS5's and the R-tree's checks clean), and the next single launch reaches
    /// the newest version with every record of every table.
    @Test func aPhoneKilledAtAnyStepIsWholeAndItsNextLaunchFinishesTheUpdate() throws {
        let folder = try ClientFolder(scratch)
        let (server, base) = try serve(folder.path)
        defer { _ = server.stop(SIGTERM) }
        var random = SplitMix64(seed: 57)
        let common: [UpdateStep] = [.locked]
        let paths: [(name: String, version: Int, steps: [(UpdateStep, ClosedRange<Int>)])] = [
            ("delta", 1, (common + [.downloaded, .deltaRunUncommitted, .deltaCommitted]).map { ($0, 1...1) } + [(.downloadedPart, 1...8)]),
            ("full", 4, (common + [.downloaded, .replacing, .carriedOver, .replaced]).map { ($0, 1...1) }
                + [(.downloadedPart, 1...30), (.inflating, 1...2), (.replacingTable, 1...5)]),
            ("app update", 2, (common + [.replacing, .carriedOver, .replaced]).map { ($0, 1...1) }
                + [(.replacingTable, 1...5), (.replacingTable, 1...5)]),
        ]
        var kills = 0
        for path in paths {
            var outcomes: [String: Int] = [:]
            for kill in 0..<90 {
                let (step, occurrences) = path.steps[kill % path.steps.count]
                let after = occurrences.lowerBound + random.below(occurrences.count)
                // Both journal modes, alternating across the draws of each step.
                let phone = try Phone(folder, at: path.version, in: scratch, journalMode: (kill / path.steps.count) % 2 == 0 ? "delete" : "wal")
                let environment = ["STATION_PHONE_KILL_AT": step.rawValue, "STATION_PHONE_KILL_AFTER": String(after)]
                let killed = path.name == "app update"
                    ? try StationPhoneProgram.installBundled(phone, folder, environment: environment)
                    : try StationPhoneProgram.update(phone, from: base, folder, ["--part-bytes", "2048"], environment: environment)
                guard killed.killed else {
                    // Fewer occurrences than drawn: the update finished.
                    let state = try phone.state()
                    #expect(killed.status == 0 && state == "new", "\(path.name) \(step.rawValue) #\(after): \(killed.output)")
                    continue
                }
                kills += 1
                let state = try phone.state()
                #expect(state != nil, "\(path.name) killed at \(step.rawValue) #\(after): neither old nor new")
                outcomes[state ?? "neither", default: 0] += 1
                // The next single launch.
                let next = path.name == "app update"
                    ? try StationPhoneProgram.installBundled(phone, folder)
                    : try StationPhoneProgram.update(phone, from: base, folder, ["--part-bytes", "2048"])
                #expect(next.status == 0, "\(path.name) after a kill at \(step.rawValue) #\(after): \(next.output)")
                #expect(try phone.state() == "new", "\(path.name) after a kill at \(step.rawValue) #\(after)")
                #expect(try leftovers(of: phone) == [], "\(path.name) after a kill at \(step.rawValue) #\(after)")
            }
            // Kills before the commit leave the old database, after it the new one.
            #expect(outcomes["old", default: 0] > 0 && outcomes["new", default: 0] > 0, "\(path.name): \(outcomes)")
        }
        #expect(kills >= 200, "\(kills) kills")
    }

    /// libcurl's transport (Linux's default) and URLSession's (Apple's) take a phone through serve alike.
    @Test func bothHTTPTransportsUpdateAPhone() async throws {
        let folder = try ClientFolder(scratch)
        let (server, base) = try serve(folder.path)
        defer { _ = server.stop(SIGTERM) }
        for transport in [HTTPReleaseSource.Transport.curl, .urlSession] {
            for version in [1, 4] {
                let phone = try Phone(folder, at: version, in: scratch)
                let source = HTTPReleaseSource(baseURL: try #require(URL(string: base)), configuration: .ephemeral, transport: transport)
                let updater = StationUpdater(database: phone.url, configuration: .init(source: source, keys: [try folder.trustedKey], partBytes: 4096))
                let outcome = try await updater.update()
                #expect(outcome.plan.method == (version == 4 ? .full : .delta), "\(transport)")
                #expect(try phone.state() == "new", "\(transport) from \(version)")
            }
        }
    }

    @Test func aCutDownloadResumesWhereItStopped() throws {
        let folder = try ClientFolder(scratch)
        let (server, base) = try serve(folder.path)
        defer { _ = server.stop(SIGTERM) }
        let gzip = try #require(try folder.manifest().version(5)?.databaseGzip.bytes)
        let part = gzip / 4 + 1
        let phone = try Phone(folder, at: 4, in: scratch)
        let cut = try StationPhoneProgram.update(phone, from: base, folder, ["--part-bytes", String(part)],
                                                 environment: ["STATION_PHONE_KILL_AT": UpdateStep.downloadedPart.rawValue, "STATION_PHONE_KILL_AFTER": "2"])
        #expect(cut.killed)
        let resumed = try StationPhoneProgram.update(phone, from: base, folder, ["--part-bytes", String(part)])
        #expect(resumed.output == "updated 4 → 5 by full: \(gzip - 2 * part) bytes downloaded, resumed at byte \(2 * part)\n", "\(resumed.output)")
        #expect(try phone.state() == "new")
    }

    @Test func aTamperedOrUnsignedFolderChangesNothing() throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 1, in: scratch)
        let before = try phone.contentBesideTrustRecord()
        // Through a copy of the folder, changed as an attacker's mirror would change it.
        let mirror = scratch.path("mirror")
        try FileManager.default.copyItem(atPath: folder.path, toPath: mirror)
        var manifest = try Data(contentsOf: URL(fileURLWithPath: mirror + "/manifest.json"))
        manifest[manifest.count / 2] ^= 0x01
        try manifest.write(to: URL(fileURLWithPath: mirror + "/manifest.json"))
        let changed = try StationPhoneProgram.update(phone, from: mirror, folder)
        #expect(changed.status == 1 && changed.output.contains("no signature of this manifest") && changed.output.contains("[untrusted]"), "\(changed.output)")
        try FileManager.default.removeItem(atPath: mirror + "/manifest.json.sig")
        try FileManager.default.copyItem(atPath: folder.path + "/manifest.json", toPath: mirror + "/manifest.json.tmp")
        try FileManager.default.removeItem(atPath: mirror + "/manifest.json")
        try FileManager.default.moveItem(atPath: mirror + "/manifest.json.tmp", toPath: mirror + "/manifest.json")
        let unsigned = try StationPhoneProgram.update(phone, from: mirror, folder)
        #expect(unsigned.status == 1 && unsigned.output.contains("not signed") && !unsigned.output.contains("station-admin"), "\(unsigned.output)")
        let stranger = try SigningKey.generate(to: scratch.path("stranger"))
        let foreign = try StationPhoneProgram.run(["update", "--db", phone.path, "--from", folder.path, "--trust", stranger.path + ".pub"])
        #expect(foreign.status == 1 && foreign.output.contains("no signature by a trusted key"), "\(foreign.output)")
        #expect(try phone.contentBesideTrustRecord() == before)
        // Opting out of signatures: the unsigned mirror is then accepted.
        let optedOut = try StationPhoneProgram.run(["update", "--db", phone.path, "--from", mirror, "--allow-unsigned"])
        #expect(optedOut.status == 0 && optedOut.output.hasPrefix("updated 1 → 5 by delta"), "\(optedOut.output)")
    }
}
