import Foundation
import StationManifest
import StationSignatures
import StationSupport

/// How `release --sign` and `resign` sign a folder's manifest: the keys (two during a rotation),
/// how long the manifest stays valid, and the clock.
///
/// Signing sets, inside the signed bytes, `dataset` (the lineage), `sequence` (the folder's last
/// plus one), `published_at` and `expires`, then writes `manifest.json.sig` (`ManifestSignatures`)
/// beside the manifest; both are published by the release's renames, the signatures first, so a
/// phone never reads a manifest whose signatures are not there yet.
public struct ManifestSigning: Sendable {
    /// How long a signed manifest is valid unless `--expires-in` says otherwise.
    public static let defaultValidity: TimeInterval = 30 * 86_400
    /// `verify` warns when less than this is left: time for the weekly `resign`.
    public static let renewalWarning: TimeInterval = 7 * 86_400

    /// The keys that sign: one, or the old and the new during a rotation.
    public var keys: [SigningKey]
    /// Seconds from `now` to `expires`.
    public var validity: TimeInterval
    /// The signing instant (tests set it to sign as of another day).
    public var now: Date

    /// Signing by `keys`, valid `validity` seconds from `now`.
    public init(keys: [SigningKey], validity: TimeInterval = defaultValidity, now: Date = Date()) {
        self.keys = keys
        self.validity = validity
        self.now = now
    }

    /// `manifest` with the signed fields set, after `previous` (the folder's manifest, if any).
    func stamped(_ manifest: Manifest, after previous: Manifest?) -> Manifest {
        var stamped = manifest
        stamped.dataset = manifest.lineage
        stamped.sequence = (previous?.sequence ?? 0) + 1
        stamped.publishedAt = SignedManifest.Fields.timestamp(now)
        stamped.expires = SignedManifest.Fields.timestamp(now.addingTimeInterval(validity))
        return stamped
    }

    /// `manifest.json.sig`'s bytes for the manifest `encoded`: each key's signature, and the
    /// signatures of the manifest it replaces (`previous`), so that a phone that read that one
    /// a moment before the rename still finds its signatures.
    func signatures(for encoded: Data, replacing previous: Data?, previousSignatures: Data?) throws -> Data {
        var entries = try keys.map { try $0.sign(manifest: encoded) }
        if let previous, let previousSignatures, let file = try? ManifestSignatures.decode(previousSignatures) {
            let previousHash = ManifestSignatures.sha256(previous)
            entries += file.signatures.filter { $0.manifestSha256 == previousHash }
        }
        return try ManifestSignatures(signatures: entries).encoded()
    }

    /// The longest `--expires-in`: a manifest valid longer would let a frozen mirror hold phones
    /// back for as long.
    public static let longestValidity: TimeInterval = 366 * 86_400

    /// Parses `--expires-in`: `30d`, `12h`, `90m`, or a number of days; nil for anything else,
    /// zero, or more than `longestValidity`.
    public static func validity(parsing text: String) -> TimeInterval? {
        let units: [Character: TimeInterval] = ["d": 86_400, "h": 3_600, "m": 60]
        let unit = text.last.flatMap { units[$0] }
        guard let count = Double(unit == nil ? text : String(text.dropLast())), count.isFinite, count > 0 else { return nil }
        let seconds = count * (unit ?? 86_400)
        return seconds <= longestValidity ? seconds : nil
    }
}
