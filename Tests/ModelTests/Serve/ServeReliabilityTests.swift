import Foundation
import Testing

/// `station-admin serve` when the folder or the clients misbehave: a file that is not the
/// manifest's (truncated, rewritten, a link, a FIFO) is refused before any header, with its reason
/// in the log; a flood of idle connections past the descriptor limit, and a download that never
/// reads, neither keep a phone out nor hold the stop past its deadline.
@Suite(.serialized, .tags(.slow), .leftOutOfQuickRuns) struct ServeReliabilityTests {
    let scratch = Scratch()

    /// A release of the 2019 ekidata snapshot: its database (2.6 MB) and gzip (1.1 MB) are larger
    /// than the files `serve` keeps in memory, so they are streamed from disk.
    func realReleaseFolder() throws -> String {
        let directory = URL(fileURLWithPath: scratch.path("curator"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for arguments in [["init"], ["import", Fixtures.ekidata2019, "--memo", "2019"], ["release", "--out", "release", "--no-verify"]] {
            let result = try CommandRunner.run(arguments, in: directory)
            try #require(result.status == 0, "\(arguments): \(result.stderr)")
        }
        return directory.appendingPathComponent("release").path
    }

    func serve(_ folder: String, _ extra: [String] = [], limit: Int? = nil) throws -> (RunningProgram, Int) {
        try startServe(folder, extra, descriptorLimit: limit)
    }

    /// curl's view of one GET: the status, the bytes received and the seconds taken.
    func get(_ port: Int, _ path: String) throws -> (status: Int, bytes: Int, seconds: Double) {
        let result = try CommandRunner.run(["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}",
                                            "http://127.0.0.1:\(port)/\(path)"], program: URL(fileURLWithPath: "/usr/bin/curl"))
        let fields = result.stdout.split(separator: " ")
        return (Int(fields.first ?? "") ?? 0, Int(fields.dropFirst().first ?? "") ?? 0, Double(fields.last ?? "") ?? 99)
    }

    func manifestSize(_ folder: String, _ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + path)
        return (attributes[.size] as? Int) ?? 0
    }

    @Test func aFileThatIsNotTheManifestsIsRefusedBeforeAnyHeaderAndTheServerStaysUp() throws {
        let folder = try realReleaseFolder()
        let (server, port) = try serve(folder)
        let outside = scratch.path("outside")
        for path in ["1/stations.sqlite", "1/carry-over.sql"] {
            let file = folder + "/" + path
            let size = try manifestSize(folder, path)
            let original = try Data(contentsOf: URL(fileURLWithPath: file))
            try original.write(to: URL(fileURLWithPath: outside))
            #expect(try get(port, path).status == 200)
            let damages: [(name: String, reason: String, make: () throws -> Void)] = [
                ("truncated", "bytes on disk, the manifest says \(size)", { try original.prefix(size / 2).write(to: URL(fileURLWithPath: file)) }),
                ("one byte replaced", "its SHA-256 is not the manifest's", {
                    var changed = original
                    changed[size / 3] ^= 0xFF
                    try changed.write(to: URL(fileURLWithPath: file))
                }),
                ("a link to a copy outside the folder", "reached through a symbolic link", {
                    try FileManager.default.removeItem(atPath: file)
                    try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: outside)
                }),
                ("a FIFO", "not a regular file", {
                    try FileManager.default.removeItem(atPath: file)
                    #expect(mkfifo(file, 0o644) == 0)
                }),
            ]
            for damage in damages {
                try damage.make()
                let refused = try get(port, path)
                // The error's JSON, never the manifest's length over other bytes.
                #expect(refused.status == 500 && refused.bytes < 300 && refused.seconds < 1, "\(path) \(damage.name): \(refused)")
                // The log line is read from the server's stderr as it comes: waited for, not assumed there.
                #expect(server.wait(for: "500 GET /\(path): \(path): ", seconds: 10), "\(damage.name)")
                #expect(server.wait(for: damage.reason, seconds: 10), "\(damage.name): \(server.stderr.suffix(400))")
                for other in ["manifest.json", "1/stations.sqlite.gz"] {
                    let answered = try get(port, other)
                    #expect(answered.status == 200 && answered.seconds < 1, "\(other) after \(path) \(damage.name): \(answered)")
                }
                try? FileManager.default.removeItem(atPath: file)
                try original.write(to: URL(fileURLWithPath: file))
                let restored = try get(port, path)
                #expect(restored.status == 200 && restored.bytes == size, "\(path) restored after \(damage.name): \(restored)")
            }
        }
        #expect(server.stop(SIGTERM, seconds: 5) == 0)
    }

    @Test func aFloodOfConnectionsPastTheDescriptorLimitDoesNotKeepPhonesOut() throws {
        let folder = try realReleaseFolder()
        // 512 descriptors: at most 256 connections, the rest kept for files.
        let (server, port) = try serve(folder, ["--quiet"], limit: 512)
        defer { _ = server.stop(SIGKILL) }
        #expect(server.stderr.contains("at most 256 connections"), "\(server.stderr)")
        let flood = try CommandRunner.run(["python3", Fixtures.repository.appendingPathComponent("scripts/connection-flood.py").path,
                                           "127.0.0.1", "\(port)", "2000", "--pid", "\(server.process.processIdentifier)"],
                                          program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(flood.status == 0, "\(flood.stdout)\(flood.stderr)")
        #expect(flood.stdout.contains("ok   a normal request answered within 1 s all through 2000 connections"), "\(flood.stdout)")
        #expect(flood.stdout.contains("ok   a normal request answered within 1 s after the flood"), "\(flood.stdout)")
        let made = flood.stdout.components(separatedBy: "refused, ").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
        // The script counts until a count adds none (a loaded CI once counted 1,723 of 1,744 as the
        // flood ended); a few may still be on their way. A server that made no room closes none.
        #expect(made >= 2000 - 256 - 8, "the server closed idle connections to make room: \(flood.stdout)")
        #expect(try get(port, "1/stations.sqlite").status == 200)
    }

    @Test func aDownloadThatNeverReadsDoesNotHoldTheStopPastTheDeadline() throws {
        let folder = try realReleaseFolder()
        let (server, port) = try serve(folder, ["--quiet", "--shutdown-deadline", "1"])
        var clients: [Int32] = []
        defer { clients.forEach { close($0) } }
        for _ in 0..<4 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var small: Int32 = 4096
            setsockopt(client, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(connected == 0)
            let request = "GET /1/stations.sqlite HTTP/1.1\r\nHost: phone\r\n\r\n"
            _ = request.withCString { send(client, $0, strlen($0), 0) }
            clients.append(client)
        }
        usleep(500_000)
        let started = Date()
        #expect(server.stop(SIGTERM, seconds: 10) == 0)
        #expect(Date().timeIntervalSince(started) < 4, "stopped after \(Date().timeIntervalSince(started)) s")
        #expect(server.stderr.contains("Stopped serving \(folder)"), "\(server.stderr)")
    }
}
