import Foundation

/// With `STATION_ADMIN_PROFILE` set, prints how long each phase of a long command took
/// (to stderr), beside the slow SQL statements `MasterDatabase` prints, and the command's
/// peak memory at its end.
public struct PhaseLog {
    /// `STATION_ADMIN_PROFILE` is set: phases and slow statements go to stderr.
    package static let isOn = ProcessInfo.processInfo.environment["STATION_ADMIN_PROFILE"] != nil
    private var last = Date()

    package init() {}

    package mutating func done(_ phase: String) {
        guard Self.isOn else { return }
        let now = Date()
        // The peak so far beside each phase: which one makes a command's memory.
        let peak = Self.peakMemoryKibibytes().map { String(format: "  (peak %d MiB)", $0 / 1024) } ?? ""
        FileHandle.standardError.write(Data(String(format: "%8.3f s  phase: %@%@\n", now.timeIntervalSince(last), phase, peak).utf8))
        last = now
    }
}

extension PhaseLog {
    /// With `STATION_ADMIN_PROFILE` set, prints `peak memory: N KiB` to stderr.
    public static func reportPeakMemory() {
        guard isOn, let peak = peakMemoryKibibytes() else { return }
        FileHandle.standardError.write(Data("peak memory: \(peak) KiB\n".utf8))
    }

    /// This process's peak resident memory in KiB (`VmHWM`), nil where `/proc` does not say.
    ///
    /// Not `ru_maxrss` from `getrusage` or `wait4`: a process started by `posix_spawn` (a vfork)
    /// keeps its parent's high-water mark through exec, so a command spawned by a large test
    /// process reported the test process's memory.
    package static func peakMemoryKibibytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        // `VmHWM:\t   60328 kB`: the padding is tabs and spaces, and a large number has none.
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
    }
}
