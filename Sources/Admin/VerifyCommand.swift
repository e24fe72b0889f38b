import ArgumentParser
import StationCheck
import StationRelease
import StationSignatures

struct VerifyCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Prove with sqlite3 that every older version reaches each release by delta, full download and app update with the same data and user records.",
        discussion: """
            Example: station-admin verify --out release

            \(ExitStatus.findings("every check of the release folder passed"))
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var progress: ProgressOptions
    @Option(help: ArgumentHelp("The release folder.", valueName: "dir")) var out = "release"
    @Option(help: ArgumentHelp("Require the manifest signed by this public key (a .pub file); repeatable.", valueName: "pub-file"))
    var trust: [String] = []
    @OptionGroup var output: OutputOptions

    func run() throws {
        let keys = try trust.map(TrustedKey.init(contentsOfFile:))
        let report = try Publisher(global.openDatabase()).verifyRelease(folder: out, trust: keys)
        if output.json {
            try Console.printJSON(report)
            if !report.failures.isEmpty { throw ExitCode.failure }
            return
        }
        for line in report.passed { print("ok  \(line)") }
        for line in report.warnings { Console.error("warning: \(line)") }
        if !report.failures.isEmpty {
            for line in report.failures { Console.error("FAIL  \(line)") }
            throw ExitCode.failure
        }
        print("Verified: \(plural(report.deltasPassed, "delta")) applied and checked; every older version reaches the newest by each published path with the same user records.")
    }
}
