import ArgumentParser
import StationSchema

struct ConnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect", abstract: "Add connections along a chain of stations on a line.",
        discussion: """
            Examples (a station 9920609 between 筒井 and 青森, its connections after it is added):
              station-admin add stations station_cd=9920609 station_name=新駅 line_cd=99206 pref_cd=2 lat=40.8205 lon=140.757 e_status=0
              station-admin disconnect 99206 9920608 1120120
              station-admin connect 99206 9920608 9920609 1120120

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The line_cd.") var line: Int64
    @Argument(help: "Two or more station codes, in order.") var stations: [Int64]
    @OptionGroup var curation: CurationOptions

    func run() throws { try curation.run([.connect(line: line, stations: stations)], global) }
}

struct DisconnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect", abstract: "Remove connections along a chain of stations on a line.",
        discussion: """
            Example: station-admin disconnect 99206 9920607 1120102

            \(ExitStatus.standard)
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The line_cd.") var line: Int64
    @Argument(help: "Two or more station codes, in order.") var stations: [Int64]
    @OptionGroup var curation: CurationOptions

    func run() throws { try curation.run([.disconnect(line: line, stations: stations)], global) }
}
