import Foundation
import GRDB
import StationFiles
import StationManifest
import StationReleaseFolder
import StationSchema
import StationSQLite
import StationSupport

/// A release folder on disk: `manifest.json` and one folder per built version.
///
/// Publishing a version is a journaled sequence of renames (see `publish`): at any kill,
/// the folder holds either the old manifest with every file it names, or a publish intent
/// that the next release completes (`completeInterruptedPublish`).
package struct ReleaseFolder: Sendable {
    package let path: String

    package init(path: String) {
        self.path = path
    }

    package var manifestPath: String { (path as NSString).appendingPathComponent(Manifest.fileName) }
    package var intentPath: String { filePath(ReleaseLayout.publishIntentFileName) }

    /// The folder `--out` names, created if missing.
    ///
    /// - Throws: `ReleaseError.notAFolder` for an existing file, `.noFolderGiven` for an
    ///   empty path, `.cannotWrite` when it cannot be created.
    package static func prepare(_ path: String) throws -> ReleaseFolder {
        guard !path.isEmpty else { throw ReleaseError.noFolderGiven }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw ReleaseError.notAFolder(path) }
        } else {
            try ReleaseError.translating(path) { try FileChecks.makeFolder(path) }
        }
        if access(path, W_OK) != 0 { throw ReleaseError.cannotWrite(path, reason: FileError.systemWords(errno)) }
        // What a release writes here is signed and run by every phone: never a folder another
        // user owns or can write, nor one reached through a link.
        try ReleaseError.translating(path) { try OwnFiles.requireOwnFolder(path) }
        return ReleaseFolder(path: path)
    }

    /// The path of `relative` inside the folder.
    package func filePath(_ relative: String) -> String { (path as NSString).appendingPathComponent(relative) }

    /// The manifest, checked against the folder (`ManifestAudit`: every field, path and file,
    /// each version as deeply as `depth` says, and nothing unlisted).
    /// - Throws: `ReleaseError` when the folder or manifest is missing, corrupt or disagrees.
    package func manifest(depth: @escaping (Int) -> ManifestAudit.Depth = { _ in .hashes }) throws -> Manifest {
        try manifestFile(depth: depth).manifest
    }

    /// `manifest(depth:)`, with the bytes the manifest was decoded from (to sign or compare them).
    package func manifestFile(depth: @escaping (Int) -> ManifestAudit.Depth = { _ in .hashes }) throws -> ManifestFile {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ReleaseError.missingFolder(path)
        }
        guard let data = FileManager.default.contents(atPath: manifestPath) else { throw ReleaseError.missingManifest(path) }
        let manifest: Manifest
        do {
            manifest = try Manifest.decode(data)
        } catch {
            throw ReleaseError.manifest(.corrupt(manifestPath, reason: Self.describe(error)))
        }
        try requireAgreement(manifest, depth: depth)
        return ManifestFile(manifest: manifest, bytes: data)
    }

    /// - Throws: `ReleaseError.manifest(.disagrees)` with every problem `ManifestAudit` finds.
    package func requireAgreement(_ manifest: Manifest, depth: @escaping (Int) -> ManifestAudit.Depth) throws {
        do {
            try ManifestAudit(folder: path, depth: depth, databaseContents: Self.databaseContents).requireAgreement(manifest)
        } catch let error as ManifestError {
            throw ReleaseError.manifest(error)
        }
    }

    /// A client database's `user_version` and rows per master table, opened read-only: what
    /// `ManifestAudit` compares with the manifest's `rows` at `Depth.contents`.
    package static func databaseContents(_ path: String) throws -> (version: Int, rows: [String: Int]) {
        var configuration = SQLiteDefences.configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            var rows: [String: Int] = [:]
            for table in MasterTable.all where try db.tableExists(table.name) {
                rows[table.name] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.name)") ?? 0
            }
            return (try Int.fetchOne(db, sql: "PRAGMA user_version") ?? -1, rows)
        }
    }

    /// The manifest if there is one (checked), nil for a new folder: one that holds nothing but
    /// a lock file and what releases leave before they publish (a build folder, a temporary file).
    ///
    /// - Throws: `ReleaseError.notOurs` naming the first thing in a folder with no manifest.
    package func manifestFileIfPresent(depth: @escaping (Int) -> ManifestAudit.Depth = { _ in .hashes }) throws -> ManifestFile? {
        if FileManager.default.fileExists(atPath: manifestPath) { return try manifestFile(depth: depth) }
        try refuseStrangersInANewFolder()
        return nil
    }

    /// Refuses a folder with no manifest that holds anything but a lock file and what releases
    /// leave before they publish: it is someone else's, and nothing may be built in it.
    ///
    /// - Throws: `ReleaseError.notOurs` naming the first such thing.
    package func refuseStrangersInANewFolder() throws {
        guard !FileManager.default.fileExists(atPath: manifestPath) else { return }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
        if let stranger = names.first(where: { !ReleaseLayout.folderFiles.contains($0) && !ManifestAudit.isLeftover($0) }) {
            throw ReleaseError.notOurs(filePath(stranger))
        }
    }

    /// Refuses a folder that holds another master's releases. A manifest from before
    /// lineages existed is adopted by the first master that releases into it.
    package func requireLineage(_ lineage: String, of manifest: Manifest?) throws {
        if let theirs = manifest?.lineage, theirs != lineage {
            throw ReleaseError.otherLineage(path, folder: theirs, master: lineage)
        }
    }

    /// Refuses to replace a version folder that no manifest lists: it is not ours.
    package func requireOwnership(of version: Int, manifest: Manifest?) throws {
        let folder = filePath("\(version)")
        if FileManager.default.fileExists(atPath: folder) && manifest?.version(version) == nil {
            throw ReleaseError.notOurs(folder)
        }
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(key.stringValue) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\(context.debugDescription) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.dataCorrupted(let context):
            return "not JSON: \(context.underlyingError.map { "\($0.localizedDescription)" } ?? context.debugDescription)"
        default:
            return error.localizedDescription
        }
    }
}

/// What a release is about to publish, written before its first rename: from then on the
/// publish is decided, and any process that finds the intent completes it.
package struct PublishIntent: Codable {
    /// The build folder, relative to the release folder: `.building-PID-N`.
    package var building: String
    package var version: Int
    /// SHA-256 of the manifest staged in the build folder (`ReleaseFolder.stagedManifest`):
    /// what `manifest.json` holds once the publish is complete.
    package var manifestSha256: String?
    /// The manifest itself, in an intent written before manifests were staged (read only).
    package var manifest: Manifest?

    package init(building: String, version: Int, manifestSha256: String? = nil, manifest: Manifest? = nil) {
        self.building = building
        self.version = version
        self.manifestSha256 = manifestSha256
        self.manifest = manifest
    }

    private enum CodingKeys: String, CodingKey { case building, version, manifestSha256 = "manifest_sha256", manifest }

    /// Reads an intent of either form. An intent written before manifests were staged spells
    /// the embedded manifest's keys as Swift names them (`databaseGzip`): they are read as the
    /// manifest's snake_case keys (`database_gzip`), which leaves every other key as it is.
    package static func decode(_ data: Data) throws -> PublishIntent {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .custom { path in SnakeCaseKey(swiftName: path.last!.stringValue) }
        return try decoder.decode(PublishIntent.self, from: data)
    }

    private struct SnakeCaseKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(swiftName: String) {
            var snake = ""
            for character in swiftName {
                if character.isUppercase { snake += "_" + character.lowercased() } else { snake.append(character) }
            }
            stringValue = snake
        }

        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// The steps of a release, in order; `ReleaseOptions.onStep` is called after each.
public enum ReleaseStep: String, CaseIterable, Sendable {
    /// The client tables are filled (inside the master's read transaction).
    case clientTablesBuilt = "client-tables-built"
    /// The deltas are written (still inside the read transaction).
    case deltasWritten = "deltas-written"
    /// Verification passed (or was skipped); nothing is published yet.
    case verified
    case intentWritten = "intent-written"
    /// A version released before moved into the build folder (re-releases only).
    case oldVersionMovedAside = "old-version-moved-aside"
    case newVersionMovedIn = "new-version-moved-in"
    case manifestWritten = "manifest-written"
}

extension ReleaseFolder {
    /// The manifest a publish puts in place, written in its build folder before the intent:
    /// the intent names it by hash, so the manifest is encoded once.
    package static func stagedManifest(in building: String) -> String { "\(building)/\(Manifest.fileName)" }

    /// Publishes the version built in `building` with the folder's new `manifest`: stages the
    /// manifest, writes the intent, swaps the version folder in by renames, renames the
    /// manifest into place, then forgets the intent and the build folder. A `manifest` that
    /// appends a version to `previous` (the folder's, as read) is encoded from its bytes.
    package func publish(version: Int, from building: String, manifest: Manifest, extending previous: ManifestFile? = nil,
                         signing: ManifestSigning? = nil, onStep: (ReleaseStep) throws -> Void) throws {
        let intent = try ReleaseError.translating(path) {
            let encoded = try previous.map { try manifest.encoded(extending: $0) } ?? manifest.encoded()
            if let signing {
                let signatures = try signing.signatures(for: encoded, replacing: previous?.bytes,
                                                        previousSignatures: FileManager.default.contents(atPath: signaturesPath))
                try AtomicFile.write(signatures, to: filePath(Self.stagedSignatures(in: building)))
            }
            try AtomicFile.write(encoded, to: filePath(Self.stagedManifest(in: building)))
            let intent = PublishIntent(building: building, version: version, manifestSha256: FileDigest.sha256(encoded))
            try AtomicFile.write(try JSONEncoder().encode(intent), to: intentPath)
            return intent
        }
        try onStep(.intentWritten)
        try complete(intent, onStep: onStep)
    }

    /// Completes a publish that a killed process left half done, if there is one.
    /// - Returns: the version it published, or nil.
    @discardableResult
    package func completeInterruptedPublish() throws -> Int? {
        guard let data = FileManager.default.contents(atPath: intentPath) else { return nil }
        guard let intent = try? PublishIntent.decode(data) else {
            throw ReleaseError.manifest(.corrupt(intentPath, reason: "an unreadable publish intent; remove it and release again"))
        }
        try complete(intent) { _ in }
        return intent.version
    }

    /// Each step checks what is already done, so it can be repeated after a kill at any point.
    private func complete(_ intent: PublishIntent, onStep: (ReleaseStep) throws -> Void) throws {
        let staged = filePath("\(intent.building)/\(intent.version)")
        let target = filePath("\(intent.version)")
        try ReleaseError.translating(path) {
            if FileManager.default.fileExists(atPath: staged) {
                if FileManager.default.fileExists(atPath: target) {
                    let displaced = filePath("\(intent.building)/displaced-\(intent.version)")
                    try? FileManager.default.removeItem(atPath: displaced)
                    try AtomicFile.moveIntoPlace(target, displaced, replacing: false)
                    try onStep(.oldVersionMovedAside)
                }
                try AtomicFile.moveIntoPlace(staged, target, replacing: false)
                try onStep(.newVersionMovedIn)
            } else if !FileManager.default.fileExists(atPath: target) {
                throw ReleaseError.manifest(.disagrees(intentPath, [ManifestProblem(
                    field: "building", file: "\(intent.version)",
                    reason: "an interrupted release lost its build folder; remove \(ReleaseLayout.publishIntentFileName) and release again")]))
            }
            try placeManifest(of: intent)
            try onStep(.manifestWritten)
            try FileManager.default.removeItem(atPath: intentPath)
            try? FileManager.default.removeItem(atPath: filePath(intent.building))
        }
    }

    /// Renames the staged signatures, then the staged manifest, into place; a publish resumed
    /// after a rename finds what it staged already there.
    private func placeManifest(of intent: PublishIntent) throws {
        if let manifest = intent.manifest {
            try AtomicFile.write(try manifest.encoded(), to: manifestPath)
            return
        }
        let stagedSignatures = filePath(Self.stagedSignatures(in: intent.building))
        if FileManager.default.fileExists(atPath: stagedSignatures) {
            try AtomicFile.moveIntoPlace(stagedSignatures, signaturesPath, replacing: true)
        }
        let staged = filePath(Self.stagedManifest(in: intent.building))
        if FileManager.default.fileExists(atPath: staged) {
            try AtomicFile.moveIntoPlace(staged, manifestPath, replacing: true)
        } else if (try? FileDigest.sha256(ofFile: manifestPath)) != intent.manifestSha256 {
            throw ReleaseError.manifest(.disagrees(intentPath, [ManifestProblem(
                field: "manifest_sha256", file: Manifest.fileName,
                reason: "an interrupted release lost the manifest it staged; remove \(ReleaseLayout.publishIntentFileName) and release again")]))
        }
    }

    /// Removes what dead processes left: build folders and temporary files. Call it only
    /// while holding the folder's exclusive lock (every live build holds it), after
    /// `completeInterruptedPublish`.
    /// - Returns: the names removed.
    @discardableResult
    package func removeLeftovers() throws -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let leftovers = names.filter { $0.hasPrefix(ReleaseLayout.buildingPrefix) || (AtomicFile.isTemporaryName($0)) }.sorted()
        for name in leftovers { try? FileManager.default.removeItem(atPath: filePath(name)) }
        return leftovers
    }
}
