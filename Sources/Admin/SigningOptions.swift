import ArgumentParser
import Foundation
import StationRelease

/// `--sign KEY` (repeatable) and `--expires-in`, for `release` and `resign`.
struct SigningOptions: ParsableArguments {
    /// The private key used when no --sign is given.
    static let environmentVariable = "STATION_ADMIN_SIGNING_KEY"

    @Option(help: ArgumentHelp(
        "Sign the manifest with this private key (`keys generate`); repeat during a key rotation. Default: $\(SigningOptions.environmentVariable).",
        valueName: "key-file"))
    var sign: [String] = []
    @Option(help: ArgumentHelp("How long the signed manifest stays valid: 30d, 12h, 90m (default 30d).", valueName: "duration"))
    var expiresIn: String?

    func validate() throws {
        if let expiresIn, ManifestSigning.validity(parsing: expiresIn) == nil {
            throw ValidationError("--expires-in takes a duration up to 366d, such as 30d, 12h or 90m, not '\(expiresIn)'.")
        }
    }

    /// The keys given, or the environment's; nil when neither names one.
    func signing() throws -> ManifestSigning? {
        var paths = sign
        if paths.isEmpty, let fromEnvironment = ProcessInfo.processInfo.environment[Self.environmentVariable], !fromEnvironment.isEmpty {
            paths = [fromEnvironment]
        }
        guard !paths.isEmpty else { return nil }
        let validity = expiresIn.flatMap(ManifestSigning.validity(parsing:)) ?? ManifestSigning.defaultValidity
        return ManifestSigning(keys: try paths.map(SigningKey.init(contentsOfFile:)), validity: validity)
    }
}
