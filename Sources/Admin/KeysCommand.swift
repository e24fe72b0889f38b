import ArgumentParser
import StationSignatures
import StationRelease

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Make and show the Ed25519 keys that sign release manifests.",
        discussion: """
            Examples:
              station-admin keys generate --out ~/.station-admin/signing-2027   a new key, outside the repository
              station-admin release --out release --sign ~/.station-admin/signing-2027   the folder signed with it

            \(ExitStatus.standard)
            """,
        subcommands: [Generate.self, Show.self])

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Write a new private key to FILE (mode 0600) and its public key to FILE.pub.",
            discussion: """
                Example: station-admin keys generate --out ~/.station-admin/signing-2027

                FILE.pub is one line, `ed25519 KEYID BASE64`: what an app pins, and what `verify --trust` takes. \
                Keep FILE secret and backed up; neither file is ever overwritten.

                \(ExitStatus.standard)
                """)

        @Option(help: ArgumentHelp("The private key file to write; FILE.pub gets the public key.", valueName: "file")) var out: String

        func run() throws {
            let key = try SigningKey.generate(to: out)
            print(key.publicKey.publicKeyLine)
            Console.error("Wrote the private key to \(out) (mode 0600) and the public key to \(out).pub (key id \(key.publicKey.id)).")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print the public key line of a private key file (or of a .pub file).",
            discussion: """
                Example: station-admin keys show ~/.station-admin/signing-2026

                \(ExitStatus.readOnly)
                """)

        @Argument(help: ArgumentHelp("The private key file, or its .pub.", valueName: "file")) var file: String

        func run() throws {
            if file.hasSuffix(".pub") {
                print(try TrustedKey(contentsOfFile: file).publicKeyLine)
            } else {
                print(try SigningKey(contentsOfFile: file).publicKey.publicKeyLine)
            }
        }
    }
}
