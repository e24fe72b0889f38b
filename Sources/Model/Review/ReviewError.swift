import Foundation

/// A master `review` cannot show (a version it does not have is `NoSuchVersion`).
public enum ReviewError: Error, LocalizedError, Equatable {
    case noVersions

    public var errorDescription: String? {
        switch self {
        case .noVersions:
            return "the master has no version to review yet (import or apply something first)"
        }
    }
}
