import Foundation
import GRDB
import StationCurate
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport

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

func contentHash(ofDatabase path: String) throws -> String {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { try ContentHash.compute($0) }
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
