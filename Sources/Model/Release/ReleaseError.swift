import Foundation

public enum ReleaseError: Error, LocalizedError, Equatable {
    case noSuchVersion(requested: Int, newest: Int)
    case fromNewerThanTo(from: Int, to: Int)
    case missingFolder(String)
    case missingManifest(String)
    case corruptManifest(String, reason: String)
    case manifestDisagrees(String, file: String, reason: String)
    case verificationFailed([String])

    public var errorDescription: String? {
        switch self {
        case let .noSuchVersion(requested, newest):
            return "data version \(requested) does not exist (expected 0 to \(newest), the newest)"
        case let .fromNewerThanTo(from, to):
            return "--from \(from) is newer than --to \(to) (expected from ≤ to)"
        case let .missingFolder(path):
            return "\(path): no release folder here (build one with `station-admin release --out \(path)`)"
        case let .missingManifest(path):
            return "\(path): no manifest.json: not a release folder, or an interrupted one (build it again with `station-admin release`)"
        case let .corruptManifest(path, reason):
            return "\(path): not a valid manifest (\(reason)); rebuild the folder with `station-admin release`"
        case let .manifestDisagrees(path, file, reason):
            return "\(path): the manifest disagrees with \(file): \(reason); rebuild it with `station-admin release`"
        case let .verificationFailed(failures):
            return "verification failed:\n" + failures.map { "  " + $0 }.joined(separator: "\n")
        }
    }
}
