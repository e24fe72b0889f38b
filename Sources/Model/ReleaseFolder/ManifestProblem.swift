import StationManifest
import StationSupport

/// One way a manifest disagrees with its release folder, naming the field and the file:
/// `versions[3].downloads[from 1].path "2/stations.sqlite.gz": … (expected 3/delta-from-1.sql.gz)`.
public struct ManifestProblem: Sendable, Equatable, CustomStringConvertible {
    /// The manifest's field (`newest`, `versions[3].rows.stations`), or `file` or `folder` for
    /// what the release folder holds that the manifest does not list.
    public var field: String
    /// The file or folder concerned, relative to the release folder, if any.
    public var file: String?
    /// What disagrees, and what was expected.
    public var reason: String

    package init(field: String, file: String?, reason: String) {
        self.field = field
        self.file = file
        self.reason = reason
    }

    /// `versions[3].database "3/stations.sqlite": …`
    public var description: String { "\(field)\(file.map { " \($0.quotedForMessage())" } ?? ""): \(reason)" }
}
