import Foundation
import GRDB
import StationCSV
import StationCheck
import StationCurate
import StationDelta
import StationLog
import StationManifest
import StationRelease
import StationSchema
import StationSupport
import Testing

/// `station-admin serve` and `deploy/nginx.conf`, tried with real clients on loopback: a phone at
/// every older version (`scripts/phone-client.py`, Python's urllib and sqlite3), the HTTP edge
/// cases (`scripts/http-edge-cases.py`), requests while releases publish
/// (`scripts/load-during-publish.py`), and a graceful stop.
@Suite(.serialized, .tags(.nginx, .slow), .leftOutOfQuickRuns) struct ServeTests {
    let scratch = Scratch()

    func servedFolder() throws -> (MasterDatabase, String, String) {
        let (database, folder) = try scratch.servedFolder()
        return (database, folder, try splitsFile(database))
    }

    func splitsFile(_ database: MasterDatabase) throws -> String {
        let splits = try database.read { try UpdateLog.splits($0) }
        let path = scratch.path("splits-\(UUID().uuidString).json")
        try JSONEncoder().encode(splits).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `station-admin serve` on a free port; returns it with its port.
    func serve(_ folder: String, quiet: Bool = true) throws -> (RunningProgram, Int) {
        try startServe(folder, quiet ? ["--quiet"] : [])
    }

    func run(_ script: String, _ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.run(["python3", Fixtures.repository.appendingPathComponent("scripts/\(script)").path] + arguments,
                              program: URL(fileURLWithPath: "/usr/bin/env"))
    }

    @Test func phonesAtEveryOlderVersionUpdateThroughServeAndTheEdgeCasesHold() throws {
        let (_, folder, splits) = try servedFolder()
        let (server, port) = try serve(folder, quiet: false)
        let work = scratch.path("phones")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let phones = try run("phone-client.py", ["http://127.0.0.1:\(port)", folder, splits, work])
        #expect(phones.status == 0, "\(phones.stdout)\(phones.stderr)")
        #expect(phones.stdout.hasSuffix("4 passed, 0 failed\n"), "\(phones.stdout)")
        #expect(phones.stdout.contains("ok   phone at version 4 reached version 5 by full"))
        #expect(phones.stdout.contains("ok   phone at version 1 reached version 5 by delta"))

        let edges = try run("http-edge-cases.py", ["127.0.0.1", "\(port)", "--garbage", "1000"])
        #expect(edges.status == 0, "\(edges.stdout)\(edges.stderr)")
        #expect(edges.stdout.contains(" 0 failed\n"), "\(edges.stdout)")
        #expect(edges.stdout.contains("ok   1000 random and garbage from values: no 5xx"), "\(edges.stdout)")

        // One common-log-format line per request, and a graceful stop on SIGTERM.
        #expect(server.stderr.contains("127.0.0.1 - - ["))
        #expect(server.stderr.contains("\"GET /update?from=1 HTTP/1.1\" 200 "))
        // Every 4xx has a line with its reason, the 416 of a range past the end too.
        #expect(server.stderr.contains("416 GET /") && server.stderr.contains("starts past the end of"), "\(server.stderr.suffix(2000))")
        #expect(server.stop(SIGTERM) == 0)
        #expect(server.stderr.hasSuffix("Stopped serving \(folder).\n"), "\(server.stderr.suffix(300))")
    }

    @Test func noRequestFailsOrMixesVersionsWhileReleasesPublish() throws {
        let (database, folder, _) = try servedFolder()
        let (server, port) = try serve(folder)
        defer { _ = server.stop() }
        let load = try RunningProgram("/usr/bin/env", ["python3", Fixtures.repository.appendingPathComponent("scripts/load-during-publish.py").path,
                                                "127.0.0.1", "\(port)", "8", "--threads", "4"])
        usleep(500_000)
        // Three releases published while the phones ask; each is served as soon as it is published.
        for version in 6...8 {
            var batch = ChangeBatch()
            batch.put(.stations, stationRow(1120105, name: "三沢 \(version)", line: 11201))
            try Curator(database).commit(batch, memo: "v\(version)")
            let released = try CommandRunner.run(["release", "--db", database.path, "--out", folder, "--no-verify"])
            #expect(released.status == 0, "\(released.stderr)")
            usleep(700_000)
        }
        load.process.waitUntilExit()
        #expect(load.process.terminationStatus == 0, "\(load.stderr)")
        #expect(load.stderr.contains(" 0 failed\n"), "\(load.stderr)")
        #expect(load.stderr.contains("data versions served [5, 6, 7, 8]"), "\(load.stderr)")
        // The served manifest is the newest one, without a restart.
        let manifest = try CommandRunner.run(["-s", "http://127.0.0.1:\(port)/manifest.json"], program: URL(fileURLWithPath: "/usr/bin/curl"))
        #expect(try Manifest.decode(Data(manifest.stdout.utf8)).newest == 8)
    }

    @Test func theSameFolderOnNginxServesEveryPhone() throws {
        let (_, folder, splits) = try servedFolder()
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let program = try #require(nginx, "nginx is not installed (scripts/install-system-packages nginx)")
        let prefix = scratch.path("nginx")
        try FileManager.default.createDirectory(atPath: prefix + "/temp", withIntermediateDirectories: true)
        let port = try Self.freePort()
        let config = try NginxConfig.forTest(root: folder, port: port, prefix: prefix)
        try config.write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
        let server = try RunningProgram(program, ["-p", prefix, "-c", prefix + "/nginx.conf", "-g", "daemon off;"])
        defer { _ = server.stop(SIGQUIT) }
        var answered = false
        for _ in 0..<100 where !answered {
            usleep(50_000)
            answered = (try? CommandRunner.run(["-sf", "http://127.0.0.1:\(port)/manifest.json", "-o", "/dev/null"],
                                               program: URL(fileURLWithPath: "/usr/bin/curl")).status) == 0
        }
        try #require(answered, "nginx did not start: \(server.stderr)")
        let work = scratch.path("phones")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let phones = try run("phone-client.py", ["http://127.0.0.1:\(port)", folder, splits, work, "--static"])
        #expect(phones.status == 0, "\(phones.stdout)\(phones.stderr)")
        #expect(phones.stdout.hasSuffix("4 passed, 0 failed\n"), "\(phones.stdout)")
        // The cache headers, and nothing unlisted.
        let head = try CommandRunner.run(["-sI", "http://127.0.0.1:\(port)/5/stations.sqlite.gz"], program: URL(fileURLWithPath: "/usr/bin/curl"))
        #expect(head.stdout.contains("Cache-Control: public, max-age=31536000, immutable"))
        #expect(head.stdout.contains("Content-Type: application/gzip"))
        for path in ["/.lock", "/5/", "/", "/%2e%2e/etc/passwd"] {
            let result = try CommandRunner.run(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", "http://127.0.0.1:\(port)\(path)"],
                                               program: URL(fileURLWithPath: "/usr/bin/curl"))
            #expect(["400", "404"].contains(result.stdout), "\(path): \(result.stdout)")
        }
    }

    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// `deploy/nginx.conf` with the lines marked `STATION_ADMIN_*` pointed at a test's own folder,
/// port and prefix: the shipped file is the one tested.
enum NginxConfig {
    static func forTest(root: String, port: Int, prefix: String) throws -> String {
        let shipped = try String(contentsOf: Fixtures.repository.appendingPathComponent("deploy/nginx.conf"), encoding: .utf8)
        var temps = 0
        return shipped.components(separatedBy: "\n").map { line -> String in
            let indent = String(line.prefix { $0 == " " })
            if line.contains("# STATION_ADMIN_PID") { return "pid \(prefix)/nginx.pid;" }
            if line.contains("# STATION_ADMIN_ERROR_LOG") { return "error_log \(prefix)/error.log;" }
            if line.contains("# STATION_ADMIN_ACCESS_LOG") { return indent + "access_log off;" }
            if line.contains("# STATION_ADMIN_LISTEN") { return indent + "listen 127.0.0.1:\(port);" }
            if line.contains("# STATION_ADMIN_ROOT") { return indent + "root \(root);" }
            if line.contains("# STATION_ADMIN_TEMP"), let directive = line.split(separator: " ", omittingEmptySubsequences: true).first {
                temps += 1
                return indent + "\(directive) \(prefix)/temp/\(temps);"
            }
            return line
        }.joined(separator: "\n")
    }
}

/// No error answer is cached as the file's: a 416 (a range past the end) and a 404, from `serve`
/// and from nginx with `deploy/nginx.conf`, carry neither a year's `immutable` nor the file's
/// ETag, while the file's own 200 and 206 keep both.
@Suite(.serialized, .tags(.nginx)) struct ErrorCachingTests {
    let scratch = Scratch()

    private func headers(_ url: String, range: String? = nil) throws -> (status: Int, headers: [String: String]) {
        let result = try CommandRunner.run(["-s", "-o", "/dev/null", "-D", "-"] + (range.map { ["-H", "Range: \($0)"] } ?? []) + [url],
                                           program: URL(fileURLWithPath: "/usr/bin/curl"))
        let lines = result.stdout.split(separator: "\r\n").map(String.init)
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? -1
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, fields)
    }

    @Test func errorAnswersAreNeverCachedAsTheFilesInServeAndNginx() throws {
        let (_, folder) = try scratch.servedFolder()
        let (serve, port) = try startServe(folder, ["--quiet"])
        defer { _ = serve.stop(SIGTERM) }
        let (nginx, nginxBase) = try scratch.nginx(serving: folder)
        defer { _ = nginx.stop(SIGTERM) }
        for base in ["http://127.0.0.1:\(port)", nginxBase] {
            let file = base + "/5/stations.sqlite.gz"
            let whole = try headers(file)
            #expect(whole.status == 200 && whole.headers["cache-control"]?.contains("immutable") == true, "\(base): \(whole)")
            // nginx cannot tell its 206 from its 416 when it adds headers: both are revalidated there.
            let part = try headers(file, range: "bytes=0-9")
            #expect(part.status == 206 && part.headers["cache-control"] == (base == nginxBase ? "no-cache" : "public, max-age=31536000, immutable"), "\(base): \(part)")
            for (answer, expected) in [(try headers(file, range: "bytes=99999999-"), 416), (try headers(base + "/5/no-such-file"), 404)] {
                #expect(answer.status == expected, "\(base): \(answer)")
                let cacheControl = answer.headers["cache-control"] ?? ""
                #expect(!cacheControl.contains("immutable") && !cacheControl.contains("max-age=31536000"), "\(base) \(expected): \(cacheControl)")
                #expect(answer.headers["etag"] == nil || base == nginxBase, "\(base) \(expected): an ETag on an error: \(answer.headers)")
            }
        }
    }
}
