import Foundation
import GRDB
import StationCurate
import StationImport
import StationManifest
import StationRelease
import StationSchema
import StationSignatures
import StationSQLite
import StationSupport
import StationSynth

/// The kit's own signed releases, made fresh in a work folder on every run: a small synthetic
/// master taken through versions 1…5 (DOMAIN.md, "Data versions"), with
///
/// - at 2, two splits (A → B, and C → D where the verifier's records hold one of the user's at D);
/// - at 3, the chain B → E;
/// - at 4, the client schema grown (`station_name_en`, client schema 2), filled for a few stations;
/// - at 5, a rename and a closure;
///
/// each version released into `honest/` and signed by the kit's trusted key, and every
/// `ReleaseVariant` made from it.
public struct ConformanceReleases: Sendable {
    /// The work folder: `honest/`, a folder per variant, the keys, the master.
    public let folder: String
    /// The key the client must pin: `{key}` in the client's command.
    public let trustedKeyPath: String
    /// Every split of the releases, in the order recorded.
    public let splits: [StationSplit]

    /// A variant's folder.
    public func path(of variant: ReleaseVariant) -> String { (folder as NSString).appendingPathComponent(variant.rawValue) }

    /// The client database of `version` as the honest release built it.
    public func database(_ version: Int) -> String { path(of: .honest) + "/\(version)/stations.sqlite" }

    /// The client schema change the kit's version 4 brings (a column phones of schema 1 gain).
    static let englishNames = ClientSchemaChange(
        version: 2, id: "conformance-station-name-en",
        columns: [(.stations, MasterTable.Column("station_name_en", .text, inCSV: false, limit: .name, since: 2))],
        indexes: ["CREATE INDEX stations_by_english_name ON stations (station_name_en)"])

    /// Makes the releases in `folder` (created; it must not exist or be empty).
    public static func make(in folder: String, stations: Int = 240, seed: UInt64 = 20_261_129) throws -> ConformanceReleases {
        let files = FileManager.default
        try files.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String { (folder as NSString).appendingPathComponent(name) }
        try files.createDirectory(atPath: path("keys"), withIntermediateDirectories: true)
        let key = try SigningKey.generate(to: path("keys/trusted"))
        let otherKey = try SigningKey.generate(to: path("keys/other"))
        let signing = ManifestSigning(keys: [key])

        try SnapshotSynthesizer.generate(stations: stations, seed: seed, into: path("snapshot"))
        var master = try MasterDatabase.create(at: path("master.sqlite"))
        try Importer(master).importSnapshot([path("snapshot")], options: ImportOptions(memo: "conformance: version 1"))
        var options = ReleaseOptions(outputFolder: path(ReleaseVariant.honest.rawValue), verify: false)
        options.skipChecks = true
        options.signing = signing
        try Publisher(master).release(options)

        let codes = try master.read { try Int64.fetchAll($0, sql: "SELECT station_cd FROM stations ORDER BY station_cd") }
        let next = (codes.last ?? 0) + 1
        let (a, b, c, d, e) = (codes[3], next, codes[codes.count / 2], next + 1, next + 2)
        var second = ChangeBatch()
        try splitRow(of: a, into: b, master, &second)
        try splitRow(of: c, into: d, master, &second)
        try Curator(master).commit(second, memo: "conformance: version 2, two splits")
        try Publisher(master).release(options)

        var third = ChangeBatch()
        try splitRow(of: b, into: e, master, &third)
        try Curator(master).commit(third, memo: "conformance: version 3, a chain of splits")
        try Publisher(master).release(options)

        master = try MasterDatabase.open(at: master.path, declared: DeclaredSchema.shipped(plus: [englishNames]))
        try Curator(master).apply([codes[1], codes[2], e].map {
            LocatedOperation(.edit(table: .stations, key: ["\($0)"], values: ["station_name_en": "Station \($0) 'en'"]))
        }, memo: "conformance: version 4, client schema 2")
        try Publisher(master).release(options)
        try files.copyItem(atPath: path(ReleaseVariant.honest.rawValue), toPath: path(ReleaseVariant.atFour.rawValue))

        try Curator(master).apply([
            LocatedOperation(.edit(table: .stations, key: ["\(codes[9])"], values: ["station_name": "新しい名前"])),
            LocatedOperation(.edit(table: .stations, key: ["\(codes[11])"], values: ["e_status": "2"])),
        ], memo: "conformance: version 5, a rename and a closure")
        try Publisher(master).release(options)
        let splits = try master.read { try UpdateLog.splits($0) }

        let releases = ConformanceReleases(folder: folder, trustedKeyPath: key.path + ".pub", splits: splits)
        try releases.makeVariants(signing: signing, otherKey: otherKey)
        return releases
    }

    /// A new station `new` as a copy of `old`'s row, and the split between them.
    private static func splitRow(of old: Int64, into new: Int64, _ master: MasterDatabase, _ batch: inout ChangeBatch) throws {
        let row = try master.read { try Row.fetchOne($0, sql: "SELECT * FROM stations WHERE station_cd = ?", arguments: [old]) }
        guard let row else { throw ConformanceError.kit("station \(old) missing from the kit's master") }
        var values: [String: DatabaseValueConvertible?] = [:]
        for column in row.columnNames { values[column] = row[column] as DatabaseValue }
        values["station_cd"] = new
        values["station_name"] = "\(row["station_name"] as String? ?? "")（新）"
        batch.put(.stations, values)
        batch.duplicate(old: old, new: new)
    }

    /// Every variant, each a copy of the honest folder changed in one way.
    private func makeVariants(signing: ManifestSigning, otherKey: SigningKey) throws {
        let folders = VariantFolders(releases: self, signing: signing)
        let fullOnly = try makeListingVariants(folders, otherKey: otherKey)
        try makeContentVariants(folders, fullOnly: fullOnly)
        try makeTrustVariants(folders)
        try makeWrongContent(folders)
        try makeBomb(folders)
    }

    /// Copies of the honest folder, and their manifests read and signed again as they are.
    private struct VariantFolders {
        let releases: ConformanceReleases
        let signing: ManifestSigning
        var honest: String { releases.path(of: .honest) }
        /// The newest version's delta from 3, the one the variants change.
        var deltaFromThree: String { "\(ConformanceScenario.newest)/delta-from-3.sql.gz" }

        func copy(_ variant: ReleaseVariant, from source: String? = nil) throws -> String {
            let target = releases.path(of: variant)
            try FileManager.default.copyItem(atPath: source ?? honest, toPath: target)
            return target
        }

        func manifest(_ folder: String) throws -> Manifest {
            try Manifest.decode(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + Manifest.fileName)))
        }

        func publish(_ manifest: Manifest, in folder: String, signing: ManifestSigning? = nil) throws {
            try manifest.encoded().write(to: URL(fileURLWithPath: folder + "/" + Manifest.fileName))
            try ManifestResigning.signAsIs(folder: folder, signing: signing ?? self.signing)
        }
    }

    /// Variants of what the manifest lists and how it is signed: full downloads only, the
    /// manifest altered or missing, unsigned, signed by another key. Returns the full-only folder.
    private func makeListingVariants(_ folders: VariantFolders, otherKey: SigningKey) throws -> String {
        let newest = ConformanceScenario.newest
        let fullOnly = try folders.copy(.fullOnly)
        var full = try folders.manifest(fullOnly)
        full.versions[full.versions.count - 1].downloads = (1..<newest).map {
            ClientDownload(from: $0, kind: .full, path: "\(newest)/stations.sqlite.gz", carryOver: "\(newest)/carry-over.sql")
        }
        try folders.publish(full, in: fullOnly)

        let altered = try folders.copy(.manifestAltered)
        try Data("\n".utf8).appendTo(altered + "/" + Manifest.fileName)
        try FileManager.default.removeItem(atPath: try folders.copy(.noManifest) + "/" + Manifest.fileName)
        try FileManager.default.removeItem(atPath: try folders.copy(.unsigned) + "/" + Manifest.fileName + ".sig")
        try ManifestResigning.signAsIs(folder: try folders.copy(.otherKey), signing: ManifestSigning(keys: [otherKey]))
        return fullOnly
    }

    /// Variants whose files are not what was signed, or signed but not what they claim: a delta
    /// and a database altered, version 4's delta from 3 listed and signed as version 5's.
    private func makeContentVariants(_ folders: VariantFolders, fullOnly: String) throws {
        let newest = ConformanceScenario.newest, deltaFromThree = folders.deltaFromThree
        let deltaAltered = try folders.copy(.deltaAltered)
        let honestSQL = try Gunzip.read(folders.honest + "/" + deltaFromThree)
        try Self.writeGzip(Data("DELETE FROM completions;\n".utf8) + honestSQL, to: deltaAltered + "/" + deltaFromThree)

        let databaseAltered = try folders.copy(.databaseAltered, from: fullOnly)
        let renamed = databaseAltered + "/altered.sqlite"
        try FileManager.default.copyItem(atPath: database(newest), toPath: renamed)
        let queue = try DatabaseQueue(path: renamed, configuration: SQLiteDefences.configuration())
        try queue.write { try $0.execute(sql: "UPDATE stations SET station_name = '改ざん' WHERE rowid = (SELECT min(rowid) FROM stations)") }
        try queue.close()
        try Self.writeGzip(try Data(contentsOf: URL(fileURLWithPath: renamed)), to: databaseAltered + "/\(newest)/stations.sqlite.gz")
        try FileManager.default.removeItem(atPath: renamed)

        // Version 4's delta from 3, offered as version 5's: listed and signed as it is.
        let anotherVersion = try folders.copy(.deltaOfAnotherVersion)
        let fourFromThree = folders.honest + "/4/delta-from-3.sql.gz"
        try FileManager.default.removeItem(atPath: anotherVersion + "/" + deltaFromThree)
        try FileManager.default.copyItem(atPath: fourFromThree, toPath: anotherVersion + "/" + deltaFromThree)
        let fourSQL = try Gunzip.read(fourFromThree)
        try folders.publish(try Self.listing(deltaFromThree, in: try folders.manifest(anotherVersion), file: anotherVersion + "/" + deltaFromThree,
                                             sqlBytes: fourSQL.count, sqlSha256: FileDigest.sha256(fourSQL)),
                            in: anotherVersion)
    }

    /// The honest delta from 3 with a station renamed before its version is set, listed and
    /// signed as it is: every hash of the file and its SQL true, the result not the signed content.
    private func makeWrongContent(_ folders: VariantFolders) throws {
        let deltaFromThree = folders.deltaFromThree, newest = ConformanceScenario.newest
        let sql = String(decoding: try Gunzip.read(folders.honest + "/" + deltaFromThree), as: UTF8.self)
        let setVersion = "PRAGMA user_version = \(newest);\n"
        guard let at = sql.range(of: setVersion, options: .backwards) else {
            throw ConformanceError.kit("the kit's delta from 3 sets no version \(newest)")
        }
        let wrong = Data((sql[..<at.lowerBound] + "UPDATE stations SET station_name = station_name || '（誤）' WHERE rowid = (SELECT min(rowid) FROM stations);\n"
                          + sql[at.lowerBound...]).utf8)
        let folder = try folders.copy(.deltaWrongContent)
        try Self.writeGzip(wrong, to: folder + "/" + deltaFromThree)
        try folders.publish(try Self.listing(deltaFromThree, in: try folders.manifest(folder), file: folder + "/" + deltaFromThree,
                                             sqlBytes: wrong.count, sqlSha256: FileDigest.sha256(wrong)),
                            in: folder)
    }

    /// Variants a phone's trust rules refuse: expired, of another dataset.
    private func makeTrustVariants(_ folders: VariantFolders) throws {
        try ManifestResigning.resign(folder: try folders.copy(.expired),
                                     signing: ManifestSigning(keys: folders.signing.keys, validity: 86_400, now: Date().addingTimeInterval(-10 * 86_400)))
        // A clock 30 days behind the publisher's, seen from the client: published ahead of its
        // now, then a later signing whose expiry its own clock has not reached.
        let day: TimeInterval = 86_400
        let ahead = try folders.copy(.publishedAhead)
        try ManifestResigning.resign(folder: ahead, signing: ManifestSigning(keys: folders.signing.keys, validity: 7 * day, now: Date().addingTimeInterval(30 * day)))
        try ManifestResigning.resign(folder: try folders.copy(.expiredBeforeAccepted, from: ahead),
                                     signing: ManifestSigning(keys: folders.signing.keys, validity: 10 * day, now: Date()))
        let otherDataset = try folders.copy(.otherDataset)
        var foreign = try folders.manifest(otherDataset)
        foreign.lineage = "conformance-other-dataset"
        try folders.publish(foreign, in: otherDataset)
    }

    /// A signed gzip bomb: 512 MiB of spaces before the SQL (a shell reading it line by line
    /// holds it all), listed with the honest delta's SQL size and hash.
    private func makeBomb(_ folders: VariantFolders) throws {
        let deltaFromThree = folders.deltaFromThree
        let honestSQL = try Gunzip.read(folders.honest + "/" + deltaFromThree)
        let bomb = try folders.copy(.gzipBomb)
        let sink = try GzipSink(next: FileSink(path: bomb + "/" + deltaFromThree), settings: .delta)
        let spaces = Data(repeating: UInt8(ascii: " "), count: 1 << 20)
        for _ in 0..<512 { try spaces.withUnsafeBytes { try sink.write($0) } }
        try Data("\n".utf8).withUnsafeBytes { try sink.write($0) }
        try honestSQL.withUnsafeBytes { try sink.write($0) }
        try sink.finish()
        let declared = try folders.manifest(folders.honest).versions.last?.deltas.first { $0.from == 3 }
        try folders.publish(try Self.listing(deltaFromThree, in: try folders.manifest(bomb), file: bomb + "/" + deltaFromThree,
                                             sqlBytes: declared?.sqlBytes ?? honestSQL.count, sqlSha256: FileDigest.sha256(honestSQL)),
                            in: bomb)
    }

    /// `manifest` with the newest version's delta at `path` listed as the file now is, its SQL
    /// declared as given.
    private static func listing(_ path: String, in manifest: Manifest, file: String, sqlBytes: Int, sqlSha256: String) throws -> Manifest {
        var manifest = manifest
        let last = manifest.versions.count - 1
        guard let index = manifest.versions[last].deltas.firstIndex(where: { $0.file.path == path }) else {
            throw ConformanceError.kit("the kit's release lists no \(path)")
        }
        let bytes = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        manifest.versions[last].deltas[index].file = ReleasedFile(path: path, bytes: bytes, sha256: try FileDigest.sha256(ofFile: file))
        manifest.versions[last].deltas[index].sqlBytes = sqlBytes
        manifest.versions[last].deltas[index].sqlSha256 = sqlSha256
        manifest.versions[last].deltas[index].sqlParts = nil
        return manifest
    }

    private static func writeGzip(_ data: Data, to path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        let sink = try GzipSink(next: FileSink(path: path), settings: .delta)
        try data.withUnsafeBytes { try sink.write($0) }
        try sink.finish()
    }
}

extension Data {
    fileprivate func appendTo(_ path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: self)
    }
}
