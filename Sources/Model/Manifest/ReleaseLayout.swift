import StationSignatures

/// Where each file of a release folder lives: the one place that names them.
package enum ReleaseLayout {
    package static func database(_ version: Int) -> String { "\(version)/stations.sqlite" }
    package static func databaseGzip(_ version: Int) -> String { database(version) + ".gz" }
    package static func delta(from: Int, to version: Int) -> String { "\(version)/delta-from-\(from).sql.gz" }
    package static func carryOver(_ version: Int) -> String { "\(version)/\(carryOverFileName)" }
    /// The SQL that carries a phone's records into a version's database (`CarryOverScript`).
    package static let carryOverFileName = "carry-over.sql"
    /// The file `ReleaseFolderLock` locks: one writer of a folder at a time.
    package static let lockFileName = ".lock"
    /// What a release writes before it renames anything (`PublishIntent`).
    package static let publishIntentFileName = ".publishing.json"
    /// The start of the name of a folder a release builds a version in, beside the versions.
    package static let buildingPrefix = ".building-"
    /// Files of the folder itself that no version lists.
    package static let folderFiles: Set<String> = [Manifest.fileName, ManifestSignatures.fileName, lockFileName]
}
