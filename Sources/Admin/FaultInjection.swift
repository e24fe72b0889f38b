import Foundation
import StationRelease
import StationWeb

/// The seam through which tests and `scripts/chaos` kill a release at a chosen step, as a
/// power cut or `kill -9` would: `STATION_ADMIN_KILL_AT=new-version-moved-in station-admin release`.
/// The names are `ReleaseStep`'s raw values. Unset (always, in normal use), it does nothing, and a
/// release build (`swift build -c release`, what is shipped) has no such switch at all: only the
/// debug build the tests run reads the variable.
enum FaultInjection {
    static let variable = "STATION_ADMIN_KILL_AT"

    static func releaseStep() -> (@Sendable (ReleaseStep) throws -> Void)? {
        #if !DEBUG
        return nil
        #else
        guard let name = ProcessInfo.processInfo.environment[variable], let target = ReleaseStep(rawValue: name) else { return nil }
        return { step in
            if step == target { kill(getpid(), SIGKILL) }
        }
        #endif
    }
}

extension FaultInjection {
    /// The same for `sync-postgres`: `STATION_ADMIN_KILL_AT=sync:tablesCopied` (a `PostgresSyncStep`).
    static func syncStep() -> (@Sendable (PostgresSyncStep) throws -> Void)? {
        #if !DEBUG
        return nil
        #else
        guard let name = ProcessInfo.processInfo.environment[variable], name.hasPrefix("sync:"),
              let target = PostgresSyncStep(rawValue: String(name.dropFirst("sync:".count))) else { return nil }
        return { step in
            if step == target { kill(getpid(), SIGKILL) }
        }
        #endif
    }
}
