import Foundation
import GRDB
import StationClient
import StationCurate
import StationImport
import StationRelease
import StationSchema
import StationSignatures
import StationWeb
import Testing

/// The web service's database as a second client of a release (DOMAIN.md, "The web service"), on a
/// real PostgreSQL server the tests start: the bundled 2019 and 2021 snapshots and the Hokuriku plan
/// released and synced version by version and all at once, users' records carried across the
/// plan's splits exactly once, and every refusal leaving the database as it was.
@Suite(.serialized, .tags(.slow), .leftOutOfQuickRuns) struct PostgresSyncTests {
    let scratch = Scratch()

    /// A signed folder released at versions 1 (2019-12-27), 2 (2021-03-12) and 3 (the Hokuriku plan,
    /// splitting 敦賀 1141512 → 9944001 and 大聖寺 1141530 → 9944019), with a copy of it as each
    /// release left it.
    struct History {
        let folder: String
        let copies: [Int: String]
        let key: SigningKey
        let master: MasterDatabase
        var trusted: [TrustedKey] { get throws { try TrustedKey.all(contentsOfFile: key.path + ".pub") } }
    }

    func history() throws -> History {
        let master = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        let key = try SigningKey.generate(to: scratch.path("curator-key"))
        let folder = scratch.path("release")
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.skipChecks = true
        options.signing = ManifestSigning(keys: [key])
        var copies: [Int: String] = [:]
        func release(_ version: Int) throws {
            try Publisher(master).release(options)
            copies[version] = scratch.path("release-at-\(version)")
            try FileManager.default.copyItem(atPath: folder, toPath: copies[version]!)
        }
        try Importer(master).importSnapshot([Fixtures.ekidata2019])
        try release(1)
        try Importer(master).importSnapshot([Fixtures.ekidata2021])
        try release(2)
        try Curator(master).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        try release(3)
        return History(folder: folder, copies: copies, key: key, master: master)
    }

    func server() throws -> PostgresServer {
        guard let server = PostgresServer.shared else {
            Issue.record("PostgreSQL is not installed (scripts/test and .ci/run install postgresql)")
            throw CancellationError()
        }
        return server
    }

    @discardableResult
    func sync(_ folder: String, _ database: String, keys: [TrustedKey], _ change: (inout PostgresSync) -> Void = { _ in }) async throws -> PostgresSyncReport {
        var sync = PostgresSync(reader: ReleaseReader(configuration: .init(source: FolderReleaseSource(folder: URL(fileURLWithPath: folder)), keys: keys)),
                                address: try PostgresAddress(try server().address(database)), scratchFolder: scratch.path("sync-scratch"))
        change(&sync)
        return try await sync.run()
    }

    /// A release history, its keys, and a new database with the web service's `completions`: what
    /// most tests start from.
    func webDatabase() throws -> (History, [TrustedKey], PostgresServer, String) {
        let history = try history()
        let server = try server()
        let database = try server.makeDatabase()
        try makeCompletions(database)
        return (history, try history.trusted, server, database)
    }

    /// The web service's own table of users' records, with records of three users.
    func makeCompletions(_ database: String) throws {
        try server().psql(database, """
            CREATE TABLE completions (id bigserial PRIMARY KEY, user_id bigint NOT NULL, station_cd bigint NOT NULL, date text, memo text,
                                      updated_at timestamptz NOT NULL, UNIQUE (user_id, station_cd));
            INSERT INTO completions (user_id, station_cd, date, memo, updated_at) VALUES
                (1, 1141512, '2024-04-01', '敦賀で乗り換え', '2024-04-01T10:00:00Z'),
                (2, 1141512, '2019-08-15', NULL, '2019-08-15T09:00:00Z'), (2, 1141530, '2020-01-02', 'tab\there', '2020-01-02T09:00:00Z'),
                (3, 1141530, '2021-05-05', 'already has both', '2021-05-05T09:00:00Z'), (3, 9944019, '2024-03-20', 'own record', '2024-03-20T09:00:00Z'),
                (3, 1120101, '2020-02-02', 'untouched', '2020-02-02T09:00:00Z');
            """)
    }

    /// Each master table of `database` against the client database of `version` in the folder, as
    /// COPY's text (PostgreSQL's own output) and the same rows read from SQLite: equal row for row.
    func expectMasterTablesEqual(_ database: String, to clientDatabase: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let queue = try DatabaseQueue(path: clientDatabase)
        defer { try? queue.close() }
        for table in ["prefectures", "companies", "lines", "stations", "connections"] {
            let (columns, key) = try queue.read { db -> ([String], [String]) in
                let rows = try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", arguments: [table])
                return (rows.map { $0["name"] }, rows.filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }.map { $0["name"] })
            }
            let server = try server().psql(database, "COPY (SELECT \(columns.joined(separator: ", ")) FROM station.\(table) ORDER BY \(key.joined(separator: ", "))) TO STDOUT")
            let client = try queue.read { db in
                try Row.fetchAll(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY \(key.joined(separator: ", "))").map { row in
                    (0..<columns.count).map { index -> String in
                        let value: DatabaseValue = row[index]
                        switch value.storage {
                        case .null: return "\\N"
                        case .int64(let number): return String(number)
                        case .double(let number): return String(number)
                        case .string(let text): return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
                            .replacingOccurrences(of: "\n", with: "\\n")
                        case .blob: return "blob"
                        }
                    }.joined(separator: "\t")
                }.joined(separator: "\n")
            }
            #expect(server == client, "\(table): the server's rows differ from the release's", sourceLocation: sourceLocation)
        }
    }

    /// `--json`'s `kind` is the schema's words: lower case and hyphens, one per case
    /// (`operator-sql-ended-transaction`, which the old spelling from the case's name made
    /// `operator-s-q-l-ended-transaction`).
    @Test func eachFailureKindIsTheSchemasWord() throws {
        let kinds: [PostgresSyncError] = [
            .badAddress(text: "", reason: ""), .badIdentifier("", role: ""), .badUserTable(""), .cannotConnect(address: "", reason: ""),
            .server(address: "", step: "", message: ""), .missingPrivilege(address: "", step: "", message: "", grant: ""),
            .notAFirstRun(option: "", version: 1), .baselineAfterRelease(baseline: 1, release: 1), .rollback(database: 1, release: 1),
            .sameVersionOtherContent(version: 1, database: "", release: ""), .otherDataset(database: "", release: ""),
            .missingUserTable(table: "", asWritten: nil), .badUpdatedColumn(table: "", column: "", type: ""), .missingUserColumn(table: "", column: ""),
            .changedByHand(table: "", column: "", expected: "", found: nil), .changedMeanwhile, .operatorSQLEndedTransaction,
            .unsafeScratch(path: "", reason: ""), .damagedState(table: "", reason: ""),
            .baselineDisagrees(baseline: 1, evidence: [], matches: nil), .standby(address: ""), .readOnly(address: ""),
            .lockTimeout(address: "", step: "", seconds: 1, holders: []), .statementTimeout(address: "", step: ""), .commitUnknown(address: "", reason: ""),
        ]
        let words = kinds.map(\.kind)
        #expect(Set(words).count == kinds.count)
        #expect(words.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "-" } && !$0.contains("--") })
        #expect(PostgresSyncError.operatorSQLEndedTransaction.kind == "operator-sql-ended-transaction")
        let schema = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/schemas/sync-postgres-failure.schema.json"), encoding: .utf8)
        for named in ["server", "missing-privilege", "cannot-connect", "unsafe-scratch", "changed-meanwhile", "operator-sql-ended-transaction"] {
            #expect(schema.contains(named) && words.contains(named), "\(named)")
        }
    }

    @Test func versionByVersionAndAllAtOnceEndEqualToTheReleaseWithEachSplitCopiedOnce() async throws {
        let history = try history()
        let keys = try history.trusted
        let server = try server()
        let stepwise = try server.makeDatabase(), atOnce = try server.makeDatabase()
        try makeCompletions(stepwise)
        try makeCompletions(atOnce)

        var removedByDeltas = 0
        for version in 1...3 {
            let report = try await sync(history.copies[version]!, stepwise, keys: keys)
            if version > 1 { removedByDeltas += report.tables["connections"]?.removed ?? 0 }
            #expect(report.committed && report.to == version && report.from == version - 1)
            // After the first, each version is the kept database with the release's delta run on it.
            #expect(report.fetched?.kind == (version == 1 ? .full : .delta) && report.fetched?.from == (version == 1 ? nil : version - 1))
            try expectMasterTablesEqual(stepwise, to: "\(history.copies[version]!)/\(version)/stations.sqlite")
        }
        #expect(removedByDeltas > 0, "the deltas removed no connection: the removal of the keys a delta wrote went untested")
        let whole = try await sync(history.folder, atOnce, keys: keys)
        #expect(whole.committed && whole.from == 0 && whole.to == 3)
        try expectMasterTablesEqual(atOnce, to: "\(history.folder)/3/stations.sqlite")
        #expect(whole.splits.map { "v\($0.version) \($0.old)→\($0.new) \($0.copied["completions"] ?? -1)" } == ["v3 1141512→9944001 2", "v3 1141530→9944019 1"])
        #expect(whole.usersAffected == 2, "user 3 had 9944019 already")

        // The same records on both, each split's copy once, with updated_at now; user 3's own record untouched.
        let records = "SELECT user_id, station_cd, date, coalesce(memo, 'NULL'), updated_at > now() - interval '1 hour' FROM completions ORDER BY user_id, station_cd"
        let expected = """
            1|1141512|2024-04-01|敦賀で乗り換え|f
            1|9944001|2024-04-01|敦賀で乗り換え|t
            2|1141512|2019-08-15|NULL|f
            2|1141530|2020-01-02|tab\there|f
            2|9944001|2019-08-15|NULL|t
            2|9944019|2020-01-02|tab\there|t
            3|1120101|2020-02-02|untouched|f
            3|1141530|2021-05-05|already has both|f
            3|9944019|2024-03-20|own record|f
            """
        #expect(try server.psql(stepwise, records) == expected)
        #expect(try server.psql(atOnce, records) == expected)

        // A record made on the old code after the split is not copied: they are two stations now.
        try server.psql(atOnce, "INSERT INTO completions (user_id, station_cd, date, memo, updated_at) VALUES (4, 1141512, '2024-06-01', 'JR', now())")
        let again = try await sync(history.folder, atOnce, keys: keys)
        #expect(again.upToDate && !again.committed && again.splits.isEmpty)
        #expect(try server.psql(atOnce, "SELECT count(*) FROM completions WHERE user_id = 4") == "1")
        #expect(try server.psql(atOnce, "SELECT version, dataset IS NOT NULL FROM station.release_state") == "3|t")
    }

    /// The kept database is trusted by its record only while the file is as it was kept: changed
    /// since, the whole database is downloaded (and the server still ends equal to the release);
    /// kept without a record (an older StationAdmin), it is trusted when its bytes hash to the release's.
    /// Trust ends at the signature: a kept database forged by whoever can write the scratch folder
    /// (a station's name made a script, as another local user did) is not used, the whole database
    /// is downloaded, and the master tables are the release's; a scratch folder another user owns
    /// or others can write is refused before anything is read or written.
    @Test func aForgedKeptDatabaseIsIgnoredAndAnUnsafeScratchFolderIsRefused() async throws {
        let (history, keys, server, database) = try webDatabase()
        try await sync(history.copies[1]!, database, keys: keys)
        let second = try await sync(history.copies[2]!, database, keys: keys)
        #expect(second.fetched?.kind == .delta, "the kept database, unchanged, is built on: \(String(describing: second.fetched))")
        let kept = scratch.path("sync-scratch/kept-2.sqlite")
        let forged = "<script>alert(1)</script>"
        let edit = try Process.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), arguments: [kept, "UPDATE stations SET station_name = '\(forged)' WHERE station_cd = (SELECT min(station_cd) FROM stations)"])
        edit.waitUntilExit()
        #expect(edit.terminationStatus == 0)
        let third = try await sync(history.copies[3]!, database, keys: keys)
        #expect(third.fetched?.kind == .full, "a forged kept database: \(String(describing: third.fetched))")
        try expectMasterTablesEqual(database, to: "\(history.copies[3]!)/3/stations.sqlite")
        #expect(try server.psql(database, "SELECT count(*) FROM station.stations WHERE station_name LIKE '%<script>%'") == "0")

        // A scratch folder others can write, or another user's, is refused with nothing read or written.
        let before = try server.psql(database, "SELECT version, synced_at FROM station.release_state")
        let folder = scratch.path("sync-scratch")
        for (mode, owner) in [(0o777, "root"), (0o700, "nobody")] {
            let setUp = try CommandRunner.run(["-c", "chmod \(String(mode, radix: 8)) '\(folder)' && chown \(owner) '\(folder)'"], program: URL(fileURLWithPath: "/bin/sh"))
            #expect(setUp.status == 0, "\(setUp.stderr)")
            await #expect { try await sync(history.folder, database, keys: keys) } throws: { error in
                let text = "\(error.localizedDescription)"
                return text.contains("scratch folder \(folder)") && (text.contains("written by others") || text.contains("belongs to another user"))
            }
            #expect(try server.psql(database, "SELECT version, synced_at FROM station.release_state") == before)
        }
        // A folder the sync makes itself is private.
        let fresh = scratch.path("fresh-scratch")
        _ = try await sync(history.folder, database, keys: keys) { $0.scratchFolder = fresh }
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: fresh)[.posixPermissions] as? Int)
        #expect(mode == 0o700)
    }

    /// A sync whose download is cut after the newest manifest verified has recorded it: an older
    /// signed release offering a valid delta from the server's version is refused next (the kit's
    /// `freshness.rollback-with-forward-path`, for a server with a state), the honest one completes.
    @Test func aCutDownloadStillRefusesAnOlderReleaseWithAWayForward() async throws {
        let (history, keys, server, database) = try webDatabase()
        try await sync(history.copies[1]!, database, keys: keys)
        let sequence = try server.psql(database, "SELECT sequence FROM station.release_state")
        let cut = scratch.path("cut")
        try FileManager.default.copyItem(atPath: history.copies[3]!, toPath: cut)
        for file in try FileManager.default.contentsOfDirectory(atPath: cut + "/3") where file.hasSuffix(".gz") {
            try FileManager.default.removeItem(atPath: cut + "/3/" + file)
        }
        await #expect(throws: (any Error).self) { try await sync(cut, database, keys: keys) }
        #expect(try server.psql(database, "SELECT version FROM station.release_state") == "1")
        #expect(try server.psql(database, "SELECT sequence FROM station.release_state") != sequence, "the verified manifest is recorded")
        await #expect(throws: StationClientError.self) { try await sync(history.copies[2]!, database, keys: keys) }
        #expect(try server.psql(database, "SELECT version FROM station.release_state") == "1")
        let honest = try await sync(history.copies[3]!, database, keys: keys)
        #expect(honest.committed && honest.to == 3)
        try expectMasterTablesEqual(database, to: "\(history.copies[3]!)/3/stations.sqlite")
    }

    @Test func anOlderReleaseAnotherDatasetATamperedFolderAndAnUnknownKeyAreRefusedUntouched() async throws {
        let (history, keys, server, database) = try webDatabase()
        try await sync(history.folder, database, keys: keys)
        func state() throws -> String {
            try server.psql(database, "SELECT version, sequence, database_sha256, synced_at FROM station.release_state")
                + (try server.psql(database, "SELECT count(*), sum(station_cd) FROM completions"))
                + (try server.psql(database, "SELECT md5(string_agg(station_cd || station_name || e_status, ',' ORDER BY station_cd)) FROM station.stations"))
        }
        let before = try state()

        // The folder as version 2's release left it: a lower sequence, an older version.
        await #expect(throws: StationClientError.self) { try await sync(history.copies[2]!, database, keys: keys) }
        // Another master's folder, signed by the same key: another dataset.
        let other = try MasterDatabase.create(at: scratch.path("other.sqlite"))
        try Importer(other).importSnapshot([Fixtures.ekidata2021])
        var options = ReleaseOptions(outputFolder: scratch.path("other-release"), verify: false)
        options.skipChecks = true
        options.signing = ManifestSigning(keys: [history.key])
        try Publisher(other).release(options)
        await #expect(throws: StationClientError.self) { try await sync(scratch.path("other-release"), database, keys: keys) }
        // A stranger's key.
        let stranger = try SigningKey.generate(to: scratch.path("stranger-key"))
        await #expect(throws: StationClientError.self) {
            try await sync(history.folder, database, keys: try TrustedKey.all(contentsOfFile: stranger.path + ".pub"))
        }
        #expect(try state() == before)

        // A tampered client database, on a fresh database (the synced one is up to date already).
        let fresh = try server.makeDatabase()
        let tampered = scratch.path("tampered")
        try FileManager.default.copyItem(atPath: history.folder, toPath: tampered)
        let gzip = tampered + "/3/stations.sqlite.gz"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: gzip))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: gzip))
        await #expect(throws: StationClientError.self) { try await sync(tampered, fresh, keys: keys) }
        #expect(try server.psql(fresh, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'station'") == "0")
    }

    @Test func aWrongPasswordAMissingTableOrColumnAndATableChangedByHandNameWhatToFixAndWriteNothing() async throws {
        let history = try history()
        let keys = try history.trusted
        let server = try server()
        let database = try server.makeDatabase()

        let wrong = PostgresSync(reader: ReleaseReader(configuration: .init(source: FolderReleaseSource(folder: URL(fileURLWithPath: history.folder)), keys: keys)),
                                 address: try PostgresAddress(server.address(database, password: "wrong")), scratchFolder: scratch.path("s"))
        await #expect {
            try await wrong.run()
        } throws: { error in
            "\(error.localizedDescription)".contains("password authentication failed for user \"station\"")
                && "\(error.localizedDescription)".contains("check the host, port, user and password")
                && !"\(error.localizedDescription)".contains("wrong") && "\(error.localizedDescription)".contains("[SQLSTATE 28P01]")
        }
        // No password at all, and a port where no server listens: words, not a driver's type names.
        let source = ReleaseReader(configuration: .init(source: FolderReleaseSource(folder: URL(fileURLWithPath: history.folder)), keys: keys))
        for (address, words) in [(server.address(database).replacingOccurrences(of: ":\(PostgresServer.password)@", with: "@"), "asks for a password and none was given"),
                                 ("postgres://station@127.0.0.1:9/\(database)", "connection refused: no server listens there (127.0.0.1:9)")] {
            let attempt = PostgresSync(reader: source, address: try PostgresAddress(address, environment: [:]), scratchFolder: scratch.path("s"))
            await #expect { try await attempt.run() } throws: { error in
                let text = "\(error.localizedDescription)"
                return text.contains(words) && !text.contains("Failure") && !text.contains("authMechanism")
            }
        }
        // No table of users' records yet.
        await #expect {
            try await sync(history.folder, database, keys: keys)
        } throws: { error in
            error.localizedDescription == "user table completions does not exist (create it, or name the right one with --user-table TABLE:USER_COLUMN)"
        }
        try makeCompletions(database)
        await #expect {
            try await sync(history.folder, database, keys: keys) { $0.userTables = [UserTable(table: "completions", userColumn: "account_id")] }
        } throws: { error in
            error.localizedDescription.hasPrefix("user table completions has no column account_id")
        }
        #expect(try server.psql(database, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'station'") == "0")

        try await sync(history.copies[2]!, database, keys: keys)
        try server.psql(database, "ALTER TABLE station.stations DROP COLUMN weight")
        let before = try server.psql(database, "SELECT version FROM station.release_state") + (try server.psql(database, "SELECT count(*) FROM completions"))
        await #expect {
            try await sync(history.folder, database, keys: keys)
        } throws: { error in
            error.localizedDescription.hasPrefix("station.stations.weight is missing (expected bigint): the table was changed by hand")
        }
        #expect(try server.psql(database, "SELECT version FROM station.release_state") + (try server.psql(database, "SELECT count(*) FROM completions")) == before)
    }

    /// `station-admin sync-postgres` killed at each step (SIGKILL, as a power cut would): the
    /// database is at version 2 or 3, whole, and the next run finishes with each split copied once.
    @Test func killedAtEveryStepTheDatabaseIsAtTheOldReleaseOrTheNew() async throws {
        let history = try history()
        let server = try server()
        for step in PostgresSyncStep.allCases {
            let database = try server.makeDatabase()
            try makeCompletions(database)
            try await sync(history.copies[2]!, database, keys: try history.trusted)
            let arguments = ["sync-postgres", "--from", history.folder, "--trust", history.key.path + ".pub", "--database", server.address(database),
                             "--scratch", scratch.path("kill-scratch")]
            let killed = try CommandRunner.run(arguments, environment: ["STATION_ADMIN_KILL_AT": "sync:\(step.rawValue)"])
            #expect(killed.status != 0, "\(step) killed")
            let version = try server.psql(database, "SELECT version FROM station.release_state")
            let copies = try server.psql(database, "SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019)")
            #expect(step == .committed ? (version == "3" && copies == "4") : (version == "2" && copies == "1"), "after a kill at \(step): v\(version), \(copies)")
            let finished = try CommandRunner.run(arguments + ["--json"])
            #expect(finished.status == 0, "\(finished.stderr)")
            if step == PostgresSyncStep.allCases.first { #expect(try scratch.schemaFindings(finished.stdout, against: "docs/schemas/sync-postgres.schema.json") == "") }
            #expect(try server.psql(database, "SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019)") == "4")
            try expectMasterTablesEqual(database, to: "\(history.folder)/3/stations.sqlite")
        }
    }

    @Test func aDryRunSaysWhatARunWouldDoAndWritesNothing() async throws {
        let history = try history()
        let server = try server()
        let database = try server.makeDatabase()
        try makeCompletions(database)
        let dry = try await sync(history.folder, database, keys: try history.trusted) { $0.dryRun = true }
        #expect(!dry.committed && dry.tables["stations"]?.inserted ?? 0 > 10_000 && dry.usersAffected == 2)
        #expect(try server.psql(database, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'station'") == "0")
        #expect(try server.psql(database, "SELECT count(*) FROM completions") == "6")
        // The operator's SQL sees the users the splits copied for, in the same transaction.
        try server.psql(database, "CREATE TABLE user_stats (user_id bigint PRIMARY KEY, stations bigint NOT NULL)")
        let sql = scratch.path("stats.sql")
        try """
            INSERT INTO user_stats SELECT c.user_id, count(*) FROM completions c
            WHERE c.user_id::text IN (SELECT user_id FROM pg_temp.station_split_users) GROUP BY c.user_id;
            """.write(toFile: sql, atomically: true, encoding: .utf8)
        let run = try CommandRunner.run(["sync-postgres", "--from", history.folder, "--trust", history.key.path + ".pub",
                                         "--database", server.address(database), "--then", sql])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("v3 1141512 → 9944001: 2 rows of completions"))
        #expect(try server.psql(database, "SELECT user_id, stations FROM user_stats ORDER BY 1") == "1|2\n2|4")
    }


    /// The tables web frameworks make, each given the same users' records: Rails (bigserial key,
    /// `timestamp(6)` times, a unique index on user and station, row-level security for other
    /// roles), Django (an identity key, `integer` codes, a unique constraint), Prisma (a `uuid` key
    /// with `gen_random_uuid()`, camelCase columns, `"updatedAt"`), Sequelize with reserved words
    /// (`"order"`, `"user"`, a unique index and no primary key), a table partitioned by hash of the
    /// user with seconds since 1970, and one with a foreign key into the master's stations (made
    /// after the first sync). Every split is copied once in each, never over a user's record, the
    /// key left to its default and the updated time set to now; a table that could not take a
    /// split fails the run that first names it, before any split exists.
    @Test func splitsAreCopiedInTheTablesWebFrameworksMake() async throws {
        let (history, _, server, database) = try webDatabase()
        let records = "(1, 1141512), (2, 1141512), (2, 1141530), (3, 1141530), (3, 9944019), (3, 1120101)"
        try server.psql(database, """
            CREATE TABLE visits (id bigserial PRIMARY KEY, user_id bigint NOT NULL, station_cd bigint NOT NULL, note varchar,
                                 created_at timestamp(6) NOT NULL, updated_at timestamp(6) NOT NULL);
            CREATE UNIQUE INDEX index_visits_on_user_id_and_station_cd ON visits (user_id, station_cd);
            ALTER TABLE visits ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own_visits ON visits USING (user_id = current_setting('app.user_id', true)::bigint);
            INSERT INTO visits (user_id, station_cd, note, created_at, updated_at) SELECT u, s, 'rails', '2020-01-01', '2020-01-01' FROM (VALUES \(records)) v (u, s);
            CREATE TABLE app_checkin (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, user_id integer NOT NULL, station_cd integer NOT NULL,
                                      visited_on date, updated_at timestamptz NOT NULL, CONSTRAINT app_checkin_user_station UNIQUE (user_id, station_cd));
            INSERT INTO app_checkin (user_id, station_cd, visited_on, updated_at) SELECT u, s, '2020-01-01', '2020-01-01' FROM (VALUES \(records)) v (u, s);
            CREATE TABLE "Completion" ("id" uuid PRIMARY KEY DEFAULT gen_random_uuid(), "userId" text NOT NULL, "stationCd" bigint NOT NULL, "memo" text,
                                       "createdAt" timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, "updatedAt" timestamp(3) NOT NULL,
                                       CONSTRAINT "Completion_userId_stationCd_key" UNIQUE ("userId", "stationCd"));
            INSERT INTO "Completion" ("userId", "stationCd", "memo", "updatedAt") SELECT 'user-' || u, s, 'prisma', '2020-01-01' FROM (VALUES \(records)) v (u, s);
            CREATE TABLE "order" ("id" serial, "user" integer NOT NULL, "station" bigint NOT NULL, "updatedAt" timestamptz NOT NULL);
            CREATE UNIQUE INDEX order_user_station ON "order" ("user", "station");
            INSERT INTO "order" ("user", "station", "updatedAt") SELECT u, s, '2020-01-01' FROM (VALUES \(records)) v (u, s);
            CREATE TABLE checkins (user_id bigint NOT NULL, station_cd bigint NOT NULL, updated_at bigint NOT NULL, PRIMARY KEY (user_id, station_cd))
                PARTITION BY HASH (user_id);
            CREATE TABLE checkins_0 PARTITION OF checkins FOR VALUES WITH (MODULUS 2, REMAINDER 0);
            CREATE TABLE checkins_1 PARTITION OF checkins FOR VALUES WITH (MODULUS 2, REMAINDER 1);
            INSERT INTO checkins SELECT u, s, 1577836800 FROM (VALUES \(records)) v (u, s);
            """)
        let tables = ["completions:user_id", "visits:user_id", "app_checkin:user_id", #""Completion":"userId":"stationCd""#,
                      #""order":"user":"station""#, "checkins:user_id"]
        func sync(_ folder: String, _ userTables: [String], _ extra: [String] = []) throws -> CommandRunner.Result {
            try CommandRunner.run(["sync-postgres", "--from", folder, "--trust", history.key.path + ".pub", "--database", server.address(database),
                                   "--scratch", scratch.path("framework-scratch")] + userTables.flatMap { ["--user-table", $0] } + extra)
        }
        // A table whose updated time the copy could not set fails the first run that names it, with no split yet.
        try server.psql(database, "CREATE TABLE badges (user_id bigint NOT NULL, station_cd bigint NOT NULL, updated_at boolean)")
        let misconfigured = try sync(history.copies[1]!, tables + ["badges:user_id"], ["--dry-run"])
        #expect(misconfigured.status == 1 && misconfigured.stderr.contains("badges") && misconfigured.stderr.contains("updated_at"), "\(misconfigured.stderr)")
        // The first run: no split yet, every table's copy checked.
        let first = try sync(history.copies[1]!, tables)
        #expect(first.status == 0, "\(first.stderr)")
        // A table with a foreign key into the master's stations, made once they exist.
        try server.psql(database, """
            CREATE TABLE public.stamps (user_id bigint NOT NULL, station_cd bigint NOT NULL REFERENCES station.stations (station_cd), updated_at timestamptz NOT NULL,
                                 UNIQUE (user_id, station_cd));
            INSERT INTO public.stamps SELECT u, s, '2020-01-01' FROM (VALUES (1, 1141512), (2, 1141512), (2, 1141530), (3, 1141530), (3, 1120101)) v (u, s);
            """)
        let splitting = try sync(history.copies[3]!, tables + ["stamps:user_id"])
        #expect(splitting.status == 0, "\(splitting.stderr)")
        for (table, user, station, updated) in [("completions", "user_id", "station_cd", "updated_at"), ("visits", "user_id", "station_cd", "updated_at"),
                                                ("app_checkin", "user_id", "station_cd", "updated_at"), (#""Completion""#, #""userId""#, #""stationCd""#, #""updatedAt""#),
                                                (#""order""#, #""user""#, #""station""#, #""updatedAt""#), ("checkins", "user_id", "station_cd", "to_timestamp(updated_at)")] {
            let copied = try server.psql(database, "SELECT \(user)::text || ':' || \(station) FROM \(table) WHERE \(station) IN (9944001, 9944019) ORDER BY 1")
            let expected = table == #""Completion""# ? "user-1:9944001\nuser-2:9944001\nuser-2:9944019\nuser-3:9944019" : "1:9944001\n2:9944001\n2:9944019\n3:9944019"
            #expect(copied == expected, "\(table)")
            // The copies' updated time is now; the user's own record at the new station is untouched.
            #expect(try server.psql(database, "SELECT count(*) FROM \(table) WHERE \(station) IN (9944001, 9944019) AND \(updated) > now() - interval '1 hour'") == "3", "\(table)")
            #expect(try server.psql(database, "SELECT count(*) FROM \(table)") == "9", "\(table)")
        }
        #expect(try server.psql(database, #"SELECT count(DISTINCT "id") FROM "Completion""#) == "9")
        #expect(try server.psql(database, "SELECT count(*) FROM public.stamps WHERE station_cd IN (9944001, 9944019)") == "4")
        try expectMasterTablesEqual(database, to: "\(history.copies[3]!)/3/stations.sqlite")
        // Quoted names are parsed as written; an unclosed quote or a stray one is refused.
        #expect(try UserTable(parsing: #"web."Completion":"userId":"stationCd""#) == UserTable(schema: "web", name: "Completion", userColumn: "userId", stationColumn: "stationCd"))
        #expect(try UserTable(parsing: #""say ""hi""":"user""#).name == #"say "hi""#)
        for bad in [#""Completion:userId"#, #"a"b:c"#, "a:b:c:d", "a.b.c:d", ":user", "Completions:UserId:"] {
            #expect(throws: PostgresSyncError.self, "\(bad)") { try UserTable(parsing: bad) }
        }
    }

    /// Under a database whose TimeZone is Asia/Tokyo, a copy's updated time is the same instant in
    /// every column kind: UTC in a Rails `timestamp(6)`, the instant in a `timestamptz`. And the
    /// likeliest moment of all: a phone uploads the same copy while the sync copies the split. The
    /// app's transaction inserts user 1's record at 敦賀 9944001 and holds it; the sync's copy
    /// waits for it on the unique index; once the sync is seen waiting, the app commits. The run
    /// succeeds and the app's record stays as the app made it, once.
    @Test func copiesAreInUTCUnderTokyoAndAnAppsOwnInsertOfTheCopyNeverFailsTheRun() async throws {
        let (history, keys, server, database) = try webDatabase()
        try server.psql(database, """
            ALTER DATABASE \(database) SET timezone TO 'Asia/Tokyo';
            CREATE TABLE visits (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, user_id bigint NOT NULL, station_cd bigint NOT NULL,
                                 memo text, created_at timestamp(6) NOT NULL, updated_at timestamp(6) NOT NULL);
            CREATE UNIQUE INDEX index_visits_on_user_id_and_station_cd ON visits (user_id, station_cd);
            INSERT INTO visits (user_id, station_cd, memo, created_at, updated_at) SELECT user_id, station_cd, memo, '2020-01-01', '2020-01-01' FROM completions;
            CREATE TABLE diary (user_id bigint NOT NULL, station_cd bigint NOT NULL, created_at date NOT NULL, updated_at timestamptz NOT NULL,
                                UNIQUE (user_id, station_cd));
            INSERT INTO diary SELECT user_id, station_cd, '2019-05-05', '2020-01-01' FROM completions;
            """)
        let tables = [UserTable.completions, try UserTable(parsing: "visits:user_id"), try UserTable(parsing: "diary:user_id")]
        try await sync(history.copies[1]!, database, keys: keys) { $0.userTables = tables }
        let app = try PhoneUpload(server, database, """
            BEGIN;
            INSERT INTO completions (user_id, station_cd, memo, updated_at) VALUES (1, 9944001, 'from the phone', '2024-04-02T00:00:00Z');
            """)
        defer { app.finish() }
        let report = try await sync(history.copies[3]!, database, keys: keys) { sync in
            sync.userTables = tables
            sync.onStep = { step in
                // Holding the record before the splits are copied; committed once the sync waits for it.
                if step == .tablesCopied { app.commitOnceTheSyncWaits() }
            }
        }
        #expect(report.splits.count == 2)
        #expect(report.splits.first { $0.new == 9944001 }?.skipped == ["completions": 1, "visits": 0, "diary": 0], "\(report.splits)")
        // A created column that cannot hold an instant (a `date`) is the record's data: copied, not refused.
        #expect(try server.psql(database, "SELECT count(*), bool_and(created_at = '2019-05-05') FROM diary WHERE station_cd IN (9944001, 9944019)") == "4|t")
        #expect(app.committedWhileTheSyncWaited(), "the sync never waited for the app's row")
        #expect(try server.psql(database, "SELECT memo || '|' || updated_at::text FROM completions WHERE user_id = 1 AND station_cd = 9944001")
                == "from the phone|2024-04-02 09:00:00+09")
        // The other copies: now in UTC (a Tokyo wall clock would be 9 h ahead), and the instant in a timestamptz.
        #expect(try server.psql(database, """
            SELECT count(*) FROM visits WHERE station_cd IN (9944001, 9944019)
              AND updated_at BETWEEN (now() AT TIME ZONE 'UTC') - interval '10 minutes' AND (now() AT TIME ZONE 'UTC') + interval '1 minute'
            """) == "3")
        #expect(try server.psql(database, """
            SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019) AND updated_at BETWEEN now() - interval '10 minutes' AND now() + interval '1 minute'
            """) == "2")
        // One instant for every copy and column kind: the bookkeeping columns the copy's time, the record's own data copied.
        #expect(try server.psql(database, """
            SELECT count(DISTINCT v.updated_at), bool_and(v.created_at = v.updated_at), bool_and(v.updated_at = (c.updated_at AT TIME ZONE 'UTC')),
                   bool_and(v.memo IS NOT DISTINCT FROM o.memo)
            FROM visits v JOIN completions c USING (user_id, station_cd)
            JOIN visits o ON o.user_id = v.user_id AND o.station_cd = CASE v.station_cd WHEN 9944001 THEN 1141512 ELSE 1141530 END
            WHERE v.station_cd IN (9944001, 9944019) AND c.memo IS DISTINCT FROM 'from the phone' AND v.updated_at > '2024-12-31'
            """) == "1|t|t|t")
    }

    /// A table named as the framework shows it (`Checkins:userId`) that exists only in another
    /// case is refused with the quoted form that works, which then syncs.
    @Test func aTableNamedInAnotherCaseIsRefusedWithTheFormThatWorks() async throws {
        let (history, _, server, database) = try webDatabase()
        try server.psql(database, #"CREATE TABLE "Checkins" ("id" serial PRIMARY KEY, "userId" bigint NOT NULL, "stationCd" bigint NOT NULL, "updatedAt" timestamptz NOT NULL)"#)
        func sync(_ userTable: String) throws -> CommandRunner.Result {
            try CommandRunner.run(["sync-postgres", "--from", history.copies[1]!, "--trust", history.key.path + ".pub", "--database", server.address(database),
                                   "--scratch", scratch.path("case-scratch"), "--user-table", userTable])
        }
        let refused = try sync("Checkins:userId:stationCd")
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains(#"user table checkins does not exist, but one of that name in another case does"#)
                && refused.stderr.contains(#"--user-table '"Checkins":"userId":"stationCd"'"#), "\(refused.stderr)")
        #expect(try server.psql(database, "SELECT count(*) FROM pg_namespace WHERE nspname = 'station'") == "0", "the refused run wrote")
        let named = try sync(#""Checkins":"userId":"stationCd""#)
        #expect(named.status == 0, "\(named.stderr)")
    }

    /// A role with exactly the grants docs/web.md lists (its own schema for the master tables, made
    /// by the database's owner; SELECT and INSERT on each user table and USAGE on its key's
    /// sequence; no CREATE on the database) syncs every release, splits included; a missing one
    /// is named, with the GRANT that gives it, and nothing is written.
    @Test func aRoleWithTheDocumentedGrantsSyncsAndAMissingOneIsNamedWithItsGrant() async throws {
        let (history, _, server, database) = try webDatabase()
        try server.psql(database, """
            DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'websync') THEN CREATE ROLE websync LOGIN PASSWORD 'websync-password'; END IF; END $$;
            REVOKE CREATE ON DATABASE \(database) FROM PUBLIC;
            REVOKE CREATE ON SCHEMA public FROM PUBLIC;
            CREATE SCHEMA station AUTHORIZATION websync;
            GRANT SELECT, INSERT ON TABLE completions TO websync;
            GRANT USAGE ON SEQUENCE completions_id_seq TO websync;
            """)
        let address = server.address(database).replacingOccurrences(of: "\(PostgresServer.user):\(PostgresServer.password)@", with: "websync:websync-password@")
        func sync(_ folder: String) throws -> CommandRunner.Result {
            try CommandRunner.run(["sync-postgres", "--from", folder, "--trust", history.key.path + ".pub", "--database", address,
                                   "--scratch", scratch.path("websync-scratch")])
        }
        let first = try sync(history.copies[1]!)
        #expect(first.status == 0, "\(first.stderr)")
        try server.psql(database, "REVOKE INSERT ON TABLE completions FROM websync")
        let refused = try sync(history.copies[3]!)
        #expect(refused.status == 1 && refused.stderr.contains(#"GRANT SELECT, INSERT ON TABLE completions TO "websync""#)
                && refused.stderr.contains("SQLSTATE 42501"), "\(refused.stderr)")
        // Under --json, the failure is JSON on stdout as well.
        let asJSON = try CommandRunner.run(["sync-postgres", "--from", history.copies[3]!, "--trust", history.key.path + ".pub", "--database", address,
                                            "--scratch", scratch.path("websync-scratch"), "--json"])
        #expect(asJSON.status == 1 && asJSON.stdout.contains(#""kind" : "missing-privilege""#) && asJSON.stdout.contains(#""sqlstate" : "42501""#), "\(asJSON.stdout)")
        #expect(try scratch.schemaFindings(asJSON.stdout, against: "docs/schemas/sync-postgres-failure.schema.json") == "")
        #expect(try server.psql(database, "SELECT version FROM station.release_state") == "1")
        try server.psql(database, "GRANT INSERT ON TABLE completions TO websync")
        // On a terminal, each table and each split shows as it is done.
        let screen = try Terminal(scratch: scratch).run(["sync-postgres", "--from", history.copies[3]!, "--trust", history.key.path + ".pub",
                                                         "--database", address, "--scratch", scratch.path("websync-scratch")])
        for phase in ["downloading the", "bringing station.stations to the release", "copying split 1141512 → 9944001", "Brought"] {
            #expect(screen.contains(phase), "\(phase): \(screen)")
        }
        #expect(try server.psql(database, "SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019)") == "4")
        try expectMasterTablesEqual(database, to: "\(history.copies[3]!)/3/stations.sqlite")
    }

    /// A first run with `--master-only` copies no split (the user tables come after, one with a
    /// foreign key into the master's stations); `--baseline N` onto a web database whose master
    /// data was at N copies only the later splits; both refuse a database a sync already wrote.
    @Test func masterOnlyAndBaselineFirstRuns() async throws {
        let (history, keys, server, database) = try webDatabase()
        let masterOnly = try await sync(history.copies[1]!, database, keys: keys) { $0.masterOnly = true }
        #expect(masterOnly.committed && masterOnly.splits.isEmpty)
        try server.psql(database, """
            CREATE TABLE public.stamps (user_id bigint NOT NULL, station_cd bigint NOT NULL REFERENCES station.stations (station_cd),
                                        updated_at timestamptz NOT NULL, UNIQUE (user_id, station_cd));
            INSERT INTO public.stamps VALUES (1, 1141512, '2020-01-01');
            """)
        await #expect { try await sync(history.copies[3]!, database, keys: keys) { $0.masterOnly = true } } throws: {
            "\($0.localizedDescription)".contains("--master-only is for a database no sync has written yet")
        }
        let next = try await sync(history.copies[3]!, database, keys: keys) { $0.userTables = [.completions, UserTable(table: "stamps", userColumn: "user_id")] }
        #expect(next.splits.count == 2 && next.splits.allSatisfy { $0.copied["stamps"] != nil })
        #expect(try server.psql(database, "SELECT station_cd FROM public.stamps ORDER BY 1") == "1141512\n9944001")

        // Baselines: at 3, the splits of 3 were the old tool's (users 1 and 2 have their copies); at 2, they are copied.
        for (baseline, atNewStations) in [(3, "4"), (2, "4")] {
            let other = try server.makeDatabase()
            try makeCompletions(other)
            if baseline == 3 {
                try server.psql(other, "INSERT INTO completions (user_id, station_cd, date, updated_at) VALUES (1, 9944001, '2024-04-01', now()), (2, 9944001, '2019-08-15', now()), (2, 9944019, '2020-01-02', now())")
            }
            let report = try await sync(history.copies[3]!, other, keys: keys) { $0.baseline = baseline }
            #expect(report.committed && report.splits.count == (baseline == 3 ? 0 : 2), "baseline \(baseline)")
            #expect(report.baseline == PostgresSyncReport.Baseline(version: baseline, evidence: .usersRecords), "baseline \(baseline)")
            #expect(try server.psql(other, "SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019)") == atNewStations, "baseline \(baseline)")
            #expect(try server.psql(other, "SELECT baseline FROM station.release_state") == "\(baseline)", "the state does not record the baseline")
            await #expect { try await sync(history.copies[3]!, other, keys: keys) { $0.baseline = 1 } } throws: {
                "\($0.localizedDescription)".contains("--baseline is for a database no sync has written yet")
            }
        }
    }

    /// A wrong `--baseline` is refused with what disagrees and the version the data matches (the
    /// one fewest users' records disagree with: a user's own record at a new station is one), the
    /// database untouched; the right one is taken. Weighed by the master tables' content hash
    /// where the schema has them (release 2's, kept by another tool: its state gone), else by the
    /// users' records against each split.
    @Test func wrongBaselinesAreRefusedWithTheVersionTheDataMatches() async throws {
        let (history, keys, server, database) = try webDatabase()
        func refused(_ baseline: Int, _ database: String, saying words: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let before = try server.psql(database, "SELECT count(*), max(updated_at) FROM completions")
            await #expect(sourceLocation: sourceLocation) { try await sync(history.copies[3]!, database, keys: keys) { $0.baseline = baseline } } throws: { error in
                let text = "\(error.localizedDescription)"
                return (error as? PostgresSyncError)?.kind == "baseline-disagrees" && words.allSatisfy(text.contains)
            }
            #expect(try server.psql(database, "SELECT count(*), max(updated_at) FROM completions") == before, "a refused baseline wrote", sourceLocation: sourceLocation)
        }
        // Users' records only: nobody at 1141512 has 9944001, so version 3's splits were never made.
        try await refused(3, database, saying: ["--baseline 3 does not agree", "version 3's split 1141512 → 9944001 was never carried out for most (0 of the 2 users of completions",
                                                 "The data matches a version from 0 to 2"])
        // …and the other way: every user of the old stations has the new one, so --baseline 2 would copy them again.
        let copied = try server.makeDatabase()
        try makeCompletions(copied)
        try server.psql(copied, "INSERT INTO completions (user_id, station_cd, updated_at) VALUES (1, 9944001, now()), (2, 9944001, now()), (2, 9944019, now())")
        try await refused(2, copied, saying: ["version 3's split 1141512 → 9944001 was carried out already (2 of the 2 users", "The data matches version 3"])

        // Master tables at release 2, the state gone: 3 is refused naming 2, and 2 is taken.
        try await sync(history.copies[2]!, database, keys: keys) { $0.masterOnly = true }
        try server.psql(database, "DROP TABLE station.release_state")
        try await refused(3, database, saying: ["the master tables in schema station hold content", "The data matches version 2"])
        let report = try await sync(history.copies[3]!, database, keys: keys) { $0.baseline = 2 }
        #expect(report.committed && report.baseline?.evidence == .masterTables && report.splits.count == 2)
        #expect(try server.psql(database, "SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019)") == "4")
        try expectMasterTablesEqual(database, to: "\(history.copies[3]!)/3/stations.sqlite")
    }

    /// A `--database` that is not what it should be is never repeated: a password with an
    /// unencoded `@` or `#` would be echoed whole or in part.
    @Test func anAddressThatDoesNotReadIsNeverRepeated() {
        for text in ["postgres://web:p@ss#w0rd/x@db/app", "postgres://web:s3cr%t@db", "postgres://:s3cret@db/app", "postgres://web:s3cret@db/app?sslmode=maybe"] {
            #expect { try PostgresAddress(text) } throws: { error in
                let words = "\(error.localizedDescription)"
                return !words.contains("w0rd") && !words.contains("s3cr") && words.hasPrefix("--database: ")
            }
        }
    }

    /// Two syncs at once on one database and one scratch folder: the second downloads while the
    /// first holds the lock, then finds the database at the release and ends as up to date (exit 0
    /// from the command line); the splits are copied once, each run's files are its own, and the
    /// kept database is the committed one's.
    @Test func twoSyncsAtOnceBothSucceedAndCopyEachSplitOnce() async throws {
        let (history, keys, server, database) = try webDatabase()
        try await sync(history.copies[1]!, database, keys: keys)
        let secondDownloaded = DispatchSemaphore(value: 0)
        let second = Locked<Task<PostgresSyncReport, any Error>?>(nil)
        let folder = history.folder
        let first = try await sync(folder, database, keys: keys) { sync in
            let template = sync
            sync.onStep = { step in
                guard step == .locked, second.withLock({ $0 == nil }) else { return }
                var other = template
                other.onStep = { if $0 == .downloaded { secondDownloaded.signal() } }
                let started = other
                second.withLock { $0 = Task { try await started.run() } }
                // The first holds the lock until the second has downloaded and waits for it.
                secondDownloaded.wait()
            }
        }
        let secondReport = try await #require(second.withLock { $0 }).value
        #expect(first.committed && !first.upToDate)
        #expect(secondReport.upToDate && !secondReport.committed && secondReport.to == 3, "\(secondReport)")
        #expect(try server.psql(database, "SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019)") == "4")
        try expectMasterTablesEqual(database, to: "\(folder)/3/stations.sqlite")
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path("sync-scratch"))
        #expect(left == ["kept-3.sqlite"], "\(left)")
    }

    /// The operator's SQL runs inside the sync's transaction and cannot end it: a `COMMIT` or
    /// `ROLLBACK` in it fails the run with nothing written (the splits are not lost to a state that
    /// says they ran), under `--dry-run` too; several statements run in order.
    @Test func theOperatorsSQLCannotEndTheSyncsTransaction() async throws {
        let history = try history()
        let server = try server()
        let database = try server.makeDatabase()
        try makeCompletions(database)
        try server.psql(database, "CREATE TABLE audit (what text NOT NULL)")
        func then(_ name: String, _ sql: String, _ extra: [String] = []) throws -> CommandRunner.Result {
            let file = scratch.path(name + ".sql")
            try sql.write(toFile: file, atomically: true, encoding: .utf8)
            return try CommandRunner.run(["sync-postgres", "--from", history.folder, "--trust", history.key.path + ".pub",
                                          "--database", server.address(database), "--then", file] + extra)
        }
        for (name, sql) in [("rollback", "INSERT INTO audit VALUES ('before'); ROLLBACK;"), ("commit", "COMMIT; INSERT INTO audit VALUES ('after');"),
                            ("savepoint", "SAVEPOINT a; RELEASE SAVEPOINT a;")] {
            for extra in [[], ["--dry-run"]] {
                let run = try then(name, sql, extra)
                #expect(run.status == 1, "\(name) \(extra): \(run.stdout)\(run.stderr)")
                #expect(run.stderr.contains("operator's SQL"), "\(name): \(run.stderr)")
                #expect(try server.psql(database, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'station'") == "0", "\(name) \(extra)")
                #expect(try server.psql(database, "SELECT count(*) FROM audit") == "0", "\(name) \(extra)")
                #expect(try server.psql(database, "SELECT count(*) FROM completions") == "6", "\(name) \(extra)")
            }
        }
        let several = try then("several", "INSERT INTO audit VALUES ('one');\nINSERT INTO audit VALUES ('two');\nUPDATE audit SET what = what || '!';\n")
        #expect(several.status == 0, "\(several.stderr)")
        #expect(try server.psql(database, "SELECT string_agg(what, ',' ORDER BY what) FROM audit") == "one!,two!")
        #expect(try server.psql(database, "SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019)") == "4")
        try expectMasterTablesEqual(database, to: "\(history.folder)/3/stations.sqlite")
    }

    /// `sync-postgres --from http://…` fetches the release through `serve` with libcurl, which the
    /// tool loads only for that: by the dynamic loader's own account (`LD_DEBUG=libs`), a command
    /// that fetches nothing loads no libcurl, and the sync loads it and ends equal to the release;
    /// where libcurl cannot be loaded, the sync says so and writes nothing.
    @Test func theToolLoadsLibcurlOnlyToFetchAReleaseOverHTTP() async throws {
        let history = try history()
        let server = try server()
        let database = try server.makeDatabase()
        try makeCompletions(database)
        let loader = ["LD_DEBUG": "libs"]
        let version = try CommandRunner.run(["--version"], environment: loader)
        #expect(version.status == 0 && version.stderr.contains("libsqlite3"), "the loader said nothing: \(version.stderr.prefix(300))")
        #expect(!version.stderr.contains("libcurl"), "`--version` loads libcurl")
        let (serving, port) = try startServe(history.folder, ["--quiet"])
        defer { _ = serving.stop(SIGTERM) }
        let run = try CommandRunner.run(["sync-postgres", "--from", "http://127.0.0.1:\(port)/", "--trust", history.key.path + ".pub",
                                         "--database", server.address(database)], environment: loader)
        // The tool's own words, without the loader's (a process number, a colon and a tab).
        #expect(run.status == 0, "\(run.stderr.split(separator: "\n").filter { !$0.contains(":\t") }.joined(separator: "\n"))")
        #expect(run.stderr.contains("libcurl.so.4"), "the sync fetched without loading libcurl")
        try expectMasterTablesEqual(database, to: "\(history.folder)/3/stations.sqlite")
        // A machine without libcurl: the file the loader took, hidden by /dev/null bound over it in a
        // mount namespace of this command alone (util-linux's unshare). A sync into a new database
        // stops at its first fetch, names the library and what to install, and writes nothing.
        let untouched = try server.makeDatabase()
        try makeCompletions(untouched)
        let library = try #require(run.stderr.split(separator: "\n").compactMap { line in
            line.range(of: "calling init: ").map { String(line[$0.upperBound...]) }
        }.first { $0.hasSuffix("/libcurl.so.4") })
        let hidden = try CommandRunner.run(
            ["--mount", "--map-root-user", "sh", "-c", "mount --bind /dev/null \"$0\" && exec \"$@\"", library, CommandRunner.executable.path,
             "sync-postgres", "--from", "http://127.0.0.1:\(port)/", "--trust", history.key.path + ".pub", "--database", server.address(untouched)],
            program: URL(fileURLWithPath: "/usr/bin/unshare"))
        #expect(hidden.status == 1 && hidden.stderr.hasPrefix("manifest.json: cannot load libcurl.so.4 (")
                && hidden.stderr.contains("): install libcurl4"), "\(hidden.stderr)")
        #expect(try server.psql(untouched, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'station'") == "0")
        #expect(try server.psql(untouched, "SELECT count(*) FROM completions") == "6")
    }

    /// docs/web.md's tour runs as written against a database of the test server.
    @Test func theGuidesTourRunsAsWritten() throws {
        let server = try server()
        let database = try server.makeDatabase()
        try? FileManager.default.createSymbolicLink(
            atPath: scratch.path("datasets"), withDestinationPath: Fixtures.repository.appendingPathComponent("datasets").path)
        var last = ""
        for (number, command) in ReadmeExamplesTests.commands(in: try ReadmeExamplesTests.text("docs/web.md")).enumerated() {
            let result = try CommandRunner.run(
                ["-c", "station-admin() { \"\(CommandRunner.executable.path)\" \"$@\"; }\n\(command)"], in: scratch.url,
                environment: ["DATABASE_URL": server.address(database)], unset: ["STATION_ADMIN_DB"], program: URL(fileURLWithPath: "/bin/bash"))
            #expect(result.status == 0, "docs/web.md example \(number + 1) failed: \(command)\n\(result.stderr)")
            if result.status != 0 { return }
            last = result.stdout
        }
        #expect(last == "1141512\n9944001\n")
    }

    /// A standby, before anything is downloaded and also when it is up to date: a hot standby an
    /// operator makes (`pg_basebackup -R`) is named as one, with what to do; a database read-only
    /// for the role likewise. Exit 1 from the command line.
    @Test func aStandbyOrAReadOnlyDatabaseIsRefusedBeforeAnyDownload() async throws {
        let history = try history()
        let keys = try history.trusted
        let primary = try PostgresServer.ofItsOwn()
        defer { primary.stop() }
        let database = try primary.makeDatabase()
        var sync = PostgresSync(reader: ReleaseReader(configuration: .init(source: FolderReleaseSource(folder: URL(fileURLWithPath: history.folder)), keys: keys)),
                                address: try PostgresAddress(primary.address(database)), scratchFolder: scratch.path("standby-scratch"))
        sync.masterOnly = true
        _ = try await sync.run()
        let standby = try primary.startStandby()
        defer { standby.stop() }
        try PhoneUpload.wait(standby, database, for: "SELECT count(*) FROM station.release_state WHERE version = 3")
        let steps = Locked<[PostgresSyncStep]>([])
        sync.address = try PostgresAddress(standby.address(database))
        sync.masterOnly = false
        sync.onStep = { step in steps.withLock { $0.append(step) } }
        await #expect { try await sync.run() } throws: { error in
            (error as? PostgresSyncError)?.kind == "standby" && "\(error.localizedDescription)".contains("point --database at the primary")
        }
        #expect(steps.withLock { $0 } == [.connected], "the standby was read past the first step")
        let command = try CommandRunner.run(["sync-postgres", "--from", history.folder, "--trust", history.key.path + ".pub",
                                             "--database", standby.address(database), "--scratch", scratch.path("standby-scratch")])
        #expect(command.status == 1 && command.stderr.contains("is a standby (the server is in recovery)"), "\(command.stderr)")

        try primary.psql(database, "ALTER DATABASE \(database) SET default_transaction_read_only = on")
        sync.address = try PostgresAddress(primary.address(database))
        await #expect { try await sync.run() } throws: { error in
            (error as? PostgresSyncError)?.kind == "read-only" && "\(error.localizedDescription)".contains("default_transaction_read_only off")
        }
    }

    /// An app's transaction holds a user table 10 s; with `--lock-timeout 3` the sync says whom it
    /// waits for after 2 s (the app's backend, its application_name) and ends at 3 s, naming it,
    /// nothing written. A session that looks like a killed run of the sync holding the sync's own
    /// lock is named as one, with the statement that ends it.
    @Test func aLockHeldLongerThanTheTimeoutEndsTheRunNamingWhoHoldsIt() async throws {
        let (history, keys, server, database) = try webDatabase()
        try await sync(history.copies[1]!, database, keys: keys)
        let app = try PhoneUpload(server, database, "BEGIN; LOCK TABLE completions IN EXCLUSIVE MODE; SELECT pg_sleep(10);", applicationName: "rails-console")
        let waits = Locked<[PostgresLockWait]>([])
        let started = ContinuousClock.now
        await #expect { try await sync(history.copies[3]!, database, keys: keys) { sync in
            sync.lockTimeout = 3
            sync.onWaiting = { wait in waits.withLock { $0.append(wait) } }
        } } throws: { error in
            let text = "\(error.localizedDescription)"
            return (error as? PostgresSyncError)?.kind == "lock-timeout" && text.contains("waited 3 s for a lock") && text.contains("(rails-console)")
        }
        let elapsed = ContinuousClock.now - started
        app.finish()
        #expect(elapsed < .seconds(8), "the run waited \(elapsed), past its --lock-timeout of 3 s")
        let told = waits.withLock { $0 }
        #expect(told.count >= 1 && told.allSatisfy { $0.holders.contains { $0.applicationName == "rails-console" } && $0.limit == 3 }, "\(told)")
        #expect(told.first.map { "\($0)".contains("for a lock held by backend") } == true, "\(told)")
        #expect(try server.psql(database, "SELECT version FROM station.release_state") == "1")

        let stale = try PhoneUpload(server, database, "BEGIN; SELECT pg_advisory_xact_lock(hashtext('station-admin sync-postgres station'));",
                                    applicationName: "station-admin sync-postgres")
        defer { stale.finish() }
        await #expect { try await sync(history.copies[3]!, database, keys: keys) { $0.lockTimeout = 3 } } throws: { error in
            "\(error.localizedDescription)".contains("(another sync-postgres run; if that run is gone: SELECT pg_terminate_backend(")
        }
    }

    /// The connection lost during COMMIT: the server waits for a synchronous standby that never
    /// comes, and is restarted while the sync's COMMIT waits (committed locally, the server's log
    /// says). The sync asks again on a new connection and says committed, the kept database saved
    /// (the next run downloads the delta), exactly as after a COMMIT that answered.
    @Test func aCommitWhoseConnectionDroppedIsAskedAgainAndSaidCommitted() async throws {
        let history = try history()
        let keys = try history.trusted
        let server = try PostgresServer.ofItsOwn()
        defer { server.stop() }
        let database = try server.makeDatabase()
        func sync(_ folder: String) throws -> PostgresSync {
            var sync = PostgresSync(reader: ReleaseReader(configuration: .init(source: FolderReleaseSource(folder: URL(fileURLWithPath: folder)), keys: keys)),
                                    address: try PostgresAddress(server.address(database)), scratchFolder: scratch.path("commit-scratch"))
            sync.masterOnly = folder == history.copies[1]!
            return sync
        }
        _ = try await sync(history.copies[1]!).run()
        try server.psql(database, "CREATE TABLE public.completions (id bigserial PRIMARY KEY, user_id bigint NOT NULL, station_cd bigint NOT NULL, updated_at timestamptz NOT NULL, UNIQUE (user_id, station_cd)); INSERT INTO public.completions (user_id, station_cd, updated_at) VALUES (1, 1141512, now())")
        try server.psql("postgres", "ALTER SYSTEM SET synchronous_standby_names = 'never_comes'")
        try server.psql("postgres", "SELECT pg_reload_conf()")
        let running = Task { [sync = try sync(history.copies[3]!)] in try await sync.run() }
        try PhoneUpload.wait(server, "postgres", for: "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
        try server.restart()
        let report = try await running.value
        #expect(report.committed && report.to == 3)
        try server.psql("postgres", "ALTER SYSTEM RESET synchronous_standby_names")
        try server.psql("postgres", "SELECT pg_reload_conf()")
        #expect(try server.psql(database, "SELECT version FROM station.release_state") == "3")
        #expect(try server.psql(database, "SELECT count(*) FROM public.completions WHERE station_cd = 9944001") == "1")
        let log = (try? String(contentsOfFile: server.folder + "/server.log", encoding: .utf8)) ?? ""
        #expect(log.contains("already committed locally"), "the server's log does not show the commit cut short")
        #expect(FileManager.default.fileExists(atPath: scratch.path("commit-scratch") + "/kept-3.sqlite"), "the committed run's database was not kept")
    }

    /// Through pgbouncer in transaction pooling mode, as web services pool their connections:
    /// version by version and two syncs at once, every split copied once, the state and the
    /// master tables the release's.
    @Test func throughPgbouncerInTransactionModeEachSplitIsCopiedOnce() async throws {
        let (history, keys, server, database) = try webDatabase()
        guard let pooler = try PgBouncer(before: server) else {
            Issue.record("pgbouncer is not installed (scripts/test and .ci/run install it)")
            return
        }
        defer { pooler.stop() }
        func sync(_ folder: String, scratch name: String) throws -> PostgresSync {
            PostgresSync(reader: ReleaseReader(configuration: .init(source: FolderReleaseSource(folder: URL(fileURLWithPath: folder)), keys: keys)),
                         address: try PostgresAddress(pooler.address(database)), scratchFolder: scratch.path(name))
        }
        for version in [1, 2] {
            let report = try await sync(history.copies[version]!, scratch: "pooled").run()
            #expect(report.committed && report.to == version, "\(pooler.log.suffix(2_000))")
        }
        let (one, other) = (try sync(history.copies[3]!, scratch: "pooled"), try sync(history.copies[3]!, scratch: "pooled-too"))
        async let first = one.run()
        async let second = other.run()
        let reports = try await [first, second]
        #expect(reports.filter(\.committed).count == 1 && reports.flatMap(\.splits).count == 2, "\(reports)")
        #expect(try server.psql(database, "SELECT version FROM station.release_state") == "3")
        #expect(try server.psql(database, "SELECT count(*) FROM completions WHERE station_cd IN (9944001, 9944019)") == "4")
        try expectMasterTablesEqual(database, to: "\(history.copies[3]!)/3/stations.sqlite")
    }

    /// `mayHaveCommitted`: a COMMIT the server refused did not commit; a dropped connection or
    /// a session the server ended may have.
    @Test func onlyACommitCutShortIsAskedAbout() {
        #expect(PostgresSyncError.server(address: "a", step: "committing", message: "the server closed the connection").mayHaveCommitted)
        #expect(PostgresSyncError.server(address: "a", step: "committing", message: "terminating connection due to administrator command [SQLSTATE 57P01]").mayHaveCommitted)
        #expect(!PostgresSyncError.server(address: "a", step: "committing", message: "could not serialize access [SQLSTATE 40001]").mayHaveCommitted)
        #expect(!PostgresSyncError.changedMeanwhile.mayHaveCommitted)
    }

}

/// An app's connection (psql) holding a transaction open while a sync runs: it commits once the
/// sync's backend is seen waiting on a lock, so the sync meets an uncommitted insert of the very
/// row it copies, whatever the timing.
final class PhoneUpload: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let server: PostgresServer
    private let database: String
    private let waited = Locked(false)
    private var watcher: Thread?

    private let applicationName: String

    /// `applicationName`: the session's, as pg_stat_activity shows it.
    init(_ server: PostgresServer, _ database: String, _ sql: String, applicationName: String = "phone-upload") throws {
        self.server = server
        self.database = database
        self.applicationName = applicationName
        process.executableURL = URL(fileURLWithPath: server.binaries + "/psql")
        process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(server.port)", "-U", PostgresServer.user, "-d", database]
        process.environment = ProcessInfo.processInfo.environment.merging(["PGPASSWORD": PostgresServer.password, "PGAPPNAME": applicationName]) { $1 }
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data((sql + "\n").utf8))
        // Its insert done: the session sits idle in its transaction.
        try wait(for: "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(applicationName)' AND state = 'idle in transaction'")
    }

    /// From another thread: commits once a backend other than the app's waits on a lock (at most 30 s).
    func commitOnceTheSyncWaits() {
        let thread = Thread { [self] in
            let waiting = try? wait(for: "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name <> '\(applicationName)'")
            waited.withLock { $0 = waiting != nil }
            input.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
        }
        watcher = thread
        thread.start()
    }

    func committedWhileTheSyncWaited() -> Bool { waited.withLock { $0 } }

    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    @discardableResult
    private func wait(for query: String) throws -> Int { try Self.wait(server, database, for: query) }

    /// Polls `query` until it counts one row or more, every 20 ms for at most 30 s.
    @discardableResult
    static func wait(_ server: PostgresServer, _ database: String, for query: String) throws -> Int {
        for _ in 0..<1_500 {
            if let count = Int((try? server.psql(database, query)) ?? ""), count > 0 { return count }
            usleep(20_000)
        }
        throw CancellationError()
    }
}
