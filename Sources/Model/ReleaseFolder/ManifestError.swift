import Foundation
import StationManifest
import StationSupport

/// A manifest that cannot be read, or that its folder contradicts.
public enum ManifestError: Error, Equatable, LocalizedError {
    /// Not JSON, or not a manifest's fields.
    case corrupt(String, reason: String)
    /// Read, and the folder disagrees with it: every problem `ManifestAudit` found.
    case disagrees(String, [ManifestProblem])

    public var errorDescription: String? {
        switch self {
        case let .corrupt(path, reason):
            return "\(path): not a valid manifest (\(reason)); rebuild the folder with `\(CommandHint("release"))`"
        case let .disagrees(path, problems):
            return "\(path): the manifest disagrees with the release folder; nothing was signed (restore what changed from a backup of the folder, "
                + "or release into a new folder with `\(CommandHint("release", "--out", "DIR"))`):\n"
                + problems.map { "  \($0)" }.joined(separator: "\n")
        }
    }
}
