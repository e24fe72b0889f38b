import Foundation

/// With `STATION_ADMIN_PROFILE` set, prints how long each phase of a long command took
/// (to stderr), beside the slow SQL statements `MasterDatabase` prints.
struct PhaseLog {
    /// `STATION_ADMIN_PROFILE` is set: phases and slow statements go to stderr.
    static let isOn = ProcessInfo.processInfo.environment["STATION_ADMIN_PROFILE"] != nil
    private var last = Date()

    mutating func done(_ phase: String) {
        guard Self.isOn else { return }
        let now = Date()
        FileHandle.standardError.write(Data(String(format: "%8.3f s  phase: %@\n", now.timeIntervalSince(last), phase).utf8))
        last = now
    }
}
