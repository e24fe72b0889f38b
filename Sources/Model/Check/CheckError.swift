import Foundation
import StationSchema

/// What `check` refuses.
public enum CheckError: Error, LocalizedError, Equatable {
    case noSuchVersion(requested: Int, newest: Int)

    public var errorDescription: String? {
        switch self {
        case let .noSuchVersion(requested, newest):
            return MissingVersion.message(requested: requested, newest: newest)
        }
    }
}
