import Foundation
import GRDB
import StationCurate
import StationManifest
import StationRelease
import StationSchema
import StationSignatures
import StationSupport
import Testing

/// A writer of the release folder (a CDN origin, a synced or shared folder, an artifact store)
/// gets nothing signed: `resign` checks the current signature, every file and the master's record,
/// `release` refuses a folder that lists anything the master did not publish and joins only deltas
/// it made, `verify` names the file. Each case ends refused, the file named, the folder's
/// manifest and signatures byte for byte as they were.
@Suite(.serialized) struct FolderWriterTests {
    let scratch = Scratch()

    struct Signed {
        let database: MasterDatabase
        let folder: String
        let key: SigningKey
        var manifestPath: String { folder + "/" + Manifest.fileName }
        var signaturesPath: String { folder + "/" + ManifestSignatures.fileName }
    }

    /// Versions 1 to 5 released and signed with checkpoints 2 apart (so the next release joins
    /// older deltas).
    private func signedFolder() throws -> Signed {
        let database = try scratch.baseDatabase()
        let key = try SigningKey.generate(to: scratch.path("curator-key"))
        let folder = scratch.path("release")
        try Publisher(database).release(options(folder, key))
        for version in 2...5 { try nextVersion(database, version, release: options(folder, key)) }
        return Signed(database: database, folder: folder, key: key)
    }

    private func options(_ folder: String, _ key: SigningKey) -> ReleaseOptions {
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.checkpointSpacing = 2
        options.signing = ManifestSigning(keys: [key])
        return options
    }

    private func nextVersion(_ database: MasterDatabase, _ version: Int, release: ReleaseOptions? = nil) throws {
        var batch = ChangeBatch()
        batch.put(.stations, stationRow(1120105, name: "三沢 \(version)", line: 11201))
        try Curator(database).commit(batch, memo: "v\(version)")
        if let release { try Publisher(database).release(release) }
    }

    private func manifest(_ signed: Signed) throws -> Manifest { try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: signed.manifestPath))) }

    /// Hostile SQL appended to the delta at `path`, gzipped as a folder writer would.
    private func poison(_ signed: Signed, _ path: String) throws -> Data {
        let file = signed.folder + "/" + path
        let sql = try Gunzip.read(file) + Data("DROP TABLE IF EXISTS main.visits;\n".utf8)
        try gzipWithTheCommand(sql, to: file)
        return sql
    }

    /// A byte in the middle of `path` flipped, its size kept: what a hash alone finds.
    private func flipAByte(_ signed: Signed, _ path: String) throws {
        let file = URL(fileURLWithPath: signed.folder + "/" + path)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: file)
    }

    /// The delta's entry rewritten to what its file now holds (sizes and hashes).
    private func rewriteEntry(_ signed: Signed, version: Int, from: Int, sql: Data) throws {
        var manifest = try manifest(signed)
        let index = try #require(manifest.versions.firstIndex { $0.version == version })
        let deltaIndex = try #require(manifest.versions[index].deltas.firstIndex { $0.from == from })
        let delta = manifest.versions[index].deltas[deltaIndex]
        let bytes = try Data(contentsOf: URL(fileURLWithPath: signed.folder + "/" + delta.file.path))
        manifest.versions[index].deltas[deltaIndex].file = ReleasedFile(path: delta.file.path, bytes: bytes.count, sha256: FileDigest.sha256(bytes))
        manifest.versions[index].deltas[deltaIndex].sqlBytes = sql.count
        if var parts = delta.sqlParts {
            // A joined delta's parts: the last one grows by what was appended.
            let start = parts.dropLast().reduce(0) { $0 + $1.sqlBytes }
            parts[parts.count - 1] = DeltaSQLPart(sqlBytes: sql.count - start, sqlSha256: FileDigest.sha256(sql.suffix(from: sql.startIndex + start)))
            manifest.versions[index].deltas[deltaIndex].sqlParts = parts
        } else {
            manifest.versions[index].deltas[deltaIndex].sqlSha256 = FileDigest.sha256(sql)
        }
        try manifest.encoded().write(to: URL(fileURLWithPath: signed.manifestPath))
    }

    /// Runs `arguments`, expects it refused naming each of `words`, and the manifest and its
    /// signatures unchanged.
    private func expectRefused(_ signed: Signed, _ arguments: [String], naming words: [String],
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let manifest = try FileDigest.sha256(ofFile: signed.manifestPath)
        let signatures = try FileDigest.sha256(ofFile: signed.signaturesPath)
        let result = try CommandRunner.run(arguments)
        #expect(result.status == 1, "\(arguments.prefix(1)): exit \(result.status): \(result.stdout) \(result.stderr)", sourceLocation: sourceLocation)
        for word in words {
            #expect(result.stderr.contains(word), "\(arguments.prefix(1)) does not name \(word): \(result.stderr)", sourceLocation: sourceLocation)
        }
        #expect(try FileDigest.sha256(ofFile: signed.manifestPath) == manifest, "\(arguments.prefix(1)) wrote the manifest", sourceLocation: sourceLocation)
        #expect(try FileDigest.sha256(ofFile: signed.signaturesPath) == signatures, "\(arguments.prefix(1)) wrote the signatures", sourceLocation: sourceLocation)
    }

    private func resign(_ signed: Signed, _ extra: [String] = []) -> [String] {
        ["resign", "--out", signed.folder, "--sign", signed.key.path] + extra
    }

    private func release(_ signed: Signed) -> [String] {
        ["release", "--out", signed.folder, "--sign", signed.key.path, "--db", signed.database.path]
    }

    @Test func aDeltasBytesChangedUnderItsEntryAreNeverSigned() throws {
        let signed = try signedFolder()
        try flipAByte(signed, "5/delta-from-4.sql.gz")
        try expectRefused(signed, resign(signed), naming: ["5/delta-from-4.sql.gz", "sha256", "nothing was signed"])
        try expectRefused(signed, ["verify", "--out", signed.folder, "--db", signed.database.path], naming: ["5/delta-from-4.sql.gz"])
    }

    /// The attack as reproduced: hostile SQL appended to the newest delta, its entry's sizes and
    /// hashes rewritten. `resign` finds the manifest no longer the one signed; with the master it
    /// names the file too; the next `release --sign` and `verify` name it.
    @Test func aDeltaAndItsEntryRewrittenAreNeverSigned() throws {
        let signed = try signedFolder()
        let sql = try poison(signed, "5/delta-from-4.sql.gz")
        try rewriteEntry(signed, version: 5, from: 4, sql: sql)
        try expectRefused(signed, resign(signed), naming: [signed.manifestPath, "no signature of this manifest", "nothing was signed"])
        // A key the attacker would like trusted changes nothing: the folder is not the master's.
        try expectRefused(signed, resign(signed, ["--db", signed.database.path, "--trust", signed.key.path + ".pub"]),
                          naming: ["no signature of this manifest"])
        try nextVersion(signed.database, 6)
        try expectRefused(signed, release(signed), naming: ["not what this master published", #"versions[5].deltas[from 4] "5/delta-from-4.sql.gz""#])
        try expectRefused(signed, ["verify", "--out", signed.folder, "--db", signed.database.path],
                          naming: ["not what the master published: versions[5].deltas[from 4]"])
    }

    /// An older delta the next release joins: changed with its entry rewritten, and changed alone.
    @Test(arguments: [true, false])
    func anOlderDeltaChangedBeforeTheNextReleaseJoinsItIsRefused(entryRewritten: Bool) throws {
        let signed = try signedFolder()
        try nextVersion(signed.database, 6)
        let plan = DeltaChainPlan.make(version: 6, released: try manifest(signed).versions, spacing: 2) { _ in true }
        let (from, via) = try #require(plan.joinable.sorted { $0.key < $1.key }.first)
        let older = "\(via)/delta-from-\(from).sql.gz"
        if entryRewritten {
            try rewriteEntry(signed, version: via, from: from, sql: try poison(signed, older))
        } else {
            try flipAByte(signed, older)
        }
        let master = try FileDigest.sha256(ofFile: signed.database.path)
        try expectRefused(signed, release(signed), naming: [older] + (entryRewritten ? ["not what this master published"] : ["sha256", "the file changed since it was released"]))
        #expect(try signed.database.read { try PublishedHistory.recorded($0)[6] } == nil, "version 6 was recorded as published")
        _ = master
        #expect(!FileManager.default.fileExists(atPath: signed.folder + "/6"))
    }

    /// A database and its gzip swapped for a crafted one, their entries rewritten.
    @Test func aDatabaseSwappedIsRefused() throws {
        let signed = try signedFolder()
        let path = signed.folder + "/5/stations.sqlite"
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "UPDATE stations SET station_name = 'swapped' WHERE rowid = (SELECT min(rowid) FROM stations)") }
        try queue.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try gzipWithTheCommand(bytes, to: path + ".gz")
        let gzip = try Data(contentsOf: URL(fileURLWithPath: path + ".gz"))
        var manifest = try manifest(signed)
        manifest.versions[4].database = ReleasedFile(path: "5/stations.sqlite", bytes: bytes.count, sha256: FileDigest.sha256(bytes))
        manifest.versions[4].databaseGzip = ReleasedFile(path: "5/stations.sqlite.gz", bytes: gzip.count, sha256: FileDigest.sha256(gzip))
        try manifest.encoded().write(to: URL(fileURLWithPath: signed.manifestPath))
        try expectRefused(signed, resign(signed), naming: ["no signature of this manifest"])
        try nextVersion(signed.database, 6)
        try expectRefused(signed, release(signed), naming: [#"versions[5].database "5/stations.sqlite""#, #"versions[5].database_gzip "5/stations.sqlite.gz""#])
    }

    @Test func aFileAddedIsRefused() throws {
        let signed = try signedFolder()
        try Data("DROP TABLE visits;".utf8).write(to: URL(fileURLWithPath: signed.folder + "/5/extra.sql"))
        try expectRefused(signed, resign(signed), naming: ["5/extra.sql"])
        try expectRefused(signed, ["verify", "--out", signed.folder, "--db", signed.database.path], naming: ["5/extra.sql"])
    }

    /// The manifest changed and left unsigned: no key `resign` trusts signed it, whatever
    /// `--trust` adds.
    @Test func aManifestRewrittenUnsignedIsRefused() throws {
        let signed = try signedFolder()
        var manifest = try manifest(signed)
        manifest.versions[4].splits = (manifest.versions[4].splits ?? []) + [StationSplit(old: 1120101, new: 1120102, version: 5)]
        try manifest.encoded().write(to: URL(fileURLWithPath: signed.manifestPath))
        let other = try SigningKey.generate(to: scratch.path("other-key"))
        try expectRefused(signed, resign(signed, ["--trust", other.path + ".pub"]), naming: ["no signature of this manifest"])
        try expectRefused(signed, resign(signed, ["--db", signed.database.path]), naming: ["no signature of this manifest"])
    }

    /// An unsigned folder is signed the first time only against the master's record.
    @Test func anUnsignedFolderIsSignedTheFirstTimeOnlyAgainstTheMaster() throws {
        let database = try scratch.baseDatabase()
        let folder = scratch.path("unsigned")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        let key = try SigningKey.generate(to: scratch.path("first-key"))
        let refused = try CommandRunner.run(["resign", "--out", folder, "--sign", key.path])
        #expect(refused.status == 1 && refused.stderr.contains("the folder's manifest is not signed"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/" + ManifestSignatures.fileName))
        let signedOnce = try CommandRunner.run(["resign", "--out", folder, "--sign", key.path, "--db", database.path])
        #expect(signedOnce.status == 0, "\(signedOnce.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/" + ManifestSignatures.fileName))
    }
}
