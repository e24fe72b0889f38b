import Foundation
import StationSchema

/// A delta that cannot be written as asked.
public enum DeltaError: Error, LocalizedError, Equatable {
    case noSuchVersion(requested: Int, newest: Int)
    case fromNewerThanTo(from: Int, to: Int)

    public var errorDescription: String? {
        switch self {
        case let .noSuchVersion(requested, newest):
            return MissingVersion.message(requested: requested, newest: newest, lowest: 0)
        case let .fromNewerThanTo(from, to):
            return "--from \(from) is newer than --to \(to) (expected from ≤ to)"
        }
    }
}
