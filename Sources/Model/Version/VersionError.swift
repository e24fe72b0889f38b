import Foundation

/// A version the write path refuses to write.
public enum VersionError: Error, LocalizedError, Equatable {
    /// A station split that `SplitRules` refuses.
    case splitRefused(old: Int64, new: Int64, reason: String)

    public var errorDescription: String? {
        switch self {
        case let .splitRefused(old, new, reason):
            return "split \(old) → \(new) refused: \(reason)"
        }
    }
}
