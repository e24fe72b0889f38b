import Foundation
import StationCheck
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// Runs the built `station-admin` executable, as a curator would from a terminal.
struct CommandRunner {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static let executable: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        for folder in candidates {
            let url = folder.appendingPathComponent("station-admin")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return Fixtures.repository.appendingPathComponent(".build/debug/station-admin")
    }()

    /// Runs station-admin (or another program) with the test's environment, `environment`
    /// added and the variables in `unset` removed.
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
                    unset: [String] = [], program: URL = executable) throws -> Result {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        for name in unset { merged.removeValue(forKey: name) }
        process.environment = merged
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let (stdout, stderr) = PipeReader.readBoth(out.fileHandleForReading, err.fileHandleForReading)
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }
}

extension CommandRunner {
    /// Runs station-admin with its output discarded and returns its exit status and its own
    /// peak resident memory in KiB, as it reports it with `STATION_ADMIN_PROFILE` (`VmHWM`).
    /// Not `wait4`'s `ru_maxrss`: a child spawned by `posix_spawn` keeps this test process's
    /// high-water mark through exec, and this process grows with the tests running beside it.
    static func peakMemory(_ arguments: [String], program: URL = executable) throws -> (status: Int32, kibibytes: Int) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("peak-memory-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["STATION_ADMIN_PROFILE": "1"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        let errors = try FileHandle(forWritingTo: log)
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        try errors.close()
        let report = try String(contentsOf: log, encoding: .utf8)
        let peak = report.split(separator: "\n").last { $0.hasPrefix("peak memory: ") }
            .flatMap { Int($0.dropFirst("peak memory: ".count).prefix { $0.isNumber }) }
        return (process.terminationStatus, peak ?? 0)
    }
}

/// A running program whose output (standard output and error together) is read as it comes.
final class RunningProgram: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var stderrText = ""

    init(_ program: String, _ arguments: [String], in directory: URL? = nil) throws {
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "STATION_ADMIN_DB")
        process.environment = environment
        let err = Pipe()
        process.standardError = err
        process.standardOutput = err
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.stderrText += String(decoding: data, as: UTF8.self)
            self.lock.unlock()
        }
        try process.run()
    }

    var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return stderrText
    }

    /// Waits up to `seconds` for standard error to hold `text`.
    func wait(for text: String, seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if stderr.contains(text) { return true }
            usleep(20_000)
        }
        return false
    }

    /// Sends `signal` and waits for the exit; the exit status, or nil after `seconds`.
    func stop(_ signal: Int32 = SIGTERM, seconds: Double = 20) -> Int32? {
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate(); return nil }
        return process.terminationStatus
    }
}


/// `station-admin serve` on a free port, started and waited for: the program and its port.
/// With `descriptorLimit`, started under `prlimit` with that many file descriptors.
func startServe(_ folder: String, _ extra: [String] = [], descriptorLimit: Int? = nil) throws -> (server: RunningProgram, port: Int) {
    let arguments = ["serve", "--out", folder, "--port", "0"] + extra
    let server = if let descriptorLimit {
        try RunningProgram("/usr/bin/prlimit", ["--nofile=\(descriptorLimit):\(descriptorLimit)", CommandRunner.executable.path] + arguments)
    } else {
        try RunningProgram(CommandRunner.executable.path, arguments)
    }
    try #require(server.wait(for: "Serving \(folder) on http://127.0.0.1:"), "\(server.stderr)")
    let port = server.stderr.components(separatedBy: "http://127.0.0.1:").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
    return (server, port)
}
