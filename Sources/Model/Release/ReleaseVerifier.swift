import Foundation
import GRDB
import StationDelta
import StationLog
import StationManifest
import StationSchema
import StationSignatures
import StationSQLite
import StationSupport

/// What `verify` checked, and what failed.
public struct VerificationReport: Sendable, Codable, Equatable {
    /// Each check that passed, in words.
    public var passed: [String] = []
    /// Each check that failed, in words, with what was expected.
    public var failures: [String] = []
    /// What passed but wants attention soon (a signed manifest near its expiry).
    public var warnings: [String] = []

    /// How many deltas were applied and passed.
    public var deltasPassed: Int { passed.filter { $0.contains(ReleaseVerifier.deltaPassed) }.count }
    /// The lines that say which update paths gave identical user records, and for which versions.
    public var pathsPassed: [String] { passed.filter { $0.contains(ReleaseVerifier.pathsAgree) } }
}

/// Proves that the three paths by which a phone at any older version v (1 to V − 1) reaches
/// version V leave it with the same master content and the same user records (DOMAIN.md,
/// "Three ways to the newest version"), with the real `sqlite3` client, each inside one transaction:
/// - **delta** (where one is published): applied to the version-v database holding synthetic
///   user records; `user_version` must become V and the content hash V's, and the same delta
///   applied to a database of another version must be refused by its guard and change no byte;
/// - **full download**: the database's gzip must inflate to the bundled file's exact bytes; the
///   inflated file is attached to the phone and the carry-over script run; run again, it must
///   change nothing;
/// - **app update**: the bundled file itself, attached and carried over the same way.
/// Every path must end with exactly the records `SyntheticCompletions.expected` gives: each
/// record kept, each split after v (chains included) copying the old station's record where
/// the user has none; a difference names the station codes.
package struct ReleaseVerifier {
    package let folder: ReleaseFolder
    package let master: MasterDatabase
    /// Where base databases are copied and built; removed afterwards.
    package let scratch: String

    package func verify(_ released: ReleasedVersion, olderDatabases: (ReleaseFolder, Manifest)?) throws -> VerificationReport {
        var report = VerificationReport()
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let version = released.version
        // On the other core while the paths below run (SQLite reading every row, beside the
        // copies, the inflating and sqlite3's carry-overs): told first all the same.
        let databasePath = folder.filePath(released.database.path)
        let targetHash = BackgroundTask { [declared = master.declared] in try ContentHash.compute(ofFile: databasePath, declared) }
        defer { _ = try? targetHash.wait() }
        // What a phone that downloads the database gets: it must be the bundled file, byte for byte.
        let downloaded = path("downloaded-\(version).sqlite")
        let inflated = DigestSink(next: try FileSink(path: downloaded))
        try Gunzip.inflate(folder.filePath(released.databaseGzip.path), into: inflated)
        if inflated.sha256 != released.database.sha256 {
            report.failures.append("\(released.databaseGzip.path): inflates to sha256 \(inflated.sha256), not the database's \(released.database.sha256)")
        }
        let bundled = path("bundled-\(version).sqlite")
        try FileManager.default.copyItem(atPath: folder.filePath(released.database.path), toPath: bundled)
        let carryOver = released.carryOver.map { folder.filePath($0.path) }
        let allSplits = try master.read { try UpdateLog.splits($0, after: 0, through: version) }

        Progress.phase("verifying how phones at versions 1…\(max(version - 1, 1)) reach version \(version), with sqlite3", total: max(version - 1, 0))
        var deltasChecked: [Int] = []
        for from in 1..<max(version, 1) {
            Progress.update(from - 1)
            let copies = (downloaded: downloaded, bundled: bundled)
            if try verifyPaths(from: from, to: released, splits: allSplits.filter { $0.version > from }, olderDatabases: olderDatabases,
                               copies: copies, carryOver: carryOver, &report) {
                deltasChecked.append(from)
            }
        }
        let hash = try targetHash.wait()
        if hash != released.contentHash {
            report.failures.insert("\(released.database.path): content hash \(hash), expected \(released.contentHash)", at: 0)
        }
        if version > 1 && report.failures.isEmpty {
            let paths = (deltasChecked.isEmpty ? [] : ["delta"]) + ["full download", "app update"]
            let unpublished = Set(1..<version).subtracting(deltasChecked).sorted()
            report.passed.append("\(paths.joined(separator: ", ")): \(Self.pathsAgree) for versions 1…\(version - 1)"
                + (unpublished.isEmpty || deltasChecked.isEmpty ? "" : " (no delta published for \(Self.list(unpublished)))"))
        }
        return report
    }

    /// The three paths of a phone at `from`, holding synthetic records of every split after it:
    /// the full download and the app update (the carry-over, run twice for the download) and the
    /// delta where one is published, each leaving the records the splits say. Whether a delta
    /// was checked.
    private func verifyPaths(from: Int, to released: ReleasedVersion, splits: [StationSplit], olderDatabases: (ReleaseFolder, Manifest)?,
                             copies: (downloaded: String, bundled: String), carryOver: String?, _ report: inout VerificationReport) throws -> Bool {
        let version = released.version
        let failuresBefore = report.failures.count
        var base = try baseDatabase(from, olderDatabases)
        // An older version's file from the folder is a phone's start only when it is the file the
        // manifest lists: otherwise its schema (a trigger) would run in sqlite3 below.
        if let (_, manifest) = olderDatabases, let older = manifest.version(from), try FileDigest.sha256(ofFile: base) != older.database.sha256 {
            report.failures.append("\(older.database.path): its SHA-256 is not the manifest's; version \(from)'s phone is built from the master instead")
            base = try baseDatabase(from, nil)
        }
        let phone = path("phone-\(from).sqlite")
        try? FileManager.default.removeItem(atPath: phone)
        try FileManager.default.copyItem(atPath: base, toPath: phone)
        let before = try SyntheticCompletions.add(to: phone, splits: splits)
        let expected = SyntheticCompletions.expected(before, splits: splits)
        func compare(_ records: [Int64: SyntheticCompletions.Record], _ name: String, _ report: inout VerificationReport) {
            report.failures += SyntheticCompletions.differences(records, expected: expected, before: before)
                .map { "\(name) from \(from): \($0)" }
        }
        // The carry-over leaves the phone's own file as it was: the delta runs on it afterwards.
        if let carryOver {
            for (name, file) in [("full download", copies.downloaded), ("app update", copies.bundled)] {
                let first = try carry(phone, into: file, script: carryOver, name: "\(name) from \(from)", &report)
                compare(first, name, &report)
                if name == "full download" {
                    let second = try carry(phone, into: file, script: carryOver, name: "\(name) from \(from), run twice", &report)
                    if second != first { report.failures.append("\(name) from \(from): the carry-over run a second time changed the user records") }
                }
                try SyntheticCompletions.clear(file)
            }
        } else {
            report.failures.append("version \(version) has no carry-over script: phones that download the database would lose their splits; release it again")
        }
        guard let delta = released.deltas.first(where: { $0.from == from }) else { return false }
        if let records = try apply(delta, to: phone, base: base, target: released, into: &report) { compare(records, "delta", &report) }
        if report.failures.count == failuresBefore {
            let joined = delta.via.map { " (joined through \($0))" } ?? ""
            report.passed.append("delta \(from) → \(version)\(joined): \(Self.deltaPassed), content as version \(version)'s, guard refuses other versions")
        }
        return true
    }

    package static let deltaPassed = "applied by sqlite3"
    package static let pathsAgree = "user records identical"

    private func path(_ name: String) -> String { (scratch as NSString).appendingPathComponent(name) }

    /// `1, 3…5, 8`.
    package static func list(_ versions: [Int]) -> String {
        var runs: [ClosedRange<Int>] = []
        for version in versions {
            if let last = runs.last, last.upperBound == version - 1 { runs[runs.count - 1] = last.lowerBound...version } else { runs.append(version...version) }
        }
        return runs.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)…\($0.upperBound)" }.joined(separator: ", ")
    }

    /// The database of version `from`: from the release folder when it was built there, else rebuilt.
    private func baseDatabase(_ from: Int, _ older: (ReleaseFolder, Manifest)?) throws -> String {
        if let (folder, manifest) = older, let version = manifest.version(from) {
            return folder.filePath(version.database.path)
        }
        let path = self.path("base-\(from).sqlite")
        if !FileManager.default.fileExists(atPath: path) { _ = try Publisher(master).buildClientDatabase(version: from, at: path) }
        return path
    }

    /// Runs the carry-over script as an app does: the phone's file as main, `file` attached as
    /// `incoming`, one transaction. Returns the records `file` then holds.
    private func carry(_ phone: String, into file: String, script: String, name: String, _ report: inout VerificationReport) throws -> [Int64: SyntheticCompletions.Record] {
        let run = path("carry-over-run.sql")
        let attach = "ATTACH DATABASE \(try SQLLiteral.quoted(file)) AS \(CarryOverScript.incomingSchema);\nBEGIN;\n"
        try (Data(attach.utf8) + (try Data(contentsOf: URL(fileURLWithPath: script))) + Data("COMMIT;\n".utf8))
            .write(to: URL(fileURLWithPath: run))
        let result = try SQLiteShell.run(script: run, database: phone)
        if result.status != 0 {
            report.failures.append("\(name): sqlite3 failed: \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return try SyntheticCompletions.read(file)
    }

    private static var readOnly: Configuration {
        var configuration = SQLiteDefences.configuration()
        configuration.readonly = true
        return configuration
    }

    /// Applies a delta to the phone; returns its records after, or nil when sqlite3 failed.
    private func apply(_ delta: ReleasedDelta, to phone: String, base: String, target: ReleasedVersion,
                       into report: inout VerificationReport) throws -> [Int64: SyntheticCompletions.Record]? {
        let name = "delta \(delta.from) → \(delta.to)"
        guard let sql = checkedSQL(of: delta, name: name, &report) else { return nil }
        let script = path("apply-\(delta.from).sql")
        try (Data("BEGIN;\n".utf8) + sql + Data("COMMIT;\n".utf8)).write(to: URL(fileURLWithPath: script))
        let result = try SQLiteShell.run(script: script, database: phone)
        if result.status != 0 {
            report.failures.append("\(name): sqlite3 failed: \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))")
            return nil
        }
        try compareWithTarget(phone, delta: delta, target: target, name: name, &report)
        let records = try SyntheticCompletions.read(phone)
        try checkTheGuardRefuses(script, at: base, delta: delta, name: name, &report)
        return records
    }

    /// The delta's SQL, inflated as one gzip member, as the simplest phone decoder does (a joined
    /// delta too), of the size and hashes (a joined delta's parts one after the other, each hashed;
    /// a rendered one's SQL whole) the manifest gives; nil with a failure told.
    private func checkedSQL(of delta: ReleasedDelta, name: String, _ report: inout VerificationReport) -> Data? {
        let sql: Data
        do {
            sql = try Gunzip.inflate(try Data(contentsOf: URL(fileURLWithPath: folder.filePath(delta.file.path))), name: delta.file.path)
        } catch {
            report.failures.append("\(name): \(delta.file.path) does not inflate as one gzip member (\(error.localizedDescription))")
            return nil
        }
        if sql.count != delta.sqlBytes {
            report.failures.append("\(name): \(delta.file.path) inflates to \(sql.count) bytes of SQL, the manifest says \(delta.sqlBytes)")
            return nil
        }
        guard let parts = delta.hashedSQLParts else {
            report.failures.append("\(name): \(delta.file.path): the manifest gives neither sql_sha256 nor sql_parts, so its SQL cannot be checked")
            return nil
        }
        var start = sql.startIndex
        for (index, part) in parts.enumerated() {
            let end = start + part.sqlBytes
            let digest = end <= sql.endIndex ? FileDigest.sha256(sql[start..<end]) : "none (the SQL ends before it)"
            if digest != part.sqlSha256 {
                let which = delta.sqlParts == nil ? "its SQL" : "part \(index + 1) of its SQL (bytes \(start - sql.startIndex) to \(end - sql.startIndex))"
                report.failures.append("\(name): \(delta.file.path): \(which) has sha256 \(digest), the manifest says \(part.sqlSha256)")
                return nil
            }
            start = end
        }
        return sql
    }

    /// The phone after the delta against the bundled file: its `user_version`, its schema (a
    /// phone's queries meet the tables, columns and indexes the bundled file has), its content hash.
    private func compareWithTarget(_ phone: String, delta: ReleasedDelta, target: ReleasedVersion, name: String,
                                   _ report: inout VerificationReport) throws {
        let bundled = try DatabaseQueue(path: folder.filePath(target.database.path), configuration: Self.readOnly)
        let targetShape = try bundled.read { try ClientSchema.shape($0) }
        try bundled.close()
        let queue = try DatabaseQueue(path: phone, configuration: SQLiteDefences.configuration())
        try queue.read { db in
            let userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? -1
            if userVersion != delta.to {
                report.failures.append("\(name): user_version is \(userVersion), expected \(delta.to)")
            }
            let shape = try ClientSchema.shape(db)
            if shape != targetShape {
                let differences = Set(shape).symmetricDifference(targetShape).sorted().prefix(3).joined(separator: "; ")
                report.failures.append("\(name): the schema differs from version \(delta.to)'s database (\(differences))")
                return
            }
            let hash = try ContentHash.compute(db, master.declared)
            if hash != target.contentHash {
                report.failures.append("\(name): content hash \(hash) differs from version \(delta.to)'s \(target.contentHash)")
            }
        }
        try queue.close()
    }

    /// A phone at another version: the delta's guard must refuse, and nothing may change.
    private func checkTheGuardRefuses(_ script: String, at base: String, delta: ReleasedDelta, name: String,
                                      _ report: inout VerificationReport) throws {
        let stranger = path("stranger-\(delta.from).sqlite")
        try? FileManager.default.removeItem(atPath: stranger)
        try FileManager.default.copyItem(atPath: base, toPath: stranger)
        let strangerQueue = try DatabaseQueue(path: stranger, configuration: SQLiteDefences.configuration())
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
package enum SyntheticCompletions {
    package struct Record: Equatable, CustomStringConvertible {
        package var date: String?
        package var memo: String?
        package var updatedAt: Int64?
        package var description: String { "(\(date ?? "NULL"), \(memo.map { "\($0.debugDescription)" } ?? "NULL"), \(updatedAt.map(String.init) ?? "NULL"))" }
    }

    package static func add(to path: String, splits: [StationSplit]) throws -> [Int64: Record] {
        let queue = try DatabaseQueue(path: path, configuration: SQLiteDefences.configuration())
        defer { try? queue.close() }
        try queue.write { db in
            let sample = try Int64.fetchAll(db, sql: "SELECT station_cd FROM stations WHERE station_cd % 7 = 0 OR rowid % 5 = 0")
            var records: [Int64: Record] = [:]
            for (index, station) in sample.enumerated() {
                records[station] = Record(date: index % 3 == 0 ? nil : "2019-0\(index % 9 + 1)-1\(index % 10)", memo: "sample \(index)", updatedAt: Int64(index))
            }
            // A station in the middle of a chain (the new station of one split, the old of another)
            // and the split that continues it get no record of their own, so that the chain must
            // carry the first station's record through.
            let chained = Set(splits.map(\.new)).intersection(splits.map(\.old))
            for (index, split) in splits.enumerated() {
                records[split.old] = chained.contains(split.old) ? nil
                    : Record(date: "2010-12-0\(index % 9 + 1)", memo: "visited \(split.old) — it's \"old\"\n🚃", updatedAt: 1_000 + Int64(index))
                if index % 2 == 1 && !chained.contains(split.old) && !chained.contains(split.new) {
                    records[split.new] = Record(date: "2024-03-16", memo: "already at \(split.new)", updatedAt: 2_000 + Int64(index))
                }
            }
            // One statement, the keys in order: a statement compiled per record, inserted in the
            // dictionary's hash order, would compile hundreds of thousands and touch pages at random.
            let insert = try db.makeStatement(sql: "INSERT OR REPLACE INTO \(UserRecords.table) (\(UserRecords.columns.joined(separator: ", "))) VALUES (?, ?, ?, ?)")
            for (station, record) in records.sorted(by: { $0.key < $1.key }) {
                try insert.execute(arguments: [station, record.date, record.memo, record.updatedAt])
            }
        }
        return try queue.read(read)
    }

    /// The records of a database file.
    package static func read(_ path: String) throws -> [Int64: Record] {
        let queue = try DatabaseQueue(path: path, configuration: SQLiteDefences.configuration())
        defer { try? queue.close() }
        return try queue.read(read)
    }

    /// Empties a database's `completions` (a fresh client database has none).
    package static func clear(_ path: String) throws {
        let queue = try DatabaseQueue(path: path, configuration: SQLiteDefences.configuration())
        defer { try? queue.close() }
        try queue.write { try $0.execute(sql: "DELETE FROM \(UserRecords.table)") }
    }

    /// What differs between the records a phone holds and those it must hold, station by station.
    package static func differences(_ records: [Int64: Record], expected: [Int64: Record], before: [Int64: Record]) -> [String] {
        var differences: [String] = []
        for (station, record) in expected.sorted(by: { $0.key < $1.key }) where records[station] != record {
            let had = before[station] != nil ? "was there before and" : "should have been copied by a split, and"
            differences.append("the user record of station \(station) \(had) is \(records[station].map { "\($0)" } ?? "missing")")
        }
        for station in Set(records.keys).subtracting(expected.keys).sorted() {
            differences.append("an unexpected user record appeared for station \(station)")
        }
        return differences
    }

    package static func read(_ db: Database) throws -> [Int64: Record] {
        var records: [Int64: Record] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT \(UserRecords.columns.joined(separator: ", ")) FROM \(UserRecords.table)")
        while let row = try rows.next() {
            records[row[0]] = Record(date: row[1], memo: row[2], updatedAt: row[3])
        }
        return records
    }

    /// What the phone must hold after the delta: every record kept, and each split, in order,
    /// copying the old station's record to the new station where the user has none.
    package static func expected(_ before: [Int64: Record], splits: [StationSplit]) -> [Int64: Record] {
        var records = before
        for split in splits where records[split.new] == nil {
            if let record = records[split.old] { records[split.new] = record }
        }
        return records
    }
}

extension Publisher {
    /// Verifies every delta of every version in a release folder (see `ReleaseVerifier`).
    ///
    /// - Throws: `ReleaseError` for a missing, corrupt or disagreeing folder;
    ///   failed checks are in the report, not thrown.
    ///
    /// With `trust`, the manifest must be signed by one of those keys, be of this master's
    /// lineage and be unexpired at `now`.
    public func verifyRelease(folder path: String = "release", trust: [TrustedKey] = [], now: Date = Date()) throws -> VerificationReport {
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
        let manifest = try folder.manifest()
        if let lineage = try master.lineage() { try folder.requireLineage(lineage, of: manifest) }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("stationadmin-verify-\(UUID().uuidString)").path
        var report = VerificationReport()
        let signatures = folder.signatureFindings(trust: trust, dataset: manifest.lineage, now: now)
        report.passed += signatures.passed
        report.failures += signatures.failures
        report.warnings += signatures.warnings
        for version in manifest.versions {
            let verifier = ReleaseVerifier(folder: folder, master: master, scratch: scratch)
            let part = try verifier.verify(version, olderDatabases: (folder, manifest))
            report.passed += part.passed.map { "version \(version.version): \($0)" }
            report.failures += part.failures.map { "version \(version.version): \($0)" }
        }
        // What the folder lists against what this master recorded publishing: a folder writer's
        // change to a file and its entry passes every hash, and not this.
        let recorded = try master.read(PublishedHistory.recordedEntries)
        let disagreements = PublishedHistory.disagreements(of: manifest, with: recorded)
        report.failures += disagreements.map { "not what the master published: \($0)" }
        let checked = manifest.versions.filter { recorded[$0.version] != nil }.count
        if disagreements.isEmpty && checked > 0 {
            report.passed.append("\(checked) of \(manifest.versions.count) versions listed as the master recorded publishing them")
        }
        return report
    }
}
