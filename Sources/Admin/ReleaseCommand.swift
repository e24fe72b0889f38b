import ArgumentParser
import StationCheck
import StationLog
import StationManifest
import StationRelease

struct ReleaseCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "release",
        abstract: "Build the client database of a version, and the gzip SQL delta from every older version.",
        discussion: """
            Example: station-admin release --out release --sign ~/.station-admin/signing-2026     writes release/N/… and release/manifest.json

            \(ExitStatus.standard)
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var progress: ProgressOptions
    @Option(help: ArgumentHelp("The release folder.", valueName: "dir")) var out = "release"
    @Option(help: "The data version to build (default: the newest; 0 is the empty schema).") var version: Int?
    @Flag(help: "Skip applying every delta with sqlite3 (see `verify`).") var noVerify = false
    @Flag(help: "Release even while `check` finds an error that no waiver accepts.") var skipChecks = false
    @OptionGroup var signingOptions: SigningOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let version, version < 0 { throw ValidationError("--version must be 0 or more.") }
    }

    func run() throws {
        var options = ReleaseOptions(outputFolder: out, version: version, verify: !noVerify)
        options.onWait = { Console.error($0) }
        options.skipChecks = skipChecks
        options.onStep = FaultInjection.releaseStep()
        options.signing = try signingOptions.signing()
        let result = try Publisher(global.openDatabase()).release(options)
        if let version = result.completedInterruptedVersion {
            Console.error("Completed the interrupted release of version \(version) first.")
        }
        if !result.removedLeftovers.isEmpty {
            Console.error("Removed what interrupted releases left: \(result.removedLeftovers.joined(separator: ", ")).")
        }
        if let reason = result.publishedNotRecorded {
            Console.error("Note: version \(result.released.version) is published, but the master could not record it (\(reason)); the next release reads it from the folder.")
        }
        if skipChecks { Console.error("Checks skipped (--skip-checks): this release was not checked.") }
        if output.json { return try Console.printJSON(result.released) }
        let released = result.released
        print("Release \(released.version) in \(out)/\(released.version):")
        var table = TextTable(alignments: [.left, .left], indent: "  ")
        table.append(["stations.sqlite", "\(released.database.bytes.formattedBytes) (gzip \(released.databaseGzip.bytes.formattedBytes))"])
        table.append(["rows", released.rows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")])
        table.append(["content hash", released.contentHash])
        for delta in released.deltas {
            table.append(["delta-from-\(delta.from).sql.gz", "\(delta.file.bytes.formattedBytes) gzip, \(delta.sqlBytes.formattedBytes) SQL, "
                + "\(plural(delta.statements.values.flatMap(\.values).reduce(0, +) + delta.duplicates, "statement")), \(delta.duplicates) DUPLICATE"
                + (delta.via.map { " (joined through \($0): its delta-from-\(delta.from), then delta-from-\($0))" } ?? "")])
        }
        if let carryOver = released.carryOver {
            table.append([ReleaseLayout.carryOverFileName, "\(carryOver.bytes.formattedBytes): what a phone runs after a full download or an app update"])
        }
        table.print()
        let full = released.downloads.filter { $0.kind == .full }.map { String($0.from) }
        if !full.isEmpty {
            print("  versions \(full.joined(separator: ", ")): the full download (a delta would be larger)")
        }
        if let signing = options.signing {
            print("Signed by \(signing.keys.map(\.publicKey.id).joined(separator: ", ")): sequence \(result.manifest.sequence ?? 0), "
                  + "expires \(result.manifest.expires ?? "-") (renew it with station-admin resign before then).")
        }
        if let checks = result.checks {
            let waivedErrors = checks.count(.error, waived: true)
            print("Checked: no error" + (waivedErrors > 0 ? " (\(waivedErrors) waived)" : "")
                + ", \(plural(checks.count(.warning, waived: false), "warning")) (station-admin check --version \(released.version)).")
        }
        if let verification = result.verification {
            print(verification.passed.isEmpty
                ? "No older version to verify: phones at version 0 (new installs) download the database."
                : "Verified with sqlite3: \(plural(verification.deltasPassed, "delta")) applied and checked; "
                    + verification.pathsPassed.joined(separator: "; ") + ".")
        }
    }
}

extension Int {
    var formattedBytes: String {
        if self < 10_000 { return "\(self) B" }
        if self < 10_000_000 { return "\(self / 1_000) kB" }
        return "\(self / 1_000_000) MB"
    }
}
