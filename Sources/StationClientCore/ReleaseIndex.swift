import Foundation
import StationManifest
import StationSignatures

/// What a phone reads of `manifest.json`: a view of the `Manifest` the curator's release writes
/// (StationManifest, the format's one home), with what a client does with it: the newest
/// version, the files each older version downloads, a delta's SQL checked against its signed
/// hashes, the splits after a version.
public struct ReleaseIndex: Sendable {
    /// A file as the manifest lists it: path, size, SHA-256.
    public typealias File = ReleasedFile
    /// One part of a delta's SQL, hashed on its own (a delta joined from two).
    public typealias SQLPart = DeltaSQLPart
    /// The delta from one older version.
    public typealias Delta = ReleasedDelta
    /// What a phone at `from` downloads.
    public typealias Download = ClientDownload
    /// One released version.
    public typealias Version = ReleasedVersion

    /// The manifest as decoded.
    public let manifest: Manifest

    /// The newest version of the folder.
    public var newest: Int { manifest.newest }
    /// Every version built in the folder, oldest first.
    public var versions: [Version] { manifest.versions }

    /// The manifest's bytes, decoded.
    public static func decode(_ data: Data) throws -> ReleaseIndex {
        do {
            return ReleaseIndex(manifest: try JSONDecoder().decode(Manifest.self, from: data))
        } catch {
            throw StationClientError.badManifest(path: Manifest.fileName, reason: "\(error)")
        }
    }

    /// The newest version's entry.
    var newestVersion: Version? { manifest.version(newest) }

    /// Version `number`'s entry.
    func version(_ number: Int) -> Version? { manifest.version(number) }
}

/// A station split as a release lists it: every user record of `old` is copied to `new`, at
/// data version `version`. An app moves its own tables' rows across it in its update hook.
public typealias ReleaseSplit = StationSplit

extension ReleasedDelta {
    /// The SQL of the downloaded `gzip`, inflated within the signed size and checked part by
    /// part against the signed hashes: what a phone and the web service run.
    ///
    /// - Throws: `StationClientError.hashDiffers` or `.sizeDiffers`; a gzip that does not
    ///   inflate within the signed size is removed (signed, and useless: never tried again).
    func verifiedSQL(inflating gzip: String) throws -> Data {
        let text: Data
        do {
            text = try GzipFile.inflate(gzip, limit: sqlBytes, name: file.path)
        } catch let error as StationClientError where error.category == .untrusted {
            try? FileManager.default.removeItem(atPath: gzip)
            throw error
        }
        var offset = 0
        for part in hashedSQLParts ?? [] {
            guard offset + part.sqlBytes <= text.count,
                  ManifestSignatures.sha256(text[offset..<(offset + part.sqlBytes)]) == part.sqlSha256 else {
                throw StationClientError.hashDiffers(path: file.path + " (its SQL)")
            }
            offset += part.sqlBytes
        }
        guard text.count == sqlBytes, offset == text.count else {
            throw StationClientError.sizeDiffers(path: file.path + " (its SQL)", actual: text.count, expected: sqlBytes)
        }
        return text
    }
}

extension ReleasedVersion {
    /// The splits after data version `version`, in the order recorded; refused when the
    /// manifest does not list them (format 5 or older), since a hook told "no splits" when
    /// there were some would lose the app's own credit.
    func splits(after version: Int, manifest: String = Manifest.fileName) throws -> [ReleaseSplit] {
        guard let splits else {
            throw StationClientError.badManifest(path: manifest, reason: "version \(self.version) lists no station splits (a manifest of format 5 or older); the release must be published again")
        }
        return splits.filter { $0.version > version }
    }
}
