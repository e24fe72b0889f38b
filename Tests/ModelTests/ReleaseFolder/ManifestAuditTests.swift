import Foundation
import StationCSV
import StationCurate
import StationLog
import StationManifest
import StationReleaseFolder
import StationRelease
import StationSchema
import StationSupport
import Testing

/// `verify` checks every field of the manifest against the files (`ManifestAudit`): each
/// tampering below exited 0 before, and must now exit 1 naming the field and the file.
@Suite struct ManifestAuditTests {
    let scratch = Scratch()

    /// A master at version 3 and a folder with releases 2 and 3; version 3 sends version 1 and 2
    /// their deltas.
    func released() throws -> (MasterDatabase, String) {
        let database = try scratch.baseDatabase()
        for (version, name) in [(2, "八戸駅"), (3, "八戸")] {
            var batch = ChangeBatch()
            batch.put(.stations, stationRow(1120101, name: name, line: 11201))
            try Curator(database).commit(batch, memo: "v\(version)")
        }
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 2, verify: false))
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        return (database, folder)
    }

    /// A copy of the release folder with its manifest (as JSON) and files changed by `tamper`.
    func tampered(_ folder: String, _ name: String, _ tamper: (inout [String: Any], String) throws -> Void) throws -> String {
        let copy = scratch.path(name)
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        let manifestPath = copy + "/manifest.json"
        var manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifestPath))) as! [String: Any]
        try tamper(&manifest, copy)
        try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: manifestPath))
        return copy
    }

    /// Changes the entry of version `version` in a manifest decoded as JSON.
    static func edit(_ manifest: inout [String: Any], version: Int, _ body: (inout [String: Any]) -> Void) {
        var versions = manifest["versions"] as! [[String: Any]]
        let index = versions.firstIndex { $0["version"] as? Int == version }!
        body(&versions[index])
        manifest["versions"] = versions
    }

    static func setDownload(_ manifest: inout [String: Any], from: Int, kind: String, path: String) {
        edit(&manifest, version: 3) { version in
            var downloads = version["downloads"] as! [[String: Any]]
            let index = downloads.firstIndex { $0["from"] as? Int == from }!
            downloads[index]["kind"] = kind
            downloads[index]["path"] = path
            version["downloads"] = downloads
        }
    }

    static let seenByVerifyAlone: Set<String> = ["rows-one-more"]

    static let cases: [(name: String, expected: String, tamper: @Sendable (inout [String: Any], String) throws -> Void)] = [
        ("download-outside", #"versions[3].downloads[from 1].path "../../etc/passwd": leads outside the release folder (expected a path inside it)"#,
         { manifest, _ in setDownload(&manifest, from: 1, kind: "delta", path: "../../etc/passwd") }),
        ("download-absolute", #"versions[3].downloads[from 1].path "/etc/passwd": an absolute path (expected a path relative to the release folder)"#,
         { manifest, _ in setDownload(&manifest, from: 1, kind: "full", path: "/etc/passwd") }),
        ("download-wrong-kind", #"versions[3].downloads[from 1].path "2/stations.sqlite.gz": not the delta from 1 (expected 3/delta-from-1.sql.gz)"#,
         { manifest, _ in setDownload(&manifest, from: 1, kind: "delta", path: "2/stations.sqlite.gz") }),
        ("download-other-database", #"versions[3].downloads[from 1].path "2/stations.sqlite.gz": not version 3's database (expected 3/stations.sqlite.gz)"#,
         { manifest, _ in setDownload(&manifest, from: 1, kind: "full", path: "2/stations.sqlite.gz") }),
        ("download-missing-file", #"versions[3].downloads[from 2].path "3/delta-from-7.sql.gz": not the delta from 2 (expected 3/delta-from-2.sql.gz)"#,
         { manifest, _ in setDownload(&manifest, from: 2, kind: "delta", path: "3/delta-from-7.sql.gz") }),
        ("newest-unlisted", "newest: 9, but the highest version listed is 3",
         { manifest, _ in manifest["newest"] = 9 }),
        ("rows-one-more", #"versions[3].rows.stations "3/stations.sqlite": 25, but the database holds 24 rows"#,
         { manifest, _ in edit(&manifest, version: 3) { version in
             var rows = version["rows"] as! [String: Int]
             rows["stations"]! += 1
             version["rows"] = rows
         } }),
        ("unlisted-version-folder", #"folder "99": not listed in the manifest"#,
         { _, folder in
             try FileManager.default.createDirectory(atPath: folder + "/99", withIntermediateDirectories: true)
             try FileManager.default.copyItem(atPath: folder + "/3/stations.sqlite.gz", toPath: folder + "/99/stations.sqlite.gz")
         }),
        ("unlisted-delta", #"file "3/delta-from-0.sql.gz": not listed in the manifest"#,
         { _, folder in try FileManager.default.copyItem(atPath: folder + "/3/delta-from-1.sql.gz", toPath: folder + "/3/delta-from-0.sql.gz") }),
        ("file-behind-a-link", #"versions[3].carry_over.path "3/carry-over.sql": a symbolic link (expected a regular file)"#,
         { _, folder in
             try FileManager.default.moveItem(atPath: folder + "/3/carry-over.sql", toPath: folder + "/carry-over-elsewhere.sql")
             try FileManager.default.createSymbolicLink(atPath: folder + "/3/carry-over.sql", withDestinationPath: folder + "/carry-over-elsewhere.sql")
         }),
        ("download-missing-version", #"versions[3].downloads: for versions 1 (expected each older version 1 to 2 once)"#,
         { manifest, _ in edit(&manifest, version: 3) { version in version["downloads"] = [(version["downloads"] as! [[String: Any]])[0]] } }),
        ("full-without-carry-over", #"versions[3].downloads[from 1].carry_over: not version 3's carry-over script (expected 3/carry-over.sql)"#,
         { manifest, _ in setDownload(&manifest, from: 1, kind: "full", path: "3/stations.sqlite.gz") }),
        ("newest-without-content-columns",
         "versions[3].content_columns: lists no columns of stations (expected the columns content_hash covers, for each of prefectures, companies, lines, stations, connections)",
         { manifest, _ in edit(&manifest, version: 3) { version in
             var columns = version["content_columns"] as! [String: Any]
             columns["stations"] = nil
             version["content_columns"] = columns
         } }),
    ]

    /// After its publish, a release checks the older versions by their entries alone
    /// (`Depth.listed`): it audited their files when it read the manifest, under the lock it holds.
    @Test func aVersionAuditedByItsEntriesAloneIsNotLookedAtOnDisk() throws {
        let (_, folder) = try released()
        let copy = try tampered(folder, "listed") { manifest, copy in
            Self.edit(&manifest, version: 2) { version in
                var gzip = version["database_gzip"] as! [String: Any]
                gzip["path"] = "3/stations.sqlite.gz"
                version["database_gzip"] = gzip
            }
            try FileManager.default.removeItem(atPath: copy + "/2/carry-over.sql")
            try Data("stray".utf8).write(to: URL(fileURLWithPath: copy + "/2/stray.txt"))
        }
        let manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: copy + "/manifest.json")))
        func problems(_ depth: ManifestAudit.Depth) throws -> [String] {
            try ManifestAudit(folder: copy, depth: { $0 == 2 ? depth : .sizes }, databaseContents: ReleaseFolder.databaseContents).problems(manifest)
                .map { "\($0.field) \($0.file ?? "-")" }
        }
        let misplaced = "versions[2].database_gzip.path 3/stations.sqlite.gz"
        #expect(try problems(.listed) == [misplaced])
        let sized = try problems(.sizes)
        #expect(sized == [misplaced, "versions[2].carry_over.path 2/carry-over.sql", "file 2/stations.sqlite.gz", "file 2/stray.txt"],
                "\(sized)")
    }

    @Test func anUntamperedFolderPasses() throws {
        let (database, folder) = try released()
        let result = try CommandRunner.run(["verify", "--db", database.path, "--out", folder])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test(arguments: cases.map(\.name))
    func verifyRefusesATamperedManifestNamingTheFieldAndTheFile(_ name: String) throws {
        let (database, folder) = try released()
        let tamper = Self.cases.first { $0.name == name }!
        let copy = try tampered(folder, name, tamper.tamper)
        let result = try CommandRunner.run(["verify", "--db", database.path, "--out", copy])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("\(copy)/manifest.json: the manifest disagrees with the release folder"), "\(result.stderr)")
        #expect(result.stderr.contains("\n  " + tamper.expected), "\(result.stderr)")
        // A release into such a folder is refused too, and the folder is left as it was; but for
        // an older version's rows, which a release does not read (it checks the older versions'
        // sizes, so as not to slow down as the folder grows).
        if Self.seenByVerifyAlone.contains(name) { return }
        let before = try FileManager.default.contentsOfDirectory(atPath: copy).sorted()
        #expect(throws: ReleaseError.self) { try Publisher(database).release(ReleaseOptions(outputFolder: copy, version: 1, verify: false)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy).sorted() == before)
    }
}
