import Foundation
import GRDB

/// What `verify` checked, and what failed.
public struct VerificationReport: Sendable, Codable, Equatable {
    public var passed: [String] = []
    public var failures: [String] = []
}

/// Applies every delta of a release to the database of its base version, with the real
/// `sqlite3` client inside one transaction, and checks the result:
/// - `user_version` is the target version and the content hash is the target database's;
/// - every user record that was there is there unchanged, and every DUPLICATE copied the
///   old station's record to the new one without overwriting one the user already had;
/// - the same delta applied to a database of another version is refused by its guard,
///   and changes no byte.
struct ReleaseVerifier {
    let folder: ReleaseFolder
    let master: MasterDatabase
    /// Where base databases are copied and built; removed afterwards.
    let scratch: String

    func verify(_ released: ReleasedVersion, olderDatabases: (ReleaseFolder, Manifest)?) throws -> VerificationReport {
        var report = VerificationReport()
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let targetHash = try ContentHash.compute(ofFile: folder.url(released.database.path))
        if targetHash != released.contentHash {
            report.failures.append("\(released.database.path): content hash \(targetHash), expected \(released.contentHash)")
        }
        Progress.phase("verifying the deltas of version \(released.version) with sqlite3", total: released.deltas.count)
        for (index, delta) in released.deltas.enumerated() {
            Progress.update(index)
            let base = try baseDatabase(delta.from, olderDatabases)
            let failuresBefore = report.failures.count
            try check(delta, base: base, target: released, into: &report)
            if report.failures.count == failuresBefore {
                report.passed.append("delta \(delta.from) → \(delta.to): applied by sqlite3, content and user records as expected, guard refuses other versions")
            }
        }
        return report
    }

    /// The database of version `from`: from the release folder when it was built there, else rebuilt.
    private func baseDatabase(_ from: Int, _ older: (ReleaseFolder, Manifest)?) throws -> String {
        if let (folder, manifest) = older, let version = manifest.version(from) {
            return folder.url(version.database.path)
        }
        let path = (scratch as NSString).appendingPathComponent("base-\(from).sqlite")
        if !FileManager.default.fileExists(atPath: path) { _ = try master.buildClientDatabase(version: from, at: path) }
        return path
    }

    private func check(_ delta: ReleasedDelta, base: String, target: ReleasedVersion, into report: inout VerificationReport) throws {
        let name = "delta \(delta.from) → \(delta.to)"
        let sql = try Gunzip.read(folder.url(delta.file.path))
        let script = (scratch as NSString).appendingPathComponent("apply-\(delta.from).sql")
        try (Data("BEGIN;\n".utf8) + sql + Data("COMMIT;\n".utf8)).write(to: URL(fileURLWithPath: script))

        // A phone at the right version, with user records on split stations.
        let phone = (scratch as NSString).appendingPathComponent("phone-\(delta.from).sqlite")
        try? FileManager.default.removeItem(atPath: phone)
        try FileManager.default.copyItem(atPath: base, toPath: phone)
        let splits = try master.read { try UpdateLog.splits($0, after: delta.from, through: delta.to) }
        let before = try SyntheticCompletions.add(to: phone, splits: splits)
        let result = try SQLiteShell.run(script: script, database: phone)
        if result.status != 0 {
            report.failures.append("\(name): sqlite3 failed: \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))")
            return
        }
        let queue = try DatabaseQueue(path: phone)
        try queue.read { db in
            let userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? -1
            if userVersion != delta.to {
                report.failures.append("\(name): user_version is \(userVersion), expected \(delta.to)")
            }
            let hash = try ContentHash.compute(db)
            if hash != target.contentHash {
                report.failures.append("\(name): content hash \(hash) differs from version \(delta.to)'s \(target.contentHash)")
            }
            let after = try SyntheticCompletions.read(db)
            let expected = SyntheticCompletions.expected(before, splits: splits)
            for (station, record) in expected.sorted(by: { $0.key < $1.key }) where after[station] != record {
                let had = before[station] != nil ? "was there before and" : "should have been copied by a DUPLICATE, and"
                report.failures.append("\(name): the user record of station \(station) \(had) is \(after[station].map { "\($0)" } ?? "missing")")
            }
            for station in Set(after.keys).subtracting(expected.keys).sorted() {
                report.failures.append("\(name): an unexpected user record appeared for station \(station)")
            }
        }
        try queue.close()

        // A phone at another version: the guard must refuse, and nothing may change.
        let stranger = (scratch as NSString).appendingPathComponent("stranger-\(delta.from).sqlite")
        try? FileManager.default.removeItem(atPath: stranger)
        try FileManager.default.copyItem(atPath: base, toPath: stranger)
        let strangerQueue = try DatabaseQueue(path: stranger)
        try strangerQueue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = \(delta.from + 1)") }
        try strangerQueue.close()
        let strangerHash = try FileDigest.sha256(ofFile: stranger)
        let refused = try SQLiteShell.run(script: script, database: stranger)
        if refused.status == 0 || !refused.error.contains("this delta needs data version \(delta.from)") {
            report.failures.append("\(name): a database at version \(delta.from + 1) was not refused by the guard (sqlite3 said: \(refused.error))")
        }
        if try FileDigest.sha256(ofFile: stranger) != strangerHash {
            report.failures.append("\(name): the refused database changed")
        }
    }
}

/// User records a verification puts on a phone: on a sample of stations, on every
/// station that is split later, and on half of the new stations of those splits
/// (which a DUPLICATE must not overwrite), with awkward memos.
enum SyntheticCompletions {
    struct Record: Equatable, CustomStringConvertible {
        var date: String?
        var memo: String?
        var updatedAt: Int64?
        var description: String { "(\(date ?? "NULL"), \(memo.map { "\($0.debugDescription)" } ?? "NULL"), \(updatedAt.map(String.init) ?? "NULL"))" }
    }

    static func add(to path: String, splits: [StationSplit]) throws -> [Int64: Record] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.write { db in
            let sample = try Int64.fetchAll(db, sql: "SELECT station_cd FROM stations WHERE station_cd % 7 = 0 OR rowid % 5 = 0")
            var records: [Int64: Record] = [:]
            for (index, station) in sample.enumerated() {
                records[station] = Record(date: index % 3 == 0 ? nil : "2019-0\(index % 9 + 1)-1\(index % 10)", memo: "sample \(index)", updatedAt: Int64(index))
            }
            for (index, split) in splits.enumerated() {
                records[split.old] = Record(date: "2010-12-0\(index % 9 + 1)", memo: "visited \(split.old) — it's \"old\"\n🚃", updatedAt: 1_000 + Int64(index))
                if index % 2 == 1 {
                    records[split.new] = Record(date: "2024-03-16", memo: "already at \(split.new)", updatedAt: 2_000 + Int64(index))
                }
            }
            for (station, record) in records {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO completions (station_cd, date, memo, updated_at) VALUES (?, ?, ?, ?)",
                    arguments: [station, record.date, record.memo, record.updatedAt])
            }
        }
        return try queue.read(read)
    }

    static func read(_ db: Database) throws -> [Int64: Record] {
        var records: [Int64: Record] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT station_cd, date, memo, updated_at FROM completions") {
            records[row[0]] = Record(date: row[1], memo: row[2], updatedAt: row[3])
        }
        return records
    }

    /// What the phone must hold after the delta: every record kept, and each split, in order,
    /// copying the old station's record to the new station where the user has none.
    static func expected(_ before: [Int64: Record], splits: [StationSplit]) -> [Int64: Record] {
        var records = before
        for split in splits where records[split.new] == nil {
            if let record = records[split.old] { records[split.new] = record }
        }
        return records
    }
}

extension MasterDatabase {
    /// Verifies every delta of every version in a release folder (see `ReleaseVerifier`).
    ///
    /// - Throws: `ReleaseError` for a missing, corrupt or disagreeing folder;
    ///   failed checks are in the report, not thrown.
    public func verifyRelease(folder path: String = "release") throws -> VerificationReport {
        defer { Progress.finish() }
        let folder = ReleaseFolder(path: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ReleaseError.missingFolder(path)
        }
        // Not even a lock file in a folder that holds no release.
        if !FileManager.default.fileExists(atPath: folder.manifestPath) && !FileManager.default.fileExists(atPath: folder.intentPath) {
            throw ReleaseError.missingManifest(path)
        }
        // A shared lock: no release changes the folder while it is read.
        let lock = try ReleaseFolderLock.acquire(folder, exclusive: false, timeout: 600)
        defer { withExtendedLifetime(lock) {} }
        if FileManager.default.fileExists(atPath: folder.intentPath) { throw ReleaseError.interruptedRelease(path) }
        let manifest = try folder.loadManifest()
        if let lineage = try lineage() { try folder.requireLineage(lineage, of: manifest) }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("station-admin-verify-\(UUID().uuidString)").path
        var report = VerificationReport()
        for version in manifest.versions {
            let verifier = ReleaseVerifier(folder: folder, master: self, scratch: scratch)
            let part = try verifier.verify(version, olderDatabases: (folder, manifest))
            report.passed += part.passed.map { "version \(version.version): \($0)" }
            report.failures += part.failures.map { "version \(version.version): \($0)" }
        }
        return report
    }
}
