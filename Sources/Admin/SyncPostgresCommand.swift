import ArgumentParser
import Foundation
#if os(macOS)
import StationClient
#endif
import StationClientCore
import StationLog
import StationSignatures
import StationSupport
import StationWeb
import Synchronization

struct SyncPostgresCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "sync-postgres",
        abstract: "Bring the web service's PostgreSQL database to the newest release, every user's records carried across each split once.",
        discussion: """
            The manifest is verified as a phone verifies it (keys, dataset, sequence, expiry) and the client database by its size and \
            SHA-256; then, in one transaction under an advisory lock: the master tables (in --schema, created on the first run) \
            brought to the release, each split since the database's version copied for every user in the user tables \
            (updated_at set to now, so that the timestamp sync sends the copies to the phones), the --then SQL, and the release \
            recorded in SCHEMA.release_state. An older release, another dataset's, or a changed published version is refused. \
            Running it again changes nothing. The password may come from PGPASSWORD. docs/web.md says how a web service runs it.
            Example, on the web service's database (its completions table, docs/web.md): station-admin sync-postgres --from release --trust ~/.station-admin/signing-2026.pub --database postgres://web@127.0.0.1:5432/app

            Exit status: 0 on success; 1 when the command failed (the message says why and what to do, and nothing was committed); \
            2 for a usage error; 3 when the connection dropped during COMMIT and the server could not be asked whether it committed \
            (run it again: it finds the release recorded, or makes it anew).
            """)

    @Option(help: ArgumentHelp("The release folder: an http(s) URL, or a folder on disk.", valueName: "url|dir")) var from: String
    @Option(help: ArgumentHelp("A .pub file of the keys the release must be signed by (every line a key); repeatable.", valueName: "pub-file"))
    var trust: [String] = []
    @Flag(help: "Accept a release folder that is not signed.") var allowUnsigned = false
    @Option(help: ArgumentHelp("The database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=require].", valueName: "url"))
    var database: String
    @Option(help: "The schema of the master tables (created on the first run).") var schema = "station"
    @Option(help: ArgumentHelp("A table of users' records that splits copy within, as TABLE:USER_COLUMN[:STATION_COLUMN], each a plain name or one in double quotes ('\"Completions\":\"userId\"'); repeatable (default: completions:user_id).",
                               valueName: "table:user"))
    var userTable: [String] = []
    @Option(help: ArgumentHelp("The user tables' column of the time a record last changed, which a split's copy sets to now; matched ignoring case and underscores.",
                               valueName: "column"))
    var updatedColumn = "updated_at"
    @Option(help: ArgumentHelp("The user tables' column of the time a record was made, which a copy (a new record) sets to the copy's time too; matched as --updated-column is.",
                               valueName: "column"))
    var createdColumn = "created_at"
    @Option(help: ArgumentHelp("Seconds any lock the sync takes may be waited for (its own, or a row an app's transaction holds); past 2 s it says on stderr whom it waits for.",
                               valueName: "seconds"))
    var lockTimeout = 60
    @Option(help: ArgumentHelp("SQL run in the same transaction after the splits; pg_temp.station_split_users (table_name, user_id) lists the users they copied for.",
                               valueName: "file.sql"))
    var then: String?
    @Option(help: ArgumentHelp("Where the client database is downloaded, and the one the database holds kept for the next run: a folder of your own that no one else can write (default: one folder per database under ~/.cache/station-admin/sync).", valueName: "dir")) var scratch: String?
    @Flag(help: "A first run: the master tables and the release state alone, no split copied (for user tables not made yet, such as ones with a foreign key into the master's stations).")
    var masterOnly = false
    @Option(help: ArgumentHelp("A first run onto a web database whose master data is already at this version: only the splits after it are copied.",
                               valueName: "version"))
    var baseline: Int?
    @Flag(help: "Do everything in the transaction, then roll it back: say what a run would do.") var dryRun = false
    @Flag(help: "Print the report as JSON (docs/schemas/sync-postgres.schema.json).") var json = false
    @OptionGroup var progress: ProgressOptions

    func validate() throws {
        if lockTimeout < 1 { throw ValidationError("--lock-timeout takes a number of seconds, 1 or more (not \(lockTimeout)).") }
        if let baseline, baseline < 0 { throw ValidationError("--baseline takes a data version, 0 or more (not \(baseline)).") }
        if masterOnly && baseline != nil { throw ValidationError("--master-only copies no split; --baseline says which to copy: give one of them.") }
        if trust.isEmpty && !allowUnsigned { throw ValidationError("name the keys the release must be signed by with --trust FILE.pub (or --allow-unsigned).") }
    }

    func run() throws {
        let address = try PostgresAddress(database)
        var sync = PostgresSync(
            reader: ReleaseReader(configuration: .init(source: try Self.source(from), keys: try trust.flatMap(TrustedKey.all(contentsOfFile:)),
                                                       allowsUnsigned: allowUnsigned)),
            address: address,
            scratchFolder: scratch ?? Self.defaultScratch(address, schema: schema))
        sync.schema = schema
        if !userTable.isEmpty { sync.userTables = try userTable.map(UserTable.init(parsing:)) }
        sync.updatedColumn = updatedColumn
        sync.createdColumn = createdColumn
        sync.lockTimeout = lockTimeout
        sync.onWaiting = { wait in Console.error("sync-postgres: \(wait)") }
        sync.masterOnly = masterOnly
        sync.baseline = baseline
        if let then {
            do { sync.operatorSQL = try String(contentsOfFile: then, encoding: .utf8) } catch {
                throw ValidationError("--then \(then): cannot be read as UTF-8 text (\(error.localizedDescription))")
            }
        }
        sync.dryRun = dryRun
        let kill = FaultInjection.syncStep()
        if PhaseLog.isOn || kill != nil {
            let phases = Mutex(PhaseLog())
            sync.onStep = { step in
                phases.withLock { $0.done(step.rawValue) }
                try kill?(step)
            }
        }
        let report: PostgresSyncReport
        do {
            report = try SynchronousWait.result { [sync] in try await sync.run() }
        } catch {
            if json { try Console.printJSON(SyncFailure(error)) }
            if case .commitUnknown = error as? PostgresSyncError { throw FailedWithStatus(underlying: error, status: 3) }
            throw error
        }
        if json { return try Console.printJSON(report) }
        print(Self.words(report))
    }

    /// One folder per database and schema, so that the next run finds the client database this
    /// one kept, in the user's own cache: `$XDG_CACHE_HOME` (else `~/.cache`)
    /// `/station-admin/sync/HOST-PORT-DATABASE-SCHEMA`; without a home, one folder directly in
    /// `$TMPDIR` named with the user's id (the sync makes it private, and refuses it otherwise).
    static func defaultScratch(_ address: PostgresAddress, schema: String,
                               environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let name = String("\(address.host)-\(address.port)-\(address.database)-\(schema)".map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].flatMap { $0.hasPrefix("/") ? ($0 as NSString).appendingPathComponent(".cache") : nil }
        guard let cache else {
            return (NSTemporaryDirectory() as NSString).appendingPathComponent("station-admin-sync-\(geteuid())-\(name)")
        }
        return (cache as NSString).appendingPathComponent("station-admin/sync/\(name)")
    }

    static func source(_ from: String) throws -> any ReleaseSource {
        if from.hasPrefix("http://") || from.hasPrefix("https://") {
            guard let url = URL(string: from), url.host != nil else { throw ValidationError("--from '\(from)' is not a URL such as http://host:8080/") }
            #if os(Linux)
            // libcurl's transport without FoundationNetworking: the tool loads libcurl only here.
            return HTTPReleaseSource(curlAt: url)
            #else
            return HTTPReleaseSource(baseURL: url)
            #endif
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: from, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError("--from \(from): no such folder (expected a release folder, or an http(s) URL)")
        }
        return FolderReleaseSource(folder: URL(fileURLWithPath: from))
    }

    static func words(_ report: PostgresSyncReport) -> String {
        if report.upToDate { return "\(report.database) (schema \(report.schema)) is at version \(report.to) already: nothing to do." }
        var lines = [(report.committed ? "Brought" : "Dry run: would bring") + " \(report.database) (schema \(report.schema)) from "
            + (report.from == 0 ? "nothing" : "version \(report.from)") + " to version \(report.to)."]
        if let baseline = report.baseline {
            let evidence = switch baseline.evidence {
            case .masterTables: "checked: the master tables' content is version \(baseline.version)'s."
            case .usersRecords: "checked: the users' records agree with the splits through version \(baseline.version) and none after."
            case .nothing: "taken as given: no master tables, and no record at any split's old station to weigh it with."
            }
            lines.append("Baseline \(baseline.version) \(evidence)")
        }
        switch report.fetched {
        case let fetched? where fetched.kind == .delta:
            lines.append("Downloaded the delta from version \(fetched.from ?? report.from) (\(fetched.bytes.formattedBytes)) and ran it on the client database the last sync kept.")
        case let fetched?:
            lines.append("Downloaded the client database (\(fetched.bytes.formattedBytes)).")
        case nil:
            break
        }
        for name in ["prefectures", "companies", "lines", "stations", "connections"] {
            guard let counts = report.tables[name] else { continue }
            lines.append("  \(name): \(counts.inserted) new, \(counts.updated) changed" + (counts.removed > 0 ? ", \(counts.removed) removed" : ""))
        }
        if report.splits.isEmpty {
            lines.append("No split to apply.")
        } else {
            lines.append("Splits applied (each user's records of the old station copied to the new, once):")
            for split in report.splits {
                let copied = split.copied.sorted { $0.key < $1.key }.map { table, rows in
                    "\(rows) \(rows == 1 ? "row" : "rows") of \(table)"
                        + ((split.skipped[table] ?? 0) > 0 ? " (\(split.skipped[table]!) left as the app made them meanwhile)" : "")
                }.joined(separator: ", ")
                lines.append("  v\(split.version) \(split.old) → \(split.new): \(copied.isEmpty ? "no user table" : copied)")
            }
            lines.append("Records copied for \(report.usersAffected) \(report.usersAffected == 1 ? "user" : "users").")
        }
        return lines.joined(separator: "\n")
    }
}

/// What `sync-postgres --json` prints when it fails (docs/schemas/sync-postgres-failure.schema.json).
struct SyncFailure: Encodable {
    /// false, or null when it could not be told (`commit-unknown`, exit status 3).
    let committed: Bool?
    let error: String
    let kind: String
    let sqlstate: String?

    init(_ error: any Error) {
        self.error = error.localizedDescription
        if case .commitUnknown = error as? PostgresSyncError { committed = nil } else { committed = false }
        switch error {
        case let error as PostgresSyncError:
            kind = error.kind
            sqlstate = error.sqlState
        case let error as StationClientError:
            kind = error.category.rawValue.reduce(into: "") { text, character in
                if character.isUppercase { text += "-" + character.lowercased() } else { text.append(character) }
            }
            sqlstate = nil
        default:
            kind = "failed"
            sqlstate = nil
        }
    }

    enum CodingKeys: String, CodingKey { case committed, error, kind, sqlstate }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(committed, forKey: .committed)
        try container.encode(error, forKey: .error)
        try container.encode(kind, forKey: .kind)
        try container.encode(sqlstate, forKey: .sqlstate)
    }
}
