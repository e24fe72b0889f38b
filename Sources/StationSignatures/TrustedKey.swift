import Crypto
import Foundation

/// An Ed25519 public key a phone trusts, as its `.pub` line spells it:
/// `ed25519 3f2a9c41d07e8b56 MCowBQYDK2VwAyEA…` (the algorithm, the key id, the key in base64).
///
/// The key id is the first 8 bytes of the SHA-256 of the raw 32-byte key, in hex: short enough
/// to read in a log, and what each signature names, so a verifier tries only the key it names.
public struct TrustedKey: Sendable, Equatable {
    /// The first word of a `.pub` line.
    public static let algorithm = "ed25519"

    /// The key id: 16 hex digits.
    public let id: String
    /// The raw public key, 32 bytes.
    public let rawRepresentation: Data

    /// The key of `rawRepresentation` (32 bytes), its id computed.
    public init(rawRepresentation: Data) throws(SignatureError) {
        guard (try? Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation)) != nil else {
            throw .badKey("not a 32-byte Ed25519 public key")
        }
        self.rawRepresentation = rawRepresentation
        id = Self.keyID(of: rawRepresentation)
    }

    /// The key a `.pub` line holds; the id in the line must be the key's.
    public init(publicKeyLine line: String) throws(SignatureError) {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        guard words.count >= 3, words[0] == Self.algorithm, let raw = Data(base64Encoded: words[2]) else {
            throw .badKey("expected one line `ed25519 KEYID BASE64`, as `station-admin keys generate` writes it")
        }
        try self.init(rawRepresentation: raw)
        guard words[1] == id else { throw .badKey("the key id \(words[1]) is not this key's (\(id))") }
    }

    /// The key of a `.pub` file of one key; a file of several is refused (never silently its
    /// first): read those with `all(contentsOfFile:)`.
    public init(contentsOfFile path: String) throws(SignatureError) {
        let keys = try Self.all(contentsOfFile: path)
        guard keys.count == 1 else {
            throw .badKey("\(path): \(keys.count) keys, where one was expected; a rotation's file is read with TrustedKey.all(contentsOfFile:)")
        }
        self = keys[0]
    }

    /// Every key of a `.pub` file, a line each (during a rotation, the old and the new); blank
    /// lines and lines starting with `#` are skipped. A line that is not a key refuses the file.
    public static func all(contentsOfFile path: String) throws(SignatureError) -> [TrustedKey] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw .badKey("\(path): cannot be read")
        }
        var keys: [TrustedKey] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let words = line.trimmingCharacters(in: .whitespaces)
            if words.isEmpty || words.hasPrefix("#") { continue }
            do {
                keys.append(try TrustedKey(publicKeyLine: words))
            } catch .badKey(let reason) {
                throw .badKey("\(path):\(number + 1): \(reason)")
            }
        }
        guard !keys.isEmpty else { throw .badKey("\(path): no key; expected a line `ed25519 KEYID BASE64`") }
        return keys
    }

    /// The `.pub` line: what an app embeds, and what `keys show` prints.
    public var publicKeyLine: String { "\(Self.algorithm) \(id) \(rawRepresentation.base64EncodedString())" }

    /// Whether `signature` is this key's over `message`.
    public func isValidSignature(_ signature: Data, for message: Data) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    /// The first 8 bytes of the key's SHA-256, as hex.
    public static func keyID(of rawRepresentation: Data) -> String {
        Hex.string(SHA256.hash(data: rawRepresentation).prefix(8))
    }
}
