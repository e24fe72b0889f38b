import Foundation
@testable import Model

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
    /// peak resident memory in KiB (`wait4` reports the child's alone, whatever else runs).
    static func peakMemory(_ arguments: [String], program: URL = executable) throws -> (status: Int32, kibibytes: Int) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([program.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, program.path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
        return (exitStatus, usage.ru_maxrss)
    }
}
