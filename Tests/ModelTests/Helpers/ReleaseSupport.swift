import Foundation
import GRDB
import StationCurate
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

extension Scratch {
    /// A phone: a copy of a client database with some user records.
    func phone(from database: String, name: String, completions: [(Int64, String?, String?, Int64?)]) throws -> String {
        let path = self.path(name)
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: database, toPath: path)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for (station, date, memo, updatedAt) in completions {
                try db.execute(sql: "INSERT INTO completions VALUES (?, ?, ?, ?)", arguments: [station, date, memo, updatedAt])
            }
        }
        try queue.close()
        return path
    }

    /// Applies a gzip delta with the real sqlite3 client inside one transaction, as a phone does.
    func apply(delta gzipPath: String, to database: String) throws -> SQLiteShell.Result {
        let script = path("apply-\(UUID().uuidString).sql")
        try (Data("BEGIN;\n".utf8) + (try Gunzip.read(gzipPath)) + Data("COMMIT;\n".utf8)).write(to: URL(fileURLWithPath: script))
        return try SQLiteShell.run(script: script, database: database)
    }
}

func contentHash(ofDatabase path: String, _ declared: DeclaredSchema = .shipped) throws -> String {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { try ContentHash.compute($0, declared) }
}

func completions(ofDatabase path: String) throws -> [Int64: [String?]] {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in
        var result: [Int64: [String?]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT station_cd, date, memo, CAST(updated_at AS TEXT) FROM completions") {
            result[row[0]] = [row[1], row[2], row[3]]
        }
        return result
    }
}

/// The base fixture's station 八戸 on line 11201, as a row for a `ChangeBatch`.
func stationRow(_ code: Int64, name: String, line: Int64, group: Int64? = nil, status: Int = 0) -> [String: DatabaseValueConvertible?] {
    ["station_cd": code, "station_g_cd": group ?? code, "station_name": name, "line_cd": line, "pref_cd": 2,
     "lon": 141.430854, "lat": 40.508877, "e_status": status, "e_sort": code]
}

/// What the real `sqlite3` shell prints for one query, without the final newline: how the tests
/// read a database the way a phone or a curator would, without GRDB in between.
func sqlite3Query(_ sql: String, database path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sqlite3", "-readonly", path, sql]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    precondition(process.terminationStatus == 0, "sqlite3 failed on \(path): \(sql)")
    var text = String(decoding: data, as: UTF8.self)
    if text.hasSuffix("\n") { text.removeLast() }
    return text
}

/// Every file of a folder with its SHA-256, the lock file aside: what a refused release must leave.
func folderFiles(_ folder: String) throws -> [String: String] {
    var files: [String: String] = [:]
    let enumerator = FileManager.default.enumerator(atPath: folder)!
    while let name = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let path = (folder as NSString).appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue, name != ".lock" {
            files[name] = try FileDigest.sha256(ofFile: path)
        }
    }
    return files
}

extension Scratch {
    /// A release folder holding every version 1…5: splits at 2 and 3 (a chain), 2,000 connections
    /// added at 4 and removed at 5, so that version 4 downloads the full database (its delta would
    /// be larger) and the others take deltas.
    func servedFolder() throws -> (MasterDatabase, String) {
        let database = try baseDatabase()
        var options = ReleaseOptions(outputFolder: path("release"), verify: false)
        try Publisher(database).release(options)
        var first = ChangeBatch(), second = ChangeBatch()
        first.put(.stations, stationRow(9920601, name: "八戸", line: 11201))
        first.duplicate(old: 1120101, new: 9920601)
        try Curator(database).commit(first, memo: "v2")
        try Publisher(database).release(options)
        second.put(.stations, stationRow(9920602, name: "八戸\r\n\u{0}🚃", line: 11201))
        second.duplicate(old: 9920601, new: 9920602)
        try Curator(database).commit(second, memo: "v3")
        try Publisher(database).release(options)
        let (added, removed) = try everyConnection(of: database)
        try Curator(database).commit(added, memo: "v4")
        try Publisher(database).release(options)
        try Curator(database).commit(removed, memo: "v5")
        options.verify = true
        let result = try Publisher(database).release(options)
        #expect(result.released.downloads.map(\.kind) == [.delta, .delta, .delta, .full])
        return (database, path("release"))
    }
}

extension Scratch {
    /// nginx with `deploy/nginx.conf` over `folder`: a static host serves whatever the folder holds,
    /// as an attacker's CDN would.
    func nginx(serving folder: String) throws -> (RunningProgram, String) {
        let program = try #require(["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let prefix = path("nginx-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: prefix + "/temp", withIntermediateDirectories: true)
        let port = try ServeTests.freePort()
        try NginxConfig.forTest(root: folder, port: port, prefix: prefix).write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
        let server = try RunningProgram(program, ["-p", prefix, "-c", prefix + "/nginx.conf", "-g", "daemon off;"])
        for _ in 0..<100 {
            if (try? CommandRunner.run(["-sf", "-o", "/dev/null", "http://127.0.0.1:\(port)/manifest.json"],
                                        program: URL(fileURLWithPath: "/usr/bin/curl")).status) == 0 { break }
            usleep(50_000)
        }
        return (server, "http://127.0.0.1:\(port)")
    }
}

/// A batch adding a connection between every two stations on every line, and one removing them:
/// a version whose delta is larger than the (small) database, then one that cancels it.
func everyConnection(of database: MasterDatabase) throws -> (added: ChangeBatch, removed: ChangeBatch) {
    let stations = try database.read { try Int64.fetchAll($0, sql: "SELECT station_cd FROM stations ORDER BY station_cd") }
    let lines = try database.read { try Int64.fetchAll($0, sql: "SELECT line_cd FROM lines ORDER BY line_cd") }
    var added = ChangeBatch(), removed = ChangeBatch()
    for line in lines { for first in stations { for second in stations where first != second {
        added.put(.connections, ["line_cd": line, "station_cd1": first, "station_cd2": second])
        removed.remove(.connections, key: [line, first, second])
    } } }
    return (added, removed)
}
