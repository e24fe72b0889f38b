import Foundation
import GRDB
import StationSignatures

/// The release an app ships in its bundle, for the app-update path: the version's database,
/// its carry-over script, and the release folder's `manifest.json`, from which the update's hook
/// learns the splits and the script's SHA-256 is checked.
///
/// ```swift
/// let bundle = BundledRelease(database: Bundle.main.url(forResource: "stations", withExtension: "sqlite")!,
///                             carryOver: Bundle.main.url(forResource: "carry-over", withExtension: "sql")!,
///                             manifest: Bundle.main.url(forResource: "manifest", withExtension: "json"))
/// try await updater.installBundled(bundle, appData: moveVisitsAcrossSplits)
/// ```
public struct BundledRelease: Sendable {
    /// `N/stations.sqlite` of the release folder.
    public var database: URL
    /// `N/carry-over.sql`.
    public var carryOver: URL
    /// `manifest.json`; nil: the hook is told no splits, and the script is not checked.
    public var manifest: URL?

    /// The bundled release of these three files.
    public init(database: URL, carryOver: URL, manifest: URL? = nil) {
        self.database = database
        self.carryOver = carryOver
        self.manifest = manifest
    }

    /// What an install needs of the bundle.
    struct Contents {
        let version: Int
        let databaseBytes: Int
        let carryOver: String
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
        guard let script = FileManager.default.contents(atPath: carryOver.path) else {
            throw StationClientError.database(path: carryOver.path, cause: POSIXError(.ENOENT))
        }
        var splits: [ReleaseSplit] = []
        if let manifest {
            guard let bytes = FileManager.default.contents(atPath: manifest.path) else {
                throw StationClientError.badManifest(path: manifest.path, reason: "cannot be read")
            }
            guard let entry = try ReleaseIndex.decode(bytes).version(version) else {
                throw StationClientError.badManifest(path: manifest.path, reason: "no entry for version \(version), the bundled database's")
            }
            if let listed = entry.carryOver, listed.sha256 != ManifestSignatures.sha256(script) {
                throw StationClientError.hashDiffers(path: carryOver.path)
            }
            splits = entry.splits ?? []
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: database.path)[.size] as? Int) ?? 0
        return Contents(version: version, databaseBytes: bytes, carryOver: String(decoding: script, as: UTF8.self), splits: splits)
    }
}

extension UpdatePlan {
    /// This plan, when the manifest and the database are still as it was made from.
    func confirmed(against now: UpdatePlan) throws -> UpdatePlan {
        guard manifestSHA256 == now.manifestSHA256 else { throw StationClientError.planOutdated(reason: "the manifest changed since") }
        guard from == now.from else { throw StationClientError.planOutdated(reason: "the database is at version \(now.from), the plan starts at \(from)") }
        // The same manifest and version give the same plan: this one is it, or it with the full download preferred.
        return self
    }
}
