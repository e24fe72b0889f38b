import Foundation
import StationCheck
import StationCurate
import StationImport
import StationManifest
import StationRelease
import StationSchema
import StationSupport
import StationWeights
import Testing

/// What phones receive from the demo's release 4, byte for byte: the SQL of the delta from each
/// older version and the manifest, committed under `Fixtures/golden/demo-release-4`. A change to
/// what phones get is then a visible diff in review, never a silent one.
///
/// After a deliberate change, write the files anew and review the diff before committing:
/// `STATION_ADMIN_UPDATE_GOLDEN=1 swift test --filter GoldenFilesTests`.
@Suite struct GoldenFilesTests {
    let scratch = Scratch()
    static let folder = Fixtures.root.appendingPathComponent("golden/demo-release-4")
    static let updating = ProcessInfo.processInfo.environment["STATION_ADMIN_UPDATE_GOLDEN"] == "1"

    /// scripts/demo's steps that change the master, through the library: the two snapshots,
    /// releases 1 and 2, the Hokuriku plan, weights with seed 1 and proposed majors, the Seikan
    /// waiver, release 4.
    func demoRelease4() throws -> (folder: String, manifest: Manifest) {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        let folder = scratch.path("release")
        try Importer(database).importSnapshot([Fixtures.ekidata2019], options: ImportOptions(memo: "ekidata 2019-12-27"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021], options: ImportOptions(memo: "ekidata 2021-03-12"))
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 1, verify: false))
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        _ = try Weigher(database).assignWeights(seed: 1, proposeMajor: true, memo: nil, dryRun: false)
        try Checker(database).waive(rule: "connection-too-long", table: "connections", key: "11118/1111802/1111806",
                           reason: "Seikan Tunnel: 59.6 km, no station between")
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        #expect(result.released.version == 4)
        return (folder, try ReleaseFolder(path: folder).manifest())
    }

    @Test func theDemosRelease4SendsPhonesWhatItSentBefore() throws {
        let (folder, manifest) = try demoRelease4()
        let released = try #require(manifest.versions.last)
        var produced: [String: Data] = [:]
        for delta in released.deltas {
            produced["delta-from-\(delta.from).sql"] = try Gunzip.read((folder as NSString).appendingPathComponent(delta.file.path))
        }
        // The lineage is a new random id for every master: the one byte sequence that may differ.
        let lineage = try #require(manifest.lineage)
        let manifestText = try String(contentsOfFile: (folder as NSString).appendingPathComponent(Manifest.fileName), encoding: .utf8)
        produced["manifest.json"] = Data(manifestText.replacingOccurrences(of: lineage, with: "LINEAGE").utf8)
        #expect(produced.keys.sorted() == ["delta-from-1.sql", "delta-from-2.sql", "delta-from-3.sql", "manifest.json"])

        if Self.updating {
            try? FileManager.default.removeItem(at: Self.folder)
            try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
            for (name, data) in produced { try data.write(to: Self.folder.appendingPathComponent(name)) }
        }
        let committed = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).sorted()
        #expect(committed == produced.keys.sorted(), "golden files without a counterpart, or missing")
        for (name, data) in produced.sorted(by: { $0.key < $1.key }) {
            let golden = try Data(contentsOf: Self.folder.appendingPathComponent(name))
            #expect(data == golden, """
                \(name) differs from Fixtures/golden/demo-release-4/\(name) (\(data.count) bytes, golden \(golden.count)): \
                phones would receive something else. If that is meant, rewrite the files with \
                STATION_ADMIN_UPDATE_GOLDEN=1 swift test --filter GoldenFilesTests and review the diff
                """)
        }
    }
}
