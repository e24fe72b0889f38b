import Foundation
import StationSchema

/// A delta that cannot be written as asked.
public enum DeltaError: Error, LocalizedError, Equatable {
    case fromNewerThanTo(from: Int, to: Int)

    public var errorDescription: String? {
        switch self {
        case let .fromNewerThanTo(from, to):
            return "--from \(from) is newer than --to \(to) (expected from ≤ to)"
        }
    }
}
