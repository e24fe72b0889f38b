import Foundation

/// A file StationAdmin could not create, write, read back or rename, in words a curator can
/// act on (`cannot write /srv/out/.delta.sql.tmp-…: No space left on device`), with the
/// system's error number so that a full disk is told apart.
public struct FileError: Error, LocalizedError, Equatable {
    public let message: String
    /// `errno` at the failure, or nil when the system did not fail (a file cut short).
    public let code: Int32?

    /// `cannot <action>: <the system's reason>`, then `(<hint>)` if any.
    init(cannot action: String, code: Int32? = errno, reason: String? = nil, hint: String? = nil) {
        let why = reason ?? code.map { String(cString: strerror($0)) } ?? "unknown reason"
        message = "cannot \(action): \(why)" + (hint.map { " (\($0))" } ?? "")
        self.code = code
    }

    public var errorDescription: String? { message }
    var isDiskFull: Bool { code == ENOSPC }
}
