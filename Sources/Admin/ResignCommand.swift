import ArgumentParser
import StationSignatures
import StationRelease
import StationSchema

struct ResignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resign",
        abstract: "Sign a release folder's manifest again with a new expiry and sequence, without a new data version.",
        discussion: """
            Run it weekly (cron): a phone refuses a manifest past its expiry, so a mirror frozen on an old \
            release is noticed. Nothing but manifest.json and manifest.json.sig changes.
            It signs only what was signed before: the current manifest must carry a valid signature by the \
            signing key (or a --trust key), every file must match it, and with --db every entry must be what \
            that master recorded publishing; an unsigned folder is signed the first time only with --db.
            Example: station-admin resign --out release --sign ~/.station-admin/signing-2026

            \(ExitStatus.standard)
            """)

    @Option(help: ArgumentHelp("The release folder.", valueName: "dir")) var out = "release"
    @OptionGroup var signingOptions: SigningOptions
    @Option(help: ArgumentHelp("Also accept the current manifest signed by this public key (a .pub file: the key being retired); repeatable.",
                               valueName: "pub-file"))
    var trust: [String] = []
    @Option(help: ArgumentHelp("Check every version against what this master recorded publishing.", valueName: "path"))
    var db: String?

    func run() throws {
        guard let signing = try signingOptions.signing() else {
            throw ValidationError("resign needs a key: --sign KEY-FILE, or $\(SigningOptions.environmentVariable).")
        }
        let master = try db.map { try MasterDatabase.open(at: $0) }
        let manifest = try ManifestResigning.resign(folder: out, signing: signing, trust: try trust.map(TrustedKey.init(contentsOfFile:)), master: master)
        print("Signed \(out)/manifest.json (release \(manifest.newest)) with \(signing.keys.map(\.publicKey.id).joined(separator: ", ")): "
              + "sequence \(manifest.sequence ?? 0), expires \(manifest.expires ?? "-").")
    }
}
