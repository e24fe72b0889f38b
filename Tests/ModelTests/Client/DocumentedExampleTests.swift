import Foundation
import GRDB
import StationClient
import StationRelease
import StationSignatures
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app that docs/clients.md and the DocC catalog show, compiled and run here: the text between
/// the `example` markers is the guide's Swift block, character for character (checked below).
@Suite struct DocumentedExampleTests {
    let scratch = Scratch()

    // example: begin
    /// The app's launch: open the database as the app always does, install the bundled release
    /// when the app was updated, then take what the network offers.
    static func launch(database: URL, bundle: BundledRelease, releases: URL, pinnedKey: String,
                       status: @escaping @Sendable (String) -> Void) async throws -> DatabasePool {
        // 1. The app's own connections first: the updater keeps the file, its WAL and them. Their
        //    busy timeout waits for an install's transaction instead of failing at once.
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let pool = try DatabasePool(path: database.path, configuration: configuration)
        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS visits (station_cd INTEGER NOT NULL, day TEXT NOT NULL, UNIQUE (station_cd, day))")
        }
        let updater = StationUpdater(database: database, configuration: .init(
            source: HTTPReleaseSource(baseURL: releases, configuration: .ephemeral),
            keys: [try TrustedKey(publicKeyLine: pinnedKey)]))
        // 2. The app's own rows follow each split, in the update's transaction.
        let moveVisits: AppDataHook = { db, context in
            for split in context.splits {
                try db.execute(sql: "INSERT OR IGNORE INTO visits (station_cd, day) SELECT ?, day FROM visits WHERE station_cd = ?",
                               arguments: [split.new, split.old])
            }
        }
        // 3. The bundled release, when the app update brought a newer one.
        try await updater.installBundled(bundle, appData: moveVisits)
        // 4. The network: check, let the user approve a large download, follow the progress.
        do {
            let plan = try await updater.check()
            guard plan.method != .upToDate, plan.downloadBytes < 50_000_000 else { return pool }
            let running = updater.startUpdate(plan, appData: moveVisits)
            for await step in running.progress { status("\(Int(step.fractionCompleted * 100)) %") }
            let outcome = try await running.outcome
            status("updated to version \(outcome.plan.to)")
        } catch let error as StationClientError {
            switch error.category {
            case .offline, .retryLater, .busy, .checkAgain: status("later: \(error.localizedDescription)")
            case .storageFull: status("free some space to update the stations")
            case .untrusted, .unusableDatabase, .appData: status("report: \(error.localizedDescription)")
            }
        }
        return pool
    }
    // example: end

    @Test func theGuidesExampleRunsAsAnAppWouldRunIt() async throws {
        let folder = try ClientFolder(scratch)
        let (server, port) = try startServe(folder.path, ["--quiet"])
        defer { _ = server.stop(SIGTERM) }
        let phone = try Phone(folder, at: 1, in: scratch, appTables: false)
        let told = Locked<[String]>([])
        // An app at version 1 whose bundle holds release 5: nothing left for the network.
        let pool = try await Self.launch(database: phone.url, bundle: folder.bundle, releases: URL(string: "http://127.0.0.1:\(port)/")!,
                                         pinnedKey: try folder.trustedKey.publicKeyLine) { text in told.withLock { $0.append(text) } }
        #expect(try await pool.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == 5)
        try pool.close()
        #expect(try SyntheticCompletions.read(phone.path) == phone.expected)
        // A new install from the network alone: the bundle is not newer.
        let fresh = URL(fileURLWithPath: scratch.path("fresh.sqlite"))
        let older = BundledRelease(database: URL(fileURLWithPath: folder.path + "/1/stations.sqlite"),
                                   manifest: URL(fileURLWithPath: folder.path + "/manifest.json"))
        let second = try await Self.launch(database: fresh, bundle: older, releases: URL(string: "http://127.0.0.1:\(port)/")!,
                                           pinnedKey: try folder.trustedKey.publicKeyLine) { text in told.withLock { $0.append(text) } }
        #expect(try await second.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == 5)
        try second.close()
        #expect(told.withLock { $0 }.contains("updated to version 5"))
    }

    @Test func theGuideAndTheCatalogShowThisExample() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let marker = "    // example: "
        let begin = try #require(source.range(of: marker + "begin\n")), end = try #require(source.range(of: marker + "end\n"))
        let example = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
        for document in ["docs/clients.md", "Sources/StationClientCore/StationClientCore.docc/StationClientCore.md",
                         "Sources/StationClient/StationClient.docc/StationClient.md"] {
            let text = try String(contentsOf: Fixtures.repository.appendingPathComponent(document), encoding: .utf8)
            #expect(text.contains("```swift\n" + example + "```\n"), "\(document) does not show the example of \(#fileID) as it is")
        }
    }
}
