import Foundation
import GRDB
import StationManifest
import StationSignatures

/// The release an app ships in its bundle, for the app-update path: the version's database and
/// the release folder's `manifest.json`, from which the install learns the splits after the app's
/// version (the app's hook is told them, and `completions` is copied across them).
///
/// Bundle exactly these two files of the release folder: `N/stations.sqlite` and `manifest.json`.
///
/// ```swift
/// let bundle = BundledRelease(database: Bundle.main.url(forResource: "stations", withExtension: "sqlite")!,
///                             manifest: Bundle.main.url(forResource: "manifest", withExtension: "json")!)
/// try await updater.installBundled(bundle, appData: moveVisitsAcrossSplits)
/// ```
public struct BundledRelease: Sendable {
    /// `N/stations.sqlite` of the release folder. It is only read (attached), never copied.
    public var database: URL
    /// `manifest.json` of the same folder: it must have an entry for the database's version,
    /// with its splits and the database's size.
    public var manifest: URL

    /// The bundled release of these two files.
    public init(database: URL, manifest: URL) {
        self.database = database
        self.manifest = manifest
    }

    /// What an install needs of the bundle.
    struct Contents {
        let version: Int
        let splits: [ReleaseSplit]
    }

    func read() throws -> Contents {
        var configuration = Configuration()
        configuration.readonly = true
        let version: Int
        do {
            let queue = try DatabaseQueue(path: database.path, configuration: configuration)
            defer { try? queue.close() }
            version = try queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
        } catch {
            throw StationClientError.database(path: database.path, cause: error)
        }
        guard let bytes = FileManager.default.contents(atPath: manifest.path) else {
            throw StationClientError.badManifest(path: manifest.path, reason: "cannot be read")
        }
        guard let entry = try ReleaseIndex.decode(bytes).version(version) else {
            throw StationClientError.badManifest(path: manifest.path, reason: "no entry for version \(version), the bundled database's")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: database.path)[.size] as? Int) ?? -1
        guard size == entry.database.bytes else {
            throw StationClientError.sizeDiffers(path: database.path, actual: size, expected: entry.database.bytes)
        }
        return Contents(version: version, splits: try entry.splits(after: 0, manifest: manifest.path))
    }
}

extension UpdatePlan {
    /// This plan, when the manifest and the database are still as it was made from.
    /// A plan made before another process brought the database to the newest is carried out as
    /// the up-to-date plan it is now.
    func confirmed(against now: UpdatePlan) throws -> UpdatePlan {
        if now.method == .upToDate && now.to == to { return now }
        guard manifestSHA256 == now.manifestSHA256 else { throw StationClientError.planOutdated(reason: "the manifest changed since") }
        guard from == now.from else { throw StationClientError.planOutdated(reason: "the database is at version \(now.from), the plan starts at \(from)") }
        // The same manifest and version give the same plan: this one is it, or it with the full download preferred.
        return self
    }
}
