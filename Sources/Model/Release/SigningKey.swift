import Crypto
import Foundation
import StationSignatures
import StationSupport

/// A curator's Ed25519 private key (swift-crypto's `Curve25519.Signing`), as `keys
/// generate` writes it: `FILE`, mode 0600, one line `ed25519-private KEYID BASE64`, and beside it
/// `FILE.pub`, the public key's line (`TrustedKey.publicKeyLine`) that apps embed. Like ssh, a
/// private key file that others can read is refused.
public struct SigningKey: Sendable {
    /// The first word of a private key file.
    static let privateAlgorithm = "ed25519-private"

    /// Where it was read from.
    public let path: String
    /// The 32-byte seed: swift-crypto's key type is not `Sendable`, its bytes are.
    private let seed: Data
    /// Its public half: the key id, the `.pub` line.
    public let publicKey: TrustedKey

    /// Makes a new key pair: `path` (mode 0600) and `path.pub`; refuses to overwrite either.
    @discardableResult
    public static func generate(to path: String) throws -> SigningKey {
        let publicPath = path + ".pub"
        for existing in [path, publicPath] where FileManager.default.fileExists(atPath: existing) {
            throw SigningKeyError.exists(existing)
        }
        let privateKey = Curve25519.Signing.PrivateKey()
        let publicKey = try TrustedKey(rawRepresentation: privateKey.publicKey.rawRepresentation)
        let line = "\(privateAlgorithm) \(publicKey.id) \(privateKey.rawRepresentation.base64EncodedString())\n"
        try writeNew(Data(line.utf8), to: path, mode: 0o600)
        do {
            try writeNew(Data((publicKey.publicKeyLine + "\n").utf8), to: publicPath, mode: 0o644)
        } catch {
            unlink(path)
            throw error
        }
        return SigningKey(path: path, privateKey: privateKey, publicKey: publicKey)
    }

    /// Reads the private key at `path`, refusing a file that group or others can read.
    public init(contentsOfFile path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else { throw SigningKeyError.unreadable(path, String(cString: strerror(errno))) }
        guard status.st_mode & 0o077 == 0 else { throw SigningKeyError.readableByOthers(path, mode: Int(status.st_mode & 0o777)) }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw SigningKeyError.unreadable(path, "not a text file")
        }
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard words.count == 3, words[0] == Self.privateAlgorithm, let raw = Data(base64Encoded: words[2]),
              let privateKey = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw) else {
            throw SigningKeyError.notAKey(path)
        }
        let publicKey = try TrustedKey(rawRepresentation: privateKey.publicKey.rawRepresentation)
        guard publicKey.id == words[1] else { throw SigningKeyError.notAKey(path) }
        self.init(path: path, privateKey: privateKey, publicKey: publicKey)
    }

    /// A key from its 32-byte seed (the golden test vectors use a fixed one).
    public init(rawRepresentation: Data, path: String = "(in memory)") throws {
        let privateKey = try Curve25519.Signing.PrivateKey(rawRepresentation: rawRepresentation)
        self.init(path: path, privateKey: privateKey, publicKey: try TrustedKey(rawRepresentation: privateKey.publicKey.rawRepresentation))
    }

    private init(path: String, privateKey: Curve25519.Signing.PrivateKey, publicKey: TrustedKey) {
        self.path = path
        seed = privateKey.rawRepresentation
        self.publicKey = publicKey
    }

    /// This key's signature of `manifest`, its exact bytes.
    public func sign(manifest: Data) throws -> ManifestSignatures.Entry {
        let privateKey = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        let signature = try privateKey.signature(for: ManifestSignatures.message(for: manifest))
        return .init(keyID: publicKey.id, manifestSha256: ManifestSignatures.sha256(manifest), signature: signature.base64EncodedString())
    }

    /// Creates `path` with `mode`, failing if it exists (`O_EXCL`), and syncs it.
    private static func writeNew(_ data: Data, to path: String, mode: mode_t) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw errno == EEXIST ? SigningKeyError.exists(path) : SigningKeyError.unreadable(path, String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(descriptor) == 0 else {
            unlink(path)
            throw SigningKeyError.unreadable(path, "cannot be written: \(String(cString: strerror(errno)))")
        }
    }
}

/// Why a signing key cannot be made or used.
public enum SigningKeyError: Error, LocalizedError, Equatable {
    case exists(String)
    case readableByOthers(String, mode: Int)
    case unreadable(String, String)
    case notAKey(String)

    public var errorDescription: String? {
        switch self {
        case .exists(let path):
            return "\(path): already exists; a key is never overwritten (choose another --out, or remove it if you mean to)"
        case let .readableByOthers(path, mode):
            return "\(path): a private key that others can read (mode \(String(mode, radix: 8))); run `chmod 600 \(path)` and keep it secret"
        case let .unreadable(path, reason):
            return "\(path): \(reason)"
        case .notAKey(let path):
            return "\(path): not a private key of `\(CommandHint("keys", "generate"))` (the .pub file is the public half; --sign takes the other)"
        }
    }
}
