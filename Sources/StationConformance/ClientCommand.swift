import Foundation

/// The client's contract: one command line, run by `/bin/sh -c`, with `{db}` (the database's
/// path), `{url}` (the release folder's URL, ending in `/`) and `{key}` (the trusted key's
/// `.pub` file) replaced by shell-quoted values. It brings the database to the newest release and
/// exits 0, or refuses with non-zero.
public struct ClientCommand: Sendable, Equatable {
    /// The command line as given.
    public let template: String

    /// A command that names `{db}` and `{url}` (`{key}` is optional: a client may pin its key
    /// at build time).
    public init(_ template: String) throws {
        for placeholder in ["{db}", "{url}"] where !template.contains(placeholder) {
            throw ConformanceError.missingPlaceholder(placeholder, command: template)
        }
        self.template = template
    }

    /// The shell's command line for one run: each placeholder of the template replaced in one
    /// pass, so that a placeholder inside a substituted value (a work folder named `v{key};…`)
    /// stays the literal text it is, inside its quotes.
    package func line(database: String, url: String, key: String) -> String {
        let values = ["{db}": Self.quoted(database), "{url}": Self.quoted(url), "{key}": Self.quoted(key)]
        var line = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            line += rest[..<open]
            if let (placeholder, value) = values.first(where: { rest[open...].hasPrefix($0.key) }) {
                line += value
                rest = rest[rest.index(open, offsetBy: placeholder.count)...]
            } else {
                line.append("{")
                rest = rest[rest.index(after: open)...]
            }
        }
        return line + rest
    }

    /// `text` as one word for `/bin/sh`: in single quotes, each single quote closed, escaped and
    /// reopened (for a program's path inside a command line).
    public static func quotedForShell(_ text: String) -> String { quoted(text) }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}

/// How one run of the client ended.
struct ClientRunOutcome: Sendable {
    /// The exit status; nil when it did not exit by itself (killed by the kit or a signal).
    var status: Int32?
    /// The kit killed it: at the deadline, or at the instant a kill scenario chose.
    var killedByKit: Bool
    var deadlineExceeded: Bool
    var seconds: Double
    /// The largest resident memory of any of its processes, in bytes, as sampled while it ran
    /// (`VmHWM`, every 20 ms), or `wait4`'s `ru_maxrss` where there is no `/proc`.
    var peakMemoryBytes: Int
    /// What its processes wrote (`wchar` of `/proc/PID/io`: files, pipes and sockets), each
    /// process's last sample summed; 0 where there is no `/proc`.
    var writtenBytes: Int
    /// The last lines it wrote on stdout and stderr.
    var output: String
}

/// Runs one client command in a process group of its own, so that the kit can kill all of it.
enum ClientProcess {
    /// Runs `line`, killing its process group at `killAfter` (a kill scenario) or at `deadline`.
    ///
    /// Watched from a thread of its own, not a task: the cooperative pool has a thread per core,
    /// and on a host whose other work holds them (a test run's other suites) a watcher waiting its
    /// turn kills late or not at all, and measures the client's time with the wait in it.
    static func run(_ line: String, logFile: String, temporaryFolder: String, deadline: Double, killAfter: Double? = nil) async throws -> ClientRunOutcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    try watch(line, logFile: logFile, temporaryFolder: temporaryFolder, deadline: deadline, killAfter: killAfter)
                })
            }.start()
        }
    }

    /// `line` started by `/bin/sh` in a process group of its own, with default signals, its
    /// output to `logFile`; its pid.
    private static func spawn(_ line: String, logFile: String, temporaryFolder: String) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let arguments = ["/bin/sh", "-c", line]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // Its temporary files in the scenario's folder: what a killed client leaves goes with the work folder.
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporaryFolder
        var envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &argv, &envp)
        guard spawned == 0 else { throw ConformanceError.kit("cannot start /bin/sh: \(String(cString: strerror(spawned)))") }
        return pid
    }

    private static func watch(_ line: String, logFile: String, temporaryFolder: String, deadline: Double, killAfter: Double?) throws -> ClientRunOutcome {
        let started = ContinuousClock.now
        let pid = try spawn(line, logFile: logFile, temporaryFolder: temporaryFolder)
        var status: Int32 = 0
        var usage = rusage()
        var killedByKit = false, deadlineExceeded = false
        var peak = 0, polls = 0
        var written: [String: Int] = [:]
        // Polled, to sample memory and to kill on time.
        while true {
            let waited = wait4(pid, &status, WNOHANG, &usage)
            if waited == pid { break }
            polls += 1
            if polls % (killAfter == nil ? 2 : 10) == 1 {
                let members = Self.members(ofGroup: pid)
                peak = max(peak, Self.largestPeakMemory(of: members) ?? 0)
                Self.sampleWritten(of: members, into: &written)
            }
            if waited < 0 && errno != EINTR { throw ConformanceError.kit("wait4: \(String(cString: strerror(errno)))") }
            let elapsed = Self.seconds(since: started)
            if let killAfter, elapsed >= killAfter, !killedByKit {
                killedByKit = true
                kill(-pid, SIGKILL)
            } else if elapsed >= deadline, !killedByKit {
                killedByKit = true
                deadlineExceeded = true
                kill(-pid, SIGKILL)
            }
            usleep(killAfter == nil ? 10_000 : 2_000)
        }
        // Whatever it left running in its group (a background download) goes with it, and is
        // gone before the kit reads the database: a process killed still holds its locks until it ends.
        kill(-pid, SIGKILL)
        let killed = ContinuousClock.now
        while Self.groupIsRunning(pid) && Self.seconds(since: killed) < 10 { usleep(5_000) }
        let exited = (status & 0x7f) == 0
        return ClientRunOutcome(
            status: exited && !killedByKit ? (status >> 8) & 0xff : nil,
            killedByKit: killedByKit, deadlineExceeded: deadlineExceeded,
            seconds: seconds(since: started), peakMemoryBytes: Self.hasProcessTable ? peak : Int(usage.ru_maxrss) * 1024,
            writtenBytes: written.values.reduce(0, +),
            output: tail(of: logFile))
    }

    /// The largest high-water mark of resident memory (`VmHWM`) among the processes `members`
    /// (pids, `members(ofGroup:)`); nil where there is no `/proc`. Not `wait4`'s `ru_maxrss`: a
    /// process started by `posix_spawn` (a vfork) takes the kit's own high-water mark through its exec.
    static func largestPeakMemory(of members: [String]) -> Int? {
        guard hasProcessTable else { return nil }
        var largest = 0
        for pid in members {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                  let kibibytes = line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap({ Int($0) }) else { continue }
            largest = max(largest, kibibytes * 1024)
        }
        return largest
    }

    /// The bytes each process of `members` wrote so far (`wchar`), by pid: a process's count
    /// only grows, so its last sample is the most it wrote (less what it wrote after it).
    static func sampleWritten(of members: [String], into written: inout [String: Int]) {
        for pid in members {
            guard let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8),
                  let line = io.split(separator: "\n").first(where: { $0.hasPrefix("wchar:") }),
                  let bytes = line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap({ Int($0) }) else { continue }
            written[pid] = max(written[pid] ?? 0, bytes)
        }
    }

    static let hasProcessTable = FileManager.default.fileExists(atPath: "/proc/self/stat")

    /// The processes of `group` that have not ended (a zombie has).
    static func members(ofGroup group: pid_t) -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.filter { entry in
            guard entry.first?.isNumber == true, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            // "PID (COMMAND) STATE PPID PGRP …": the command may hold spaces and parentheses.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && fields[2] == "\(group)" && fields[0] != "Z"
        }
    }

    /// Whether a process of group `group` has yet to end. A process that ended but is not yet
    /// reaped (a zombie: the shell's child, left to init) holds no lock and counts as ended;
    /// `kill(-group, 0)` cannot tell them apart, `/proc` can, where there is one.
    static func groupIsRunning(_ group: pid_t) -> Bool {
        hasProcessTable ? !members(ofGroup: group).isEmpty : kill(-group, 0) == 0
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The log's last 2 KiB, on one line each.
    static func tail(of path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        return String(decoding: data.suffix(2048), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
