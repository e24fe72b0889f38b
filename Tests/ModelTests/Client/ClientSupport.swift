import Foundation
import GRDB
import StationClient
import StationLog
import StationManifest
import StationRelease
import StationSchema
import StationSignatures
import StationSupport
import Testing

/// A signed release folder of versions 1…5 (`Scratch.servedFolder`: version 4 downloads the full
/// database, 1…3 deltas) and phones made from it, each with the verifier's synthetic records and
/// an app's own tables: what the client tests update, by library call or through `station-phone`.
struct ClientFolder {
    let database: MasterDatabase
    let path: String
    let key: SigningKey
    let splits: [StationSplit]
    var newest: String { path + "/5" }
    var url: URL { URL(fileURLWithPath: path) }

    init(_ scratch: Scratch) throws {
        let (database, folder) = try scratch.servedFolder()
        key = try SigningKey.generate(to: scratch.path("curator-key-\(UUID().uuidString.prefix(6))"))
        try ManifestResigning.resign(folder: folder, signing: ManifestSigning(keys: [key]), master: database)
        self.database = database
        path = folder
        splits = try database.read { try UpdateLog.splits($0) }
    }

    var trustedKey: TrustedKey { get throws { try TrustedKey(contentsOfFile: key.path + ".pub") } }

    /// The bundled release of the newest version, as an app ships it.
    var bundle: BundledRelease {
        BundledRelease(database: URL(fileURLWithPath: newest + "/stations.sqlite"), manifest: URL(fileURLWithPath: path + "/manifest.json"))
    }

    func manifest() throws -> Manifest { try Manifest.decode(try Data(contentsOf: url.appendingPathComponent("manifest.json"))) }

    /// Writes `manifest` into the folder and signs it again (a new sequence).
    func publish(_ manifest: Manifest) throws {
        try manifest.encoded().write(to: url.appendingPathComponent("manifest.json"))
        try ManifestResigning.signAsIs(folder: path, signing: ManifestSigning(keys: [key]))
    }
}

/// A phone's database at some version: the synthetic records before and as they must be at 5,
/// and the app's own objects.
struct Phone {
    let path: String
    let version: Int
    let before: [Int64: SyntheticCompletions.Record]
    let expected: [Int64: SyntheticCompletions.Record]
    let app: AppTables
    /// The names the release owns, and the app's corpus of objects as it was made (nil without app tables).
    let releaseNames: Set<String>
    let corpus: AppSchemaCorpus.Snapshot?

    var url: URL { URL(fileURLWithPath: path) }

    /// A copy of version `version`'s database with records and, unless `appTables` is false, the
    /// app's tables and the corpus of app objects (`AppSchemaCorpus`), in `journalMode`.
    init(_ folder: ClientFolder, at version: Int, in scratch: Scratch, appTables: Bool = true, journalMode: String = "delete") throws {
        path = scratch.path("phone-\(version)-\(UUID().uuidString.prefix(8)).sqlite")
        self.version = version
        try FileManager.default.copyItem(atPath: "\(folder.path)/\(version)/stations.sqlite", toPath: path)
        let splitsAfter = folder.splits.filter { $0.version > version }
        before = try SyntheticCompletions.add(to: path, splits: splitsAfter)
        expected = SyntheticCompletions.expected(before, splits: splitsAfter)
        releaseNames = try AppSchemaCorpus.releaseNames(folder.newest + "/stations.sqlite")
        if appTables {
            try AppSchemaCorpus.create(in: path, journalMode: journalMode)
            app = try AppTables.create(in: path)
            corpus = try AppSchemaCorpus.snapshot(path, releaseNames: releaseNames)
        } else {
            corpus = nil
            app = AppTables(objects: [], rows: [])
        }
    }

    /// What differs in the app's corpus from how it was made, and what its own checks find: `[]` when whole.
    func corpusProblems() throws -> [String] {
        guard let corpus else { return [] }
        let now = try AppSchemaCorpus.snapshot(path, releaseNames: releaseNames)
        var problems = try AppSchemaCorpus.problems(path)
        if now.objects != corpus.objects { problems.append("objects: \(Set(now.objects).symmetricDifference(corpus.objects))") }
        for (table, rows) in corpus.rows where now.rows[table] != rows {
            problems.append("\(table): \(rows.count) rows became \(now.rows[table]?.count ?? 0), first difference \(zip(rows, now.rows[table] ?? []).first { $0 != $1 }.map { "\($0) → \($1)" } ?? "at the end")")
        }
        return problems
    }

    func userVersion() throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? -1 }
    }

    /// Every object of the database and every row, in order, but the phone's trust record (which
    /// a manifest that verified changes before any download): what a refused update leaves as it was.
    func contentBesideTrustRecord() throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            let objects = try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master WHERE name != 'station_client_trust' ORDER BY type, name")
            var lines = ["user_version \(try Int.fetchOne(db, sql: "PRAGMA user_version") ?? -1)"] + objects.map { "\($0)" }
            for object in objects where (object["type"] as String) == "table" {
                let name: String = object["name"]
                // Sorted here: a WITHOUT ROWID table (connections) has no rowid to order by.
                lines += try Row.fetchAll(db, sql: "SELECT * FROM \"\(name)\"").map { "\(name): \($0)" }.sorted()
            }
            return lines
        }
    }

    /// The sequence of the newest manifest the database records accepting; nil before any.
    func acceptedSequence() throws -> Int? {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try db.tableExists("station_client_trust") ? try Int.fetchOne(db, sql: "SELECT sequence FROM station_client_trust") : nil
        }
    }

    /// Whether the database is this phone's old state or the new one, whole: version, records,
    /// app tables; nil when it is neither.
    func state() throws -> String? {
        let version = try userVersion()
        let records = try SyntheticCompletions.read(path)
        guard try AppTables.read(path) == app, try corpusProblems().isEmpty else { return nil }
        if version == self.version && records == before { return "old" }
        if version == 5 && records == expected { return "new" }
        return nil
    }
}

/// An app's own objects, as the tests' app makes them: a table with AUTOINCREMENT, its index, a
/// trigger that logs into a second table, and a view; with the rows of both tables.
struct AppTables: Equatable {
    var objects: [String]
    var rows: [String]

    static let schema = """
        CREATE TABLE visits (id INTEGER PRIMARY KEY AUTOINCREMENT, station_cd INTEGER NOT NULL, note TEXT);
        CREATE INDEX visits_by_station ON visits (station_cd);
        CREATE TABLE visit_log (visit_id INTEGER NOT NULL, what TEXT NOT NULL);
        CREATE TRIGGER visits_logged AFTER INSERT ON visits BEGIN INSERT INTO visit_log VALUES (new.id, 'added'); END;
        CREATE VIEW visited_stations AS SELECT DISTINCT station_cd FROM visits;
        """

    static func create(in path: String, rows: Int = 50) throws -> AppTables {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: schema)
            for row in 0..<rows {
                try db.execute(sql: "INSERT INTO visits (station_cd, note) VALUES (?, ?)", arguments: [1_110_101 + row, "visit \(row) 'quoted'\n"])
            }
        }
        try queue.close()
        return try read(path)
    }

    /// The app's objects (their SQL) and rows, as the file holds them.
    static func read(_ path: String) throws -> AppTables {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            let objects = try String.fetchAll(db, sql: """
                SELECT type || ' ' || name || ': ' || sql FROM sqlite_master
                WHERE name IN ('visits', 'visits_by_station', 'visit_log', 'visits_logged', 'visited_stations') ORDER BY name
                """)
            guard !objects.isEmpty else { return AppTables(objects: [], rows: []) }
            var rows = try String.fetchAll(db, sql: "SELECT id || '|' || station_cd || '|' || note FROM visits ORDER BY id")
            rows += try String.fetchAll(db, sql: "SELECT 'log ' || visit_id || ' ' || what FROM visit_log ORDER BY rowid")
            rows += try String.fetchAll(db, sql: "SELECT 'sequence ' || seq FROM sqlite_sequence WHERE name = 'visits'")
            return AppTables(objects: objects, rows: rows)
        }
    }
}

/// Runs `station-phone`, the example app, as a separate process.
enum StationPhoneProgram {
    static let url: URL = CommandRunner.executable.deletingLastPathComponent().appendingPathComponent("station-phone")

    struct Outcome {
        let status: Int32
        let killed: Bool
        let output: String
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
        let process = try start(arguments, environment: environment)
        return process.finish()
    }

    /// A started `station-phone`; `finish()` waits for it.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Started {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("station-phone-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return Started(process: process, log: log, handle: handle)
    }

    struct Started {
        let process: Process
        let log: URL
        let handle: FileHandle

        func finish() -> Outcome {
            process.waitUntilExit()
            try? handle.close()
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: log)
            return Outcome(status: process.terminationStatus, killed: process.terminationReason == .uncaughtSignal, output: output)
        }
    }

    /// `station-phone update` of `phone` from `source` trusting the folder's key.
    static func update(_ phone: Phone, from source: String, _ folder: ClientFolder, _ extra: [String] = [],
                       environment: [String: String] = [:]) throws -> Outcome {
        try run(["update", "--db", phone.path, "--from", source, "--trust", folder.key.path + ".pub"] + extra, environment: environment)
    }

    /// `station-phone install-bundled` of the folder's newest version into `phone`.
    static func installBundled(_ phone: Phone, _ folder: ClientFolder, environment: [String: String] = [:]) throws -> Outcome {
        try run(["install-bundled", "--db", phone.path, "--database", folder.newest + "/stations.sqlite" ], environment: environment)
    }

    /// The peak resident memory a run reported, in KiB (`STATION_PHONE_PROFILE=1`).
    static func peakMemory(_ output: String) -> Int? {
        output.split(separator: "\n").last { $0.hasPrefix("peak memory: ") }.flatMap { Int($0.dropFirst("peak memory: ".count).prefix { $0.isNumber }) }
    }
}

/// The files an update leaves beside `phone` (the lock file, which stays, aside).
func leftovers(of phone: Phone) throws -> [String] {
    let folder = (phone.path as NSString).deletingLastPathComponent, name = (phone.path as NSString).lastPathComponent
    return try FileManager.default.contentsOfDirectory(atPath: folder)
        .filter { $0.hasPrefix(name + ".") && $0 != name + ".lock" }
}

/// `data` gzipped by the `gzip` command into `path`.
func gzipWithTheCommand(_ data: Data, to path: String) throws {
    let plain = path + ".plain"
    try data.write(to: URL(fileURLWithPath: plain))
    let result = try CommandRunner.run(["-c", "gzip -n -c '\(plain)' > '\(path)' && rm '\(plain)'"], program: URL(fileURLWithPath: "/bin/sh"))
    #expect(result.status == 0, "\(result.stderr)")
}
