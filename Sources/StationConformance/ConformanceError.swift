import Foundation

/// Why the kit could not run (not a scenario's failure, which its report holds).
public enum ConformanceError: Error, LocalizedError, Equatable {
    /// The kit's own releases or server could not be made.
    case kit(String)
    /// The client's command line lacks a placeholder the kit must fill.
    case missingPlaceholder(String, command: String)
    /// `--scenario` or `--group` named nothing the kit has.
    case unknownScenario(String, known: [String])
    /// The work folder exists and is not empty.
    case workFolderNotEmpty(String)

    public var errorDescription: String? {
        switch self {
        case .kit(let reason):
            return "the conformance kit could not prepare its releases: \(reason)"
        case let .missingPlaceholder(placeholder, command):
            return "--client '\(command)' has no \(placeholder): the kit puts the database's path in {db} and the release folder's URL in {url} (and the trusted key's .pub file in {key}); e.g. --client 'station-phone update --db {db} --from {url} --trust {key}'"
        case let .unknownScenario(name, known):
            return "no scenario or group '\(name)'; the kit has \(known.joined(separator: ", "))"
        case .workFolderNotEmpty(let path):
            return "\(path): the work folder must be new or empty (the kit writes its releases and client databases there); choose another --work-folder"
        }
    }
}
