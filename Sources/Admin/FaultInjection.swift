import Foundation
import StationRelease
import StationWeb

/// The seam through which tests and `scripts/chaos` kill a release at a chosen step, as a
/// power cut or `kill -9` would: `STATION_ADMIN_KILL_AT=new-version-moved-in station-admin release`.
/// The names are `ReleaseStep`'s raw values. Unset (always, in normal use), it does nothing.
enum FaultInjection {
    static let variable = "STATION_ADMIN_KILL_AT"

    static func releaseStep() -> (@Sendable (ReleaseStep) throws -> Void)? {
        guard let name = ProcessInfo.processInfo.environment[variable], let target = ReleaseStep(rawValue: name) else { return nil }
        return { step in
            if step == target { kill(getpid(), SIGKILL) }
        }
    }
}

extension FaultInjection {
    /// The same for `sync-postgres`: `STATION_ADMIN_KILL_AT=sync:tablesCopied` (a `PostgresSyncStep`).
    static func syncStep() -> (@Sendable (PostgresSyncStep) throws -> Void)? {
        guard let name = ProcessInfo.processInfo.environment[variable], name.hasPrefix("sync:"),
              let target = PostgresSyncStep(rawValue: String(name.dropFirst("sync:".count))) else { return nil }
        return { step in
            if step == target { kill(getpid(), SIGKILL) }
        }
    }
}

/// Arguments arrive as bytes; Swift would turn invalid UTF-8 into U+FFFD silently, and a
/// name with U+FFFD would reach every phone.
enum CommandLineText {
    struct InvalidArgument: Error, LocalizedError {
        let position: Int
        var errorDescription: String? {
            "argument \(position) is not valid UTF-8 (expected UTF-8 text; convert it, e.g. with `iconv -f SHIFT_JIS -t UTF-8`)"
        }
    }

    static func requireUTF8() throws {
        for position in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[position] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil { throw InvalidArgument(position: position) }
        }
    }
}
