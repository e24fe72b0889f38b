import Foundation
import StationCurate
import StationDelta
import StationLog
import StationManifest
import StationRelease
import StationSchema
import StationSupport
import Testing

/// A release renders the deltas from its checkpoints only and joins the others from an older
/// release's delta and one of its own (`DeltaChainPlan`, `GzipJoin`): what it renders stays
/// bounded as history grows, and every phone still gets one gzip file that brings it to the newest
/// version with every split's credit.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct DeltaChainTests {
    let scratch = Scratch()

    // MARK: The plan

    @Test func theCheckpointsAreTheMultiplesOfEachLevelSinceTheLastOfTheLevelAbove() {
        #expect(DeltaChainPlan.checkpointPositions(releases: 0, spacing: 10) == [])
        #expect(DeltaChainPlan.checkpointPositions(releases: 7, spacing: 10) == Set(1...7))
        #expect(DeltaChainPlan.checkpointPositions(releases: 49, spacing: 10) == Set(41...49).union([10, 20, 30, 40]))
        #expect(DeltaChainPlan.checkpointPositions(releases: 50, spacing: 10) == [10, 20, 30, 40, 50])
        #expect(DeltaChainPlan.checkpointPositions(releases: 157, spacing: 10) == Set(151...157).union([110, 120, 130, 140, 150, 100]))
        #expect(DeltaChainPlan.checkpointPositions(releases: 7, spacing: 2) == [7, 6, 4])
    }

    /// Releases 1 … 400, each of the version after the last, simulated on manifests: a release
    /// renders at most (spacing − 1) deltas a level, and a phone's file passes through at most one
    /// checkpoint a level.
    @Test(arguments: [DeltaChainPlan.defaultSpacing, 10])
    func whatAReleaseRendersAndAPhonesStepsStayLogarithmic(spacing: Int) {
        var levels = 0, step = 1
        while step <= 399 { levels += 1; step *= spacing }
        var released: [ReleasedVersion] = []
        var steps: [Int: [Int: Int]] = [:]  // version → from → the deltas joined into its file
        var mostRendered = 0
        for version in 1...400 {
            let plan = DeltaChainPlan.make(version: version, released: released, spacing: spacing) { _ in true }
            #expect(Set(plan.rendered).union(plan.joinable.keys) == Set(1..<version))
            mostRendered = max(mostRendered, plan.rendered.count)
            var deltas: [ReleasedDelta] = plan.rendered.map { Self.delta(from: $0, to: version, via: nil) }
            steps[version] = Dictionary(uniqueKeysWithValues: plan.rendered.map { ($0, 1) })
            for (from, via) in plan.joinable {
                steps[version]![from] = steps[via]![from]! + 1
                deltas.append(Self.delta(from: from, to: version, via: via))
            }
            released.append(Self.version(version, deltas: deltas))
        }
        // 400 releases: levels 0, 1 and 2 with a spacing of 10; 0 to 4 with 4.
        #expect(mostRendered <= levels * (spacing - 1))
        #expect(steps.values.flatMap(\.values).max() == levels)
    }

    @Test func aVersionNoCheckpointHasADeltaFromIsRendered() {
        var versions = (1...3).map { version in Self.version(version, deltas: (1..<version).map { Self.delta(from: $0, to: version, via: nil) }) }
        // Release 3 sent version 1 the database (a change undone since may make its delta small
        // again); with a spacing of 2, release 4's checkpoints are 2 and 3.
        versions[2].deltas.removeAll { $0.from == 1 }
        versions[2].downloads[0] = ClientDownload(from: 1, kind: .full, path: "3/stations.sqlite.gz")
        #expect(DeltaChainPlan.checkpointPositions(releases: 3, spacing: 2) == [2, 3])
        #expect(DeltaChainPlan.make(version: 4, released: versions, spacing: 2) { _ in true }.joinable == [1: 2])
        versions[1].deltas.removeAll { $0.from == 1 }
        let plan = DeltaChainPlan.make(version: 4, released: versions, spacing: 2) { _ in true }
        #expect(plan.rendered == [1, 2, 3])
        #expect(plan.joinable.isEmpty)
        // Nor is a file that cannot be joined.
        #expect(DeltaChainPlan.make(version: 5, released: versions + [Self.version(4, deltas: (1...3).map { Self.delta(from: $0, to: 4, via: nil) })],
                                    spacing: 2) { _ in false }.rendered == [1, 2, 3, 4])
    }

    // MARK: Releases on disk

    /// The base (v1), then nine curated versions, each released into one folder with checkpoints
    /// every 2 releases (levels 0 to 3 in ten releases); a split at v5 that every chain from
    /// before it must carry; the newest verified with sqlite3.
    func tenReleases() throws -> (MasterDatabase, String, [ReleaseResult]) {
        let database = try scratch.baseDatabase()
        let folder = scratch.path("release")
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.skipChecks = true
        options.checkpointSpacing = 2
        var results = [try Publisher(database).release(options)]
        for version in 2...10 {
            if version == 5 {
                try Curator(database).apply([LocatedOperation(.split(old: 1120101, new: 9920607, line: 11201,
                                                             values: ["station_name": "八戸（青い森）"], connectTo: [1120102]))], memo: "split")
            } else {
                // Every other version renames the same station: rows changed on both sides of a step.
                var batch = ChangeBatch()
                batch.put(.stations, stationRow(version % 2 == 0 ? 1120102 : 1120103 + Int64(version), name: "駅\(version)", line: 11201))
                try Curator(database).commit(batch, memo: "v\(version)")
            }
            options.verify = version == 10
            results.append(try Publisher(database).release(options))
        }
        return (database, folder, results)
    }

    @Test func everyPhoneGetsOneGzipMemberThatBringsItToTheNewestVersionWithItsSplits() throws {
        let (database, folder, results) = try tenReleases()
        let newest = try #require(results.last)
        // Release 10 renders from its checkpoints (releases 8 and 9 … see the plan), joins the rest.
        let joined = newest.released.deltas.filter { $0.via != nil }
        #expect(newest.released.deltas.map(\.from) == Array(1...9))
        #expect(newest.released.deltas.filter { $0.via == nil }.map(\.from) == [8, 9])
        #expect(joined.count == 7)
        #expect(newest.released.downloads.allSatisfy { $0.kind == .delta })

        // sqlite3 applied each, guard included, on a phone holding records split at v5.
        let verification = try #require(newest.verification)
        #expect(verification.failures == [])
        #expect(verification.deltasPassed == 9)
        #expect(verification.passed.contains { $0.hasPrefix("delta 1 → 10 (joined through ") })

        func file(_ path: String) -> String { (folder as NSString).appendingPathComponent(path) }
        let manifest = try ReleaseFolder(path: folder).manifest()
        for delta in joined {
            let via = try #require(delta.via)
            let first = try #require(manifest.version(via)?.deltas.first { $0.from == delta.from })
            let second = try #require(newest.released.deltas.first { $0.from == via })
            // One member whose SQL is the two parts' one after the other.
            let sql = try Gunzip.inflate(Data(contentsOf: URL(fileURLWithPath: file(delta.file.path))), name: delta.file.path)
            #expect(sql == (try Gunzip.read(file(first.file.path))) + (try Gunzip.read(file(second.file.path))))
            // Its SQL is listed by part, the parts of the older delta then this release's own.
            #expect(delta.sqlSha256 == nil)
            let parts = try #require(delta.sqlParts)
            #expect(parts == (first.hashedSQLParts ?? []) + (second.hashedSQLParts ?? []))
            var offset = sql.startIndex
            for part in parts {
                #expect(FileDigest.sha256(sql[offset..<min(offset + part.sqlBytes, sql.endIndex)]) == part.sqlSha256)
                offset += part.sqlBytes
            }
            #expect(offset == sql.endIndex && delta.sqlBytes == sql.count)
            #expect(delta.duplicates == first.duplicates + second.duplicates)
            // Against the delta rendered for this phone alone: the issue's 1.2×, and since these
            // deltas change a few rows, one delta's fixed lines a step (about 300 bytes of gzip).
            let direct = try DeltaExport(database).writeDelta(from: delta.from, to: 10, gzip: true, into: .file(scratch.path("direct-\(delta.from).sql.gz")))
            let steps = Self.steps(delta, in: manifest)
            #expect(Double(delta.file.bytes) <= 1.2 * Double(direct.gzipBytes) + Double(400 * (steps - 1)), "from \(delta.from): \(delta.file.bytes) vs \(direct.gzipBytes)")
        }
        // The phone at 1 holds the split's credit after its joined delta.
        let phone = try scratch.phone(from: file("1/stations.sqlite"), name: "phone-1.sqlite", completions: [(1120101, "2020-02-02", "八戸", 7)])
        #expect(try scratch.apply(delta: file("10/delta-from-1.sql.gz"), to: phone).status == 0)
        #expect(try sqlite3Query("SELECT station_cd, date FROM completions ORDER BY station_cd", database: phone)
            == "1120101|2020-02-02\n9920607|2020-02-02")
        #expect(try sqlite3Query("PRAGMA user_version", database: phone) == "10")
    }

    /// Version 11, released into the folder of `tenReleases` as they were.
    func releaseEleven(_ database: MasterDatabase, into folder: String) throws {
        try commitEleven(database)
        try Publisher(database).release(Self.elevenOptions(folder))
    }

    func commitEleven(_ database: MasterDatabase) throws {
        var batch = ChangeBatch()
        batch.put(.stations, stationRow(1120102, name: "駅11", line: 11201))
        try Curator(database).commit(batch, memo: "v11")
    }

    static func elevenOptions(_ folder: String) -> ReleaseOptions {
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.checkpointSpacing = 2
        options.skipChecks = true
        return options
    }

    @Test func anOlderDeltaChangedSinceItWasReleasedIsNeverJoined() throws {
        let (database, folder, results) = try tenReleases()
        // A byte of each checkpoint's delta from 1 changed, its size kept (release 11 joins
        // through 8 or 10).
        for changed in ["8/delta-from-1.sql.gz", "10/delta-from-1.sql.gz"] {
            let path = (folder as NSString).appendingPathComponent(changed)
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        #expect {
            try releaseEleven(database, into: folder)
        } throws: { error in
            let words = "\(error.localizedDescription)"
            return words.contains(#".deltas[from 1].file ""#) && words.contains("sha256") && words.contains("the file changed since it was released")
        }
        // Nothing was published: the manifest still ends at 10.
        #expect(try ReleaseFolder(path: folder).manifest(depth: { _ in .sizes }).newest == results.last?.released.version)
    }

    /// A folder released by format 4 lists each joined delta by the hash of its whole SQL, from a
    /// master that recorded no entries then: nothing is joined through a version the master has no
    /// entry of (its delta is rendered instead), `verify` passes, and the next release joins
    /// through the one this release recorded, with the format-4 hash as a part.
    @Test func aFolderOfFormatFourIsReleasedOverAndVerifies() throws {
        let (database, folder, _) = try tenReleases()
        try database.write { db in
            try db.execute(sql: "UPDATE published_versions SET entry = NULL")
            return ((), true)
        }
        var manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: Self.manifestPath(folder))))
        manifest.format = 4
        for version in manifest.versions.indices {
            for index in manifest.versions[version].deltas.indices where manifest.versions[version].deltas[index].sqlParts != nil {
                let path = (folder as NSString).appendingPathComponent(manifest.versions[version].deltas[index].file.path)
                manifest.versions[version].deltas[index].sqlSha256 = FileDigest.sha256(try Gunzip.read(path))
                manifest.versions[version].deltas[index].sqlParts = nil
            }
        }
        try manifest.encoded().write(to: URL(fileURLWithPath: Self.manifestPath(folder)))

        try releaseEleven(database, into: folder)
        let released = try ReleaseFolder(path: folder).manifest()
        #expect(released.format == Manifest.currentFormat)
        let eleven = try #require(released.version(11))
        #expect(eleven.deltas.allSatisfy { $0.via == nil }, "joined through a version the master has no entry of: \(eleven.deltas.filter { $0.via != nil }.map(\.file.path))")
        #expect(try Publisher(database).verifyRelease(folder: folder).failures == [])

        // A folder of a newer format than this code reads is refused, the field named.
        var newer = released
        newer.format = Manifest.currentFormat + 1
        try newer.encoded().write(to: URL(fileURLWithPath: Self.manifestPath(folder)))
        #expect {
            try ReleaseFolder(path: folder).manifest(depth: { _ in .sizes })
        } throws: { error in
            "\(error.localizedDescription)".contains("format: \(Manifest.currentFormat + 1), newer than this StationAdmin reads")
        }
    }

    static func manifestPath(_ folder: String) -> String { (folder as NSString).appendingPathComponent(Manifest.fileName) }

    /// The folder's manifest, the index of its newest version and of that version's joined delta from 1.
    static func joinedDeltaFromOne(in folder: String) throws -> (manifest: Manifest, newest: Int, delta: Int) {
        let manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: manifestPath(folder))))
        let newest = manifest.versions.count - 1
        let index = try #require(manifest.versions[newest].deltas.firstIndex { $0.from == 1 && $0.via != nil })
        return (manifest, newest, index)
    }

    /// A joined delta's parts are taken from the older delta's entry, not inflated: an entry whose
    /// hash was changed (its file unchanged) is carried into the next joins, and `verify`, which
    /// hashes every part, names the part and the file.
    @Test func verifyNamesAJoinedPartWhoseHashIsNotItsSQLs() throws {
        let (database, folder, _) = try tenReleases()
        var (manifest, newest, index) = try Self.joinedDeltaFromOne(in: folder)
        let parts = try #require(manifest.versions[newest].deltas[index].sqlParts)
        manifest.versions[newest].deltas[index].sqlParts![parts.count - 1].sqlSha256 = String(repeating: "0", count: 64)
        try manifest.encoded().write(to: URL(fileURLWithPath: Self.manifestPath(folder)))

        let report = try Publisher(database).verifyRelease(folder: folder)
        let bytes = parts.dropLast().reduce(0) { $0 + $1.sqlBytes }
        #expect(report.failures.contains {
            $0.hasPrefix("version 10: delta 1 → 10: 10/delta-from-1.sql.gz: part \(parts.count) of its SQL (bytes \(bytes) to \(bytes + parts.last!.sqlBytes)) has sha256 ")
                && $0.hasSuffix("the manifest says \(String(repeating: "0", count: 64))")
        }, "\(report.failures)")
    }

    /// The audit names a joined delta whose parts do not add up to its SQL, or that lists neither
    /// a hash nor parts.
    @Test func theAuditNamesSQLPartsThatAreNotWhatTheyShouldBe() throws {
        let (_, folder, _) = try tenReleases()
        let (original, newest, index) = try Self.joinedDeltaFromOne(in: folder)
        for (change, words) in [
            ({ (delta: inout ReleasedDelta) in delta.sqlBytes += 1 }, "sql_parts \"10/delta-from-1.sql.gz\": "),
            ({ (delta: inout ReleasedDelta) in delta.sqlParts = nil }, "sql_sha256 \"10/delta-from-1.sql.gz\": null, and no sql_parts"),
        ] {
            var manifest = original
            change(&manifest.versions[newest].deltas[index])
            try manifest.encoded().write(to: URL(fileURLWithPath: Self.manifestPath(folder)))
            #expect {
                try ReleaseFolder(path: folder).manifest(depth: { _ in .sizes })
            } throws: { error in
                "\(error.localizedDescription)".contains("versions[10].deltas[from 1].\(words)")
            }
        }
    }

    /// A manifest whose entry says other SQL than its file holds (its file unchanged): the part
    /// is measured as it is joined, and the field is named.
    @Test func anOlderDeltaWhoseEntryMisstatesItsSQLIsNeverJoined() throws {
        let (database, folder, results) = try tenReleases()
        let manifestPath = (folder as NSString).appendingPathComponent(Manifest.fileName)
        var manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        for index in manifest.versions.indices {
            for deltaIndex in manifest.versions[index].deltas.indices where manifest.versions[index].deltas[deltaIndex].from == 1 {
                manifest.versions[index].deltas[deltaIndex].sqlBytes += 1
                // A joined delta's parts still add up to it, or the audit would name them first.
                if let last = manifest.versions[index].deltas[deltaIndex].sqlParts?.indices.last {
                    manifest.versions[index].deltas[deltaIndex].sqlParts![last].sqlBytes += 1
                }
            }
        }
        try manifest.encoded().write(to: URL(fileURLWithPath: manifestPath))
        // The entries are not what the master recorded publishing: refused before anything is joined or signed.
        #expect {
            try releaseEleven(database, into: folder)
        } throws: { error in
            let words = "\(error.localizedDescription)"
            return words.contains("the folder is not what this master published; nothing was signed or written")
                && words.contains(#"versions[2].deltas[from 1] "2/delta-from-1.sql.gz": the folder lists 369 bytes"#)
                && words.contains("with 609 bytes of SQL, the master published 369 bytes")
        }
        #expect(try ReleaseFolder(path: folder).manifest(depth: { _ in .sizes }).newest == results.last?.released.version)
    }

    @Test func theAuditNamesAJoinThatIsNotWhatItSays() throws {
        let (_, folder, _) = try tenReleases()
        let manifestPath = (folder as NSString).appendingPathComponent(Manifest.fileName)
        var manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        let index = try #require(manifest.versions.last?.deltas.firstIndex { $0.from == 1 })
        manifest.versions[manifest.versions.count - 1].deltas[index].via = 10
        try manifest.encoded().write(to: URL(fileURLWithPath: manifestPath))
        #expect {
            try ReleaseFolder(path: folder).manifest()
        } throws: { error in
            "\(error.localizedDescription)".contains(#"versions[10].deltas[from 1].via "10/delta-from-1.sql.gz": 10 (expected a version between 1 and 10"#)
        }
    }

    /// A checkpoint released again (say, to add what a newer StationAdmin writes) may list other
    /// bytes for its deltas: the joins made from the old ones are copies and stay valid, and the
    /// next release joins the new ones.
    @Test func aCheckpointReleasedAgainLeavesTheJoinsMadeFromItValid() throws {
        let (database, folder, _) = try tenReleases()
        var options = ReleaseOptions(outputFolder: folder, version: 8, verify: false)
        options.skipChecks = true
        options.checkpointSpacing = 3
        try Publisher(database).release(options)
        #expect(try ReleaseFolder(path: folder).manifest().newest == 10)
        var batch = ChangeBatch()
        batch.put(.stations, stationRow(1120102, name: "駅11", line: 11201))
        try Curator(database).commit(batch, memo: "v11")
        options.version = nil
        options.checkpointSpacing = 2
        options.verify = true
        let result = try Publisher(database).release(options)
        #expect(result.verification?.failures == [])
        #expect(try Publisher(database).verifyRelease(folder: folder).failures == [])
    }

    // MARK: Helpers

    /// How many rendered deltas a delta's file is made of.
    static func steps(_ delta: ReleasedDelta, in manifest: Manifest) -> Int {
        guard let via = delta.via, let first = manifest.version(via)?.deltas.first(where: { $0.from == delta.from }) else { return 1 }
        return steps(first, in: manifest) + 1
    }

    static func delta(from: Int, to: Int, via: Int?) -> ReleasedDelta {
        ReleasedDelta(from: from, to: to, file: ReleasedFile(path: "\(to)/delta-from-\(from).sql.gz", bytes: 100, sha256: ""),
                      sqlBytes: 1000, sqlSha256: "", statements: [:], duplicates: 0, via: via)
    }

    static func version(_ version: Int, deltas: [ReleasedDelta]) -> ReleasedVersion {
        let file = ReleasedFile(path: "\(version)/stations.sqlite", bytes: 1, sha256: "")
        return ReleasedVersion(version: version, database: file, databaseGzip: file, rows: [:], contentHash: "",
                               deltas: deltas, carryOver: nil,
                               downloads: deltas.map { ClientDownload(from: $0.from, kind: .delta, path: $0.file.path) }, clientSchema: 1, splits: nil)
    }
}
