import Crypto
import Foundation

/// SHA-256 of files and bytes, as lowercase hex.
public enum FileDigest {
    /// The SHA-256 of the file at `path` (hex).
    public static func sha256(ofFile path: String) throws -> String {
        hex(SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// The SHA-256 of `data` (hex).
    public static func sha256(_ data: some DataProtocol) -> String {
        hex(SHA256.hash(data: data))
    }

    package static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}
