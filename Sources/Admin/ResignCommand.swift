import ArgumentParser
import StationSignatures
import StationRelease

struct ResignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resign",
        abstract: "Sign a release folder's manifest again with a new expiry and sequence, without a new data version.",
        discussion: """
            Run it weekly (cron): a phone refuses a manifest past its expiry, so a mirror frozen on an old \
            release is noticed. Nothing but manifest.json and manifest.json.sig changes.
            Example: station-admin resign --out release --sign ~/.station-admin/signing-2026

            \(ExitStatus.standard)
            """)

    @Option(help: ArgumentHelp("The release folder.", valueName: "dir")) var out = "release"
    @OptionGroup var signingOptions: SigningOptions

    func run() throws {
        guard let signing = try signingOptions.signing() else {
            throw ValidationError("resign needs a key: --sign KEY-FILE, or $\(SigningOptions.environmentVariable).")
        }
        let manifest = try ManifestResigning.resign(folder: out, signing: signing)
        print("Signed \(out)/manifest.json (release \(manifest.newest)) with \(signing.keys.map(\.publicKey.id).joined(separator: ", ")): "
              + "sequence \(manifest.sequence ?? 0), expires \(manifest.expires ?? "-").")
    }
}
