import Foundation
import StationManifest
import StationSignatures
import StationSupport

// A release folder's signatures: where they are, and what `verify` finds of them.

extension ReleaseFolder {
    /// The folder's `manifest.json.sig`.
    package var signaturesPath: String { filePath(ManifestSignatures.fileName) }

    /// Whether the folder's manifest is signed: a release into it must be signed too.
    package var isSigned: Bool { FileManager.default.fileExists(atPath: signaturesPath) }

    /// The signatures staged beside the manifest a publish puts in place.
    package static func stagedSignatures(in building: String) -> String { "\(building)/\(ManifestSignatures.fileName)" }
}

extension ReleaseFolder {
    /// What `verify` says of the folder's signatures: with `trust`, whether a trusted key signed
    /// this manifest, of `dataset`, unexpired at `now` (a warning when less than
    /// `ManifestSigning.renewalWarning` is left); without, whether the folder is signed at all.
    package func signatureFindings(trust: [TrustedKey], dataset: String?, now: Date) -> (passed: [String], failures: [String], warnings: [String]) {
        let signatures = FileManager.default.contents(atPath: signaturesPath)
        guard !trust.isEmpty else {
            guard let signatures else {
                return (["manifest unsigned (signing is opt-in: release --sign KEY; an app that pins keys refuses it)"], [], [])
            }
            let keys = (try? ManifestSignatures.decode(signatures)).map { Set($0.signatures.map(\.keyID)).sorted().joined(separator: ", ") }
            return (["manifest signed by \(keys ?? "(unreadable signatures)"); not checked (give --trust FILE.pub)"], [], [])
        }
        do {
            guard let manifest = FileManager.default.contents(atPath: manifestPath) else { throw SignatureError.unreadableManifest(manifestPath) }
            let signed = try ManifestTrust(keys: trust, dataset: dataset).check(manifest: manifest, signatures: signatures, now: now)
            let left = signed.fields.expiresDate.timeIntervalSince(now)
            let days = String(format: "%.1f", left / 86_400)
            var warnings: [String] = []
            if left < ManifestSigning.renewalWarning {
                warnings.append("the manifest expires at \(signed.fields.expires), in \(days) days: renew it with `\(CommandHint("resign", "--out", path, "--sign", "KEY"))`")
            }
            return (["manifest signed by trusted key \(signed.keyIDs.joined(separator: ", ")); sequence \(signed.fields.sequence), "
                     + "published \(signed.fields.publishedAt), expires \(signed.fields.expires) (in \(days) days)"], [], warnings)
        } catch {
            return ([], ["\(signaturesPath): \(error.localizedDescription)"], [])
        }
    }
}
