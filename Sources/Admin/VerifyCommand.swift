import ArgumentParser
import Model

struct VerifyCommand: ParsableCommand, ShowsProgress {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Apply every delta of a release folder with sqlite3 and check content, user records and guards.",
        discussion: "Example: station-admin verify --out release")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var progress: ProgressOptions
    @Option(help: ArgumentHelp("The release folder.", valueName: "dir")) var out = "release"
    @OptionGroup var output: OutputOptions

    func run() throws {
        let report = try global.openDatabase().verifyRelease(folder: out)
        if output.json {
            try Console.printJSON(report)
            if !report.failures.isEmpty { throw ExitCode.failure }
            return
        }
        for line in report.passed { print("ok  \(line)") }
        if !report.failures.isEmpty {
            for line in report.failures { Console.error("FAIL  \(line)") }
            throw ExitCode.failure
        }
        print("\(plural(report.passed.count, "delta")) verified.")
    }
}
