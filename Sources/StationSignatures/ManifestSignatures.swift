import Crypto
import Foundation

/// `manifest.json.sig`: the signatures published beside a release folder's manifest.
///
/// ```json
/// {"format": 1, "signatures": [{"key_id": "3f2a9c41d07e8b56", "manifest_sha256": "…", "signature": "base64…"}]}
/// ```
///
/// Each signature is Ed25519 over `domain` followed by the manifest's exact bytes, so that a
/// signature made for a manifest can never be taken for one over anything else. Each names the
/// manifest it signs by SHA-256: while a release publishes, the file holds the new manifest's
/// signatures and the previous one's, so a phone that read either manifest finds its signatures.
public struct ManifestSignatures: Codable, Sendable, Equatable {
    /// The file's name, beside `manifest.json`.
    public static let fileName = "manifest.json.sig"
    /// What every signed message starts with.
    public static let domain = Data("station-admin manifest signature v1\n".utf8)
    /// The format this code writes and reads.
    public static let currentFormat = 1

    /// One signature of one manifest by one key.
    public struct Entry: Codable, Sendable, Equatable {
        /// The id of the key that signed (`TrustedKey.id`).
        public var keyID: String
        /// SHA-256 of the manifest's bytes it signs (hex).
        public var manifestSha256: String
        /// 64 bytes, base64.
        public var signature: String

        /// An entry; `signature` in base64.
        public init(keyID: String, manifestSha256: String, signature: String) {
            self.keyID = keyID
            self.manifestSha256 = manifestSha256
            self.signature = signature
        }

        enum CodingKeys: String, CodingKey { case keyID = "key_id", manifestSha256 = "manifest_sha256", signature }
    }

    /// The file's format (1).
    public var format: Int
    /// One signature per key: during a rotation, the old key's and the new one's.
    public var signatures: [Entry]

    /// Signatures of the current format.
    public init(signatures: [Entry]) {
        format = Self.currentFormat
        self.signatures = signatures
    }

    /// What is signed for `manifest`: `domain`, then the manifest's bytes.
    public static func message(for manifest: Data) -> Data { domain + manifest }

    /// The SHA-256 of `data`, as lowercase hex.
    public static func sha256(_ data: Data) -> String {
        Hex.string(SHA256.hash(data: data))
    }

    /// The file's bytes: one entry per line, sorted keys, so that a diff of two files reads.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// The signatures a file holds; garbled or truncated bytes throw.
    public static func decode(_ data: Data) throws(SignatureError) -> ManifestSignatures {
        guard let decoded = try? JSONDecoder().decode(ManifestSignatures.self, from: data) else {
            throw .unreadableSignatures("\(fileName) is not the JSON `station-admin release --sign` writes (truncated or garbled?)")
        }
        guard decoded.format == currentFormat else {
            throw .unreadableSignatures("\(fileName) is of format \(decoded.format); this code reads \(currentFormat)")
        }
        return decoded
    }
}

/// Why a signed manifest is not accepted, or a key not read.
public enum SignatureError: Error, LocalizedError, Equatable {
    case badKey(String)
    case unsigned
    case unreadableSignatures(String)
    /// No signature names this manifest's SHA-256: the manifest, or the signature file, was changed.
    case changed
    case noTrustedSignature(keyIDs: [String], trusted: [String])
    case badSignature(keyID: String)
    case unreadableManifest(String)
    case otherDataset(manifest: String?, expected: String)
    case rollback(sequence: Int, accepted: Int)
    case expired(expires: String, now: String)

    public var errorDescription: String? {
        switch self {
        case .badKey(let reason):
            return "not a key: \(reason)"
        case .unsigned:
            return "the folder is not signed (no \(ManifestSignatures.fileName)); sign it with `station-admin release --sign KEY` or `station-admin resign`"
        case .unreadableSignatures(let reason):
            return reason
        case .changed:
            return "no signature of this manifest: the manifest or \(ManifestSignatures.fileName) was changed after signing"
        case let .noTrustedSignature(keyIDs, trusted):
            let signers = keyIDs.isEmpty ? "no key" : keyIDs.joined(separator: ", ")
            return "no signature by a trusted key (signed by \(signers); trusted: \(trusted.joined(separator: ", ")))"
        case .badSignature(let keyID):
            return "the signature by key \(keyID) does not verify: the manifest or its signature was changed"
        case .unreadableManifest(let reason):
            return "the signed manifest cannot be read: \(reason)"
        case let .otherDataset(manifest, expected):
            return "the manifest is of dataset \(manifest ?? "(none)"), not \(expected)"
        case let .rollback(sequence, accepted):
            return "the manifest's sequence \(sequence) is below \(accepted), already accepted: an older manifest replayed"
        case let .expired(expires, now):
            return "the manifest expired at \(expires) (now \(now)); the curators renew it with `station-admin resign`"
        }
    }
}
