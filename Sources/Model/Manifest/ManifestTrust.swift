import Foundation
import StationSignatures

/// What a phone checks before it downloads anything a manifest lists (docs/clients.md, "How a
/// phone updates"): a signature by a pinned key verifies over the manifest's exact bytes; the manifest
/// is of the app's dataset; its sequence is not below the highest the phone accepted (no
/// rollback); it has not expired by the later of the phone's clock and the newest `published_at`
/// the phone has seen (a clock set back does not revive an expired manifest).
///
/// ```swift
/// let trust = ManifestTrust(keys: [try TrustedKey(publicKeyLine: pinned)], dataset: "…")
/// let signed = try trust.check(manifest: manifestBytes, signatures: signatureBytes, now: Date())
/// ```
public struct ManifestTrust: Sendable {
    /// The pinned keys: during a rotation, the old and the new.
    public var keys: [TrustedKey]
    /// The app's dataset (the master's lineage); nil accepts any (the curator's `verify`).
    public var dataset: String?
    /// The highest sequence accepted so far; a lower one is a rollback.
    public var acceptedSequence: Int
    /// The newest `published_at` accepted so far: the floor of "now".
    public var newestPublishedAt: Date?

    /// A trust of `keys`, with nothing accepted yet.
    public init(keys: [TrustedKey], dataset: String? = nil, acceptedSequence: Int = 0, newestPublishedAt: Date? = nil) {
        self.keys = keys
        self.dataset = dataset
        self.acceptedSequence = acceptedSequence
        self.newestPublishedAt = newestPublishedAt
    }

    /// Checks `manifest` (its exact bytes) against `signatures` (`manifest.json.sig`'s bytes, nil
    /// when the folder has none).
    /// - Throws: `SignatureError` naming what failed; nothing is to be downloaded or run then.
    public func check(manifest: Data, signatures: Data?, now: Date) throws(SignatureError) -> SignedManifest {
        guard let signatures else { throw .unsigned }
        let file = try ManifestSignatures.decode(signatures)
        let hash = ManifestSignatures.sha256(manifest)
        let ofThisManifest = file.signatures.filter { $0.manifestSha256 == hash }
        guard !ofThisManifest.isEmpty else { throw .changed }
        let trusted = Set(keys.map(\.id))
        let candidates = ofThisManifest.filter { trusted.contains($0.keyID) }
        guard !candidates.isEmpty else {
            throw .noTrustedSignature(keyIDs: Array(Set(ofThisManifest.map(\.keyID))).sorted(), trusted: keys.map(\.id).sorted())
        }
        let message = ManifestSignatures.message(for: manifest)
        let verified = candidates.filter { entry in
            guard let signature = Data(base64Encoded: entry.signature), let key = keys.first(where: { $0.id == entry.keyID }) else { return false }
            return key.isValidSignature(signature, for: message)
        }
        guard !verified.isEmpty else { throw .badSignature(keyID: candidates[0].keyID) }
        let fields = try SignedManifest.Fields.decode(manifest)
        if let dataset, fields.dataset != dataset { throw .otherDataset(manifest: fields.dataset, expected: dataset) }
        guard fields.sequence >= acceptedSequence else { throw .rollback(sequence: fields.sequence, accepted: acceptedSequence) }
        let floor = max(now, newestPublishedAt ?? now)
        guard fields.expiresDate > floor else {
            throw .expired(expires: fields.expires, now: SignedManifest.Fields.timestamp(floor))
        }
        return SignedManifest(fields: fields, keyIDs: Array(Set(verified.map(\.keyID))).sorted())
    }

    /// This trust after accepting `signed`: its sequence and `published_at` become the floors.
    public func accepting(_ signed: SignedManifest) -> ManifestTrust {
        var next = self
        next.acceptedSequence = max(acceptedSequence, signed.fields.sequence)
        next.newestPublishedAt = max(newestPublishedAt ?? signed.fields.publishedAtDate, signed.fields.publishedAtDate)
        return next
    }
}

/// A manifest whose signature verified, with the fields signing adds.
public struct SignedManifest: Sendable, Equatable {
    /// The fields a phone checks; the rest of the manifest (versions, files) it reads as usual.
    public struct Fields: Sendable, Equatable {
        /// The dataset (the master's lineage) the manifest is of.
        public let dataset: String?
        /// Grows by one with every signing: a phone refuses a lower one.
        public let sequence: Int
        /// UTC, `2026-11-27T03:10:00Z`.
        public let publishedAt: String
        /// After this instant, UTC, the manifest is refused.
        public let expires: String
        /// The newest version the manifest lists.
        public let newest: Int
        /// `publishedAt` as an instant.
        public let publishedAtDate: Date
        /// `expires` as an instant.
        public let expiresDate: Date

        /// The fields of `manifest`, read as `Manifest` decodes them (the format's one home).
        static func decode(_ manifest: Data) throws(SignatureError) -> Fields {
            let decoded: Manifest
            do {
                decoded = try Manifest.decode(manifest)
            } catch {
                throw .unreadableManifest("not a manifest (\(error))")
            }
            guard let sequence = decoded.sequence, let publishedAt = decoded.publishedAt, let expires = decoded.expires else {
                throw .unreadableManifest("a signed manifest has `sequence`, `published_at` and `expires`")
            }
            guard let published = date(publishedAt), let expiry = date(expires) else {
                throw .unreadableManifest("`published_at` and `expires` are UTC timestamps like 2026-11-27T03:10:00Z (read \(publishedAt) and \(expires))")
            }
            return Fields(dataset: decoded.dataset, sequence: sequence, publishedAt: publishedAt, expires: expires, newest: decoded.newest,
                          publishedAtDate: published, expiresDate: expiry)
        }

        /// `2026-11-27T03:10:00Z`, the form signed manifests carry.
        public static func timestamp(_ date: Date) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: date)
        }

        /// The instant a `2026-11-27T03:10:00Z` timestamp names; nil for any other text.
        public static func timestamp(from text: String) -> Date? { date(text) }

        static func date(_ text: String) -> Date? {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.date(from: text)
        }
    }

    /// The fields signing adds, as verified.
    public let fields: Fields
    /// The trusted keys whose signatures verified.
    public let keyIDs: [String]
}
