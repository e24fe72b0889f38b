import ArgumentParser
import StationSchema

struct TransferLineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer-line", abstract: "Pass a whole line to another company; station codes stay.",
        discussion: """
            Example: station-admin transfer-line 99636 --company 203 --memo "北神線 to 神戸高速鉄道"

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The line_cd.") var line: Int64
    @Option(help: "The company_cd that takes it over.") var company: Int64
    @OptionGroup var curation: CurationOptions

    func run() throws { try curation.run([.transferLine(line: line, toCompany: company)], global) }
}
