import Foundation
import GRDB
import StationCSV
import StationCheck
import StationCurate
import StationDelta
import StationLog
import StationManifest
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationSynth
import StationWeights
import Testing

/// Random curated histories (inserts, updates, closures, restorations, splits, removed and
/// re-added connections, prefectures, awkward text) over 10 or more versions. For each:
/// - every past version rebuilt from the master database equals an independent in-memory
///   model of that version (compared by content hash);
/// - for every v, `release` applies delta(v → N) to release(v) with the sqlite3 binary and
///   checks it gives exactly release(N)'s content, that no user record is lost or
///   overwritten, that each split copied its records, and that the guard refuses other versions;
///   and brings the same phone to N by a full download and by an app update with the carry-over
///   script, which must give the same records (chains of splits included);
///   for a quarter of the histories, the same for a release of version N − 2.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct DeltaPropertyTests {
    static let histories = 200
    static let chunks = 8

    @Test(arguments: 0..<chunks)
    func randomHistoriesRebuildAndDeltaExactly(chunk: Int) throws {
        let perChunk = Self.histories / Self.chunks
        var chains = 0
        for seed in (chunk * perChunk)..<((chunk + 1) * perChunk) {
            chains += try checkHistory(seed: UInt64(seed))
        }
        // The three paths must also agree where a split continues an earlier one (A → B, then B → C).
        #expect(chains > 0, "chunk \(chunk): no history split a station that an earlier split made")
    }

    /// What a verification that passed says: each delta, then the three paths for every older version.
    static func passed(_ released: ReleasedVersion) -> [String] {
        let version = released.version
        guard version > 1 else { return [] }
        let deltas = released.deltas.map(\.from)
        let unpublished = Array(Set(1..<version).subtracting(deltas)).sorted()
        return deltas.map { "delta \($0) → \(version): applied by sqlite3, content as version \(version)'s, guard refuses other versions" }
            + ["\(deltas.isEmpty ? "" : "delta, ")full download, app update: user records identical for versions 1…\(version - 1)"
               + (unpublished.isEmpty || deltas.isEmpty ? "" : " (no delta published for \(ReleaseVerifier.list(unpublished)))")]
    }

    /// Checks one history; returns how many of its splits continue an earlier split. Half the
    /// histories change the client schema at a random version (`ClientSchemaChangeTests`'s
    /// `station_name_en`): from it on, versions have the column and older phones get it by delta.
    private func checkHistory(seed: UInt64) throws -> Int {
        let scratch = Scratch()
        let path = scratch.path("master.sqlite")
        var database = try MasterDatabase.create(at: path)
        var history = RandomHistory(seed: seed)
        var snapshots: [Int: RandomHistory.State] = [0: history.state]
        var splits = 0
        var chains = 0
        var splitStations = Set<Int64>()
        let versions = 11 + Int(seed % 3)
        // The version from which phones have client schema 2, or none.
        let schemaChange = seed % 2 == 0 ? 2 + Int(seed / 2 % 8) : versions + 1
        func commitUntil(_ count: Int) throws {
            while snapshots.count < count {
                let batch = history.nextBatch()
                let report = try Curator(database).commit(batch, memo: "seed \(seed)")
                if report.committed {
                    snapshots[report.version] = history.state
                    splits += batch.duplicates.count
                    chains += batch.duplicates.filter { splitStations.contains($0.old) }.count
                    splitStations.formUnion(batch.duplicates.map(\.new))
                } else {
                    history.state = snapshots[snapshots.count - 1]!
                }
            }
        }
        try commitUntil(min(schemaChange, versions))
        let changes = schemaChange <= versions ? [ClientSchemaChangeTests.stationNameEN] : []
        do {
            if !changes.isEmpty {
                // The binary with the change opens the master: its next write migrates it.
                database = try MasterDatabase.open(at: path, declared: .shipped(plus: changes))
                history.declared = database.declared
                history.state = history.withCurrentColumns(history.state)
                snapshots = snapshots.mapValues(history.withCurrentColumns)
            }
            try commitUntil(versions)
            try checkReleases(seed: seed, database, snapshots, schemaChange: schemaChange, scratch)
        }
        return chains
    }

    private func checkReleases(seed: UInt64, _ database: MasterDatabase, _ snapshots: [Int: RandomHistory.State],
                               schemaChange: Int, _ scratch: Scratch) throws {
        func expectedHash(_ version: Int) throws -> String {
            try RandomHistory.contentHash(of: snapshots[version]!, database.declared, clientSchema: version >= schemaChange ? 2 : 1)
        }
        let newest = try database.dataVersion()
        #expect(newest == snapshots.count - 1)

        for version in 0...newest {
            let built = try Publisher(database).buildClientDatabase(version: version, at: scratch.path("v\(version).sqlite"))
            #expect(built.contentHash == (try expectedHash(version)), "seed \(seed): version \(version) rebuilt differs from the model")
        }
        // Random histories put stations anywhere on Earth: the data checks (tested on their own) would
        // rightly refuse them, and this test is about deltas.
        var options = ReleaseOptions(outputFolder: scratch.path("release"))
        options.skipChecks = true
        let result = try Publisher(database).release(options)
        #expect(result.verification?.failures == [], "seed \(seed)")
        #expect(result.verification?.passed == Self.passed(result.released))
        #expect(result.released.downloads.map(\.from) == Array(1..<max(newest, 1)))
        #expect(result.released.contentHash == (try expectedHash(newest)))
        #expect(result.released.clientSchema == (newest >= schemaChange ? 2 : 1))
        // A release of a past version renders its deltas from the history too: verified the same way.
        if seed % 4 == 0, newest > 3 {
            var past = ReleaseOptions(outputFolder: scratch.path("past"), version: newest - 2)
            past.skipChecks = true
            let pastResult = try Publisher(database).release(past)
            #expect(pastResult.verification?.failures == [], "seed \(seed)")
            #expect(pastResult.verification?.passed == Self.passed(pastResult.released))
            #expect(pastResult.released.contentHash == (try expectedHash(newest - 2)))
        }
        // A delta the release leaves out (from 0, or larger than the database) must still be exact.
        for from in 0..<newest where !result.released.deltas.contains(where: { $0.from == from }) {
            let path = scratch.path("unpublished-\(from).sql.gz")
            _ = try DeltaExport(database).writeDelta(from: from, gzip: true, into: .file(path))
            let phone = try scratch.phone(from: scratch.path("v\(from).sqlite"), name: "phone-\(from).sqlite", completions: [])
            let applied = try scratch.apply(delta: path, to: phone)
            #expect(applied.status == 0, "seed \(seed): delta from \(from): \(applied.error)")
            #expect(try contentHash(ofDatabase: phone, database.declared) == result.released.contentHash, "seed \(seed): delta from \(from)")
        }
    }
}

/// A deterministic random history of curated changes, with its own model of the master rows.
struct RandomHistory {
    /// Table name → key → full row, as the master database should hold it.
    typealias State = [String: [[DatabaseValue]: [DatabaseValue]]]

    var state: State = [:]
    /// The schema the master is under: the shipped one, then the test's change.
    var declared = DeclaredSchema.shipped
    private var random: SplitMix64
    private var nextStationCode: Int64 = 1_000_001
    private var version = 0

    static let awkwardTexts = [
        "駅", "O'Brien", "say \"hi\"", "line1\nline2", "🚃🚄", "a\u{0}b", "", "  spaces  ",
        "back\\slash", "semi;colon -- not a comment", "\ttab", "ヶ/ケ（）〈〉", "'; DROP TABLE stations; --",
        "crlf\r\nline", "lone\rcr", "ends with cr\r", "\r\n\r\n",
    ]

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    private mutating func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
    private mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
    private mutating func text() -> String { pick(Self.awkwardTexts) + (chance(50) ? String(random.next() % 1000) : "") }
    /// A name is awkward text too, but never empty: the master's CHECK refuses an empty name.
    private mutating func name() -> String {
        let text = text()
        return text.isEmpty ? "名無し" : text
    }

    private func rows(_ table: MasterTable) -> [[DatabaseValue]] {
        (state[table.name] ?? [:]).sorted { "\($0.key)" < "\($1.key)" }.map(\.value)
    }

    private mutating func put(_ table: MasterTable, _ values: [String: DatabaseValueConvertible?], into batch: inout ChangeBatch) {
        let table = declared[table]
        batch.put(table, values)
        let row = table.columns.map { column -> DatabaseValue in
            if let value = values[column.name], let value { return value.databaseValue }
            return column.name == "weight" ? 13.databaseValue : .null
        }
        let key = table.keyColumns.map { row[table.columnNames.firstIndex(of: $0)!] }
        state[table.name, default: [:]][key] = row
    }

    private func values(_ table: MasterTable, _ row: [DatabaseValue]) -> [String: DatabaseValueConvertible?] {
        Dictionary(uniqueKeysWithValues: zip(table.columnNames, row.map { $0.isNull ? nil : $0 as DatabaseValueConvertible? }))
    }

    /// Whether the stations have the test-only column of client schema 2 (`ClientSchemaChangeTests`).
    private var hasEnglishName: Bool { declared.stations.column(named: "station_name_en") != nil }

    /// After a client schema change: every row of a model's state gets the new columns, NULL.
    func withCurrentColumns(_ state: State) -> State {
        var state = state
        for table in declared.tables {
            let width = table.columns.count
            state[table.name] = state[table.name]?.mapValues { $0 + Array(repeating: .null, count: max(0, width - $0.count)) }
        }
        return state
    }

    private mutating func newStation(line: Int64, into batch: inout ChangeBatch) -> Int64 {
        let code = nextStationCode
        nextStationCode += 1
        var values: [String: DatabaseValueConvertible?] = [
            "station_cd": code, "station_g_cd": code, "station_name": name(), "line_cd": line,
            "pref_cd": Int64(random.next() % 47 + 1), "address": chance(30) ? text() : nil,
            "lon": 129.0 + Double(random.next() % 1_000_000) / 70_000.0,
            "lat": 31.0 + Double(random.next() % 1_000_000) / 80_000.0 + (chance(10) ? 0.1 + 0.2 : 0),
            "open_ymd": chance(30) ? "1990-04-01" : nil, "e_status": 0, "e_sort": Int64(random.next() % 100),
            "weight": Int64(pick([1, 5, 11, 12, 13, 13, 13])),
        ]
        if hasEnglishName, chance(50) { values["station_name_en"] = text() }
        put(.stations, values, into: &batch)
        return code
    }

    mutating func nextBatch() -> ChangeBatch {
        var batch = ChangeBatch(declared)
        version += 1
        if version == 1 {
            put(.prefectures, ["pref_cd": 2, "pref_name": "青森県"], into: &batch)
            for company in Int64(1)...2 {
                put(.companies, ["company_cd": company, "company_name": name(), "e_status": 0, "e_sort": company], into: &batch)
            }
            for line in Int64(11)...13 {
                put(.lines, ["line_cd": line, "company_cd": line % 2 + 1, "line_name": name(), "e_status": 0, "e_sort": line], into: &batch)
                var previous: Int64?
                for _ in 0..<(3 + random.next() % 4) {
                    let station = newStation(line: line, into: &batch)
                    if let previous {
                        put(.connections, ["line_cd": line, "station_cd1": previous, "station_cd2": station], into: &batch)
                    }
                    previous = station
                }
            }
            return batch
        }
        let openAtStart = rows(.stations).filter { $0[13] == 0.databaseValue }.map { $0[0] }
        var touched = Set<DatabaseValue>()
        for _ in 0..<(1 + random.next() % 4) {
            let stations = rows(.stations)
            switch random.next() % 10 {
            case 0:
                _ = newStation(line: Int64(pick([11, 12, 13])), into: &batch)
            case 1, 2:
                var row = values(.stations, pick(stations))
                let column = pick(["station_name", "address", "post"])
                row[column] = chance(15) ? nil : column == "station_name" ? name() : text()
                if chance(40) { row["lat"] = Double(random.next() % 1_000_000) / 30_000.0 }
                if chance(30) { row["weight"] = Int64(pick([1, 3, 11, 12, 13])) }
                if hasEnglishName, chance(40) { row["station_name_en"] = chance(20) ? nil : text() }
                if row["station_name"] == nil { row["station_name"] = "名無し" }
                touched.insert(row["station_cd"]!!.databaseValue)
                put(.stations, row, into: &batch)
            case 3:
                var row = values(.stations, pick(stations))
                row["e_status"] = (row["e_status"]!!.databaseValue == 2.databaseValue) ? 0 : 2
                if row["e_status"]!!.databaseValue == 2.databaseValue { row["close_ymd"] = "2021-03-13" }
                touched.insert(row["station_cd"]!!.databaseValue)
                put(.stations, row, into: &batch)
            case 4:
                let candidates = openAtStart.filter { !touched.contains($0) }
                guard !candidates.isEmpty else { continue }
                let old = pick(candidates)
                touched.insert(old)
                var row = values(.stations, state["stations"]![[old]]!)
                let code = nextStationCode
                nextStationCode += 1
                row["station_cd"] = code
                row["line_cd"] = Int64(pick([11, 12, 13]))
                if chance(50) { row["station_name"] = name() }
                put(.stations, row, into: &batch)
                batch.duplicate(old: Int64.fromDatabaseValue(old)!, new: code)
            case 5:
                let connections = rows(.connections)
                guard !connections.isEmpty else { continue }
                let connection = pick(connections)
                batch.remove(.connections, key: connection.map { $0 as DatabaseValueConvertible })
                state["connections"]![connection] = nil
            case 6:
                let a = pick(stations), b = pick(stations)
                put(.connections, ["line_cd": a[5], "station_cd1": a[0], "station_cd2": b[0]], into: &batch)
            case 7:
                var row = values(.lines, pick(rows(.lines)))
                if chance(50) { row["company_cd"] = Int64(pick([1, 2])) } else { row["line_name"] = name() }
                put(.lines, row, into: &batch)
            case 8:
                if state["prefectures"]?[[13.databaseValue]] != nil {
                    batch.remove(.prefectures, key: [13])
                    state["prefectures"]![[13.databaseValue]] = nil
                } else {
                    put(.prefectures, ["pref_cd": 13, "pref_name": name()], into: &batch)
                }
            default:
                var row = values(.companies, pick(rows(.companies)))
                row["company_name"] = name()
                put(.companies, row, into: &batch)
            }
        }
        return batch
    }

    /// The content hash of a client database holding exactly `state`, built apart from Model's builder.
    static func contentHash(of state: State, _ declared: DeclaredSchema, clientSchema: Int) throws -> String {
        let queue = try DatabaseQueue()
        return try queue.write { db in
            try ClientSchema.createTables(db, declared, clientSchema: clientSchema)
            for table in declared.tables {
                // A client schema's columns are the first of the table's (later ones are appended).
                let columns = table.columns(clientSchema: clientSchema)
                let statement = try db.makeStatement(sql: """
                    INSERT INTO \(table.name) (\(columns.map(\.name).joined(separator: ", ")))
                    VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
                    """)
                for row in (state[table.name] ?? [:]).values {
                    StatementBinding.bind(Array(row.prefix(columns.count)), to: statement)
                    try StatementBinding.step(statement, db)
                }
            }
            return try ContentHash.compute(db, declared)
        }
    }
}
