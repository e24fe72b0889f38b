import Foundation
import StationSupport

/// A data version the master does not have: one error, one sentence and one guard for every
/// command that takes a version (`log`, `check`, `review`, `suggest`, `revert`, `delta`,
/// `release`).
public struct NoSuchVersion: Error, LocalizedError, Equatable, Sendable {
    /// The version asked for.
    public let requested: Int
    /// The master's newest version.
    public let newest: Int
    /// The oldest version the command takes: 1 for a version's contents, 0 for a delta or a
    /// release (version 0 is a phone's empty database).
    public let lowest: Int

    /// The error for `requested`, on a master whose newest version is `newest`.
    public init(requested: Int, newest: Int, lowest: Int = 1) {
        self.requested = requested
        self.newest = newest
        self.lowest = lowest
    }

    /// Throws unless `version` is one the master has, from `lowest` to `newest`.
    package static func require(_ version: Int, newest: Int, lowest: Int = 1) throws(NoSuchVersion) {
        guard version >= lowest, version <= newest else { throw NoSuchVersion(requested: version, newest: newest, lowest: lowest) }
    }

    /// `data version 9 does not exist (expected 1 to 2; `versions` lists them)`.
    public var errorDescription: String? {
        if newest == 0 && lowest > 0 {
            return "data version \(requested) does not exist (the log is empty; import or apply something first)"
        }
        return "data version \(requested) does not exist (expected \(lowest) to \(newest); `\(CommandHint("versions"))` lists them)"
    }
}
