import Foundation
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import Testing

/// Progress on a real pseudo-terminal (`script` runs the command with stdout and stderr on a
/// TTY and records what it drew), and none in a pipe, with --quiet, or in CI.
@Suite struct ProgressTests {
    let scratch = Scratch()

    private func onTerminal(_ arguments: [String], environment: [String: String] = [:], unset: [String] = ["CI"]) throws -> String {
        try Terminal(scratch: scratch).run(arguments, environment: environment, unset: unset)
    }

    private static let redraw = "\r\u{1B}[K"

    @Test func anImportOnATerminalShowsItsPhasesAndClearsThemBeforeTheReport() throws {
        let db = scratch.path("m.sqlite")
        _ = try MasterDatabase.create(at: db)
        let drawn = try onTerminal(["import", "--db", db, Fixtures.ekidata2021, "--show", "1"], environment: ["TERM": "xterm"])
        // Each file is read and compared with the master in one pass, its total counted first.
        #expect(drawn.contains(Self.redraw + "comparing station20210312free.csv ["))
        #expect(drawn.contains("/10k"), "the total is counted before reading: \(drawn.prefix(400))")
        #expect(drawn.contains(Self.redraw + "comparing join20210312.csv ["))
        #expect(drawn.contains(Self.redraw + "writing version 1"))
        // Cleared before the report, so that no result shares a line with a bar.
        #expect(drawn.contains(Self.redraw + "Committed version 1: "))
        #expect(!drawn.contains("…Committed"))
    }

    @Test func aReleaseAndAVerifyShowTheirStepsOnATerminal() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["weight": "2"]))])
        let release = try onTerminal(["release", "--db", database.path, "--out", scratch.path("release")], environment: ["TERM": "xterm"])
        #expect(release.contains(Self.redraw + "checking version 2"))
        // The deltas are written on a second connection, beside the database's indexes and gzip.
        #expect(release.contains(Self.redraw + "indexing and compressing the database, writing deltas beside it"))
        #expect(release.contains(Self.redraw + "verifying how phones at versions 1…1 reach version 2, with sqlite3 ["))
        #expect(release.contains(Self.redraw + "Release 2 in "))
        let verify = try onTerminal(["verify", "--db", database.path, "--out", scratch.path("release")], environment: ["TERM": "xterm"])
        #expect(verify.contains(Self.redraw + "verifying how phones at versions 1…1 reach version 2, with sqlite3 ["))
    }

    @Test func nothingIsDrawnInAPipeWithQuietOrInCI() throws {
        let db = scratch.path("m.sqlite")
        _ = try MasterDatabase.create(at: db)
        let piped = try CommandRunner.run(["import", "--db", db, Fixtures.base.path], unset: ["CI"])
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("\u{1B}") && !piped.stderr.contains("\r") && !piped.stdout.contains("\u{1B}"))

        let quiet = try onTerminal(["diff", "--db", db, Fixtures.base.path, "--quiet"], environment: ["TERM": "xterm"])
        #expect(!quiet.contains("\u{1B}[K"))
        let ci = try onTerminal(["diff", "--db", db, Fixtures.base.path], environment: ["TERM": "xterm", "CI": "true"], unset: [])
        #expect(!ci.contains("\u{1B}[K"))
        let dumb = try onTerminal(["diff", "--db", db, Fixtures.base.path], environment: ["TERM": "dumb"])
        #expect(!dumb.contains("\u{1B}[K"))
    }

    /// The line fits the terminal's width: a wide one gets the whole phase and a longer bar,
    /// a narrow one a shortened phase with the counts kept.
    @Test func theProgressLineFitsTheTerminalsWidth() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["weight": "2"]))])
        _ = try CommandRunner.run(["release", "--db", database.path, "--out", scratch.path("release")])
        func longestLine(columns: Int) throws -> String {
            let drawn = try Terminal(scratch: scratch).run(["verify", "--db", database.path, "--out", scratch.path("release")],
                                                           columns: columns, environment: ["TERM": "xterm"])
            return drawn.components(separatedBy: Self.redraw).filter { $0.hasPrefix("verifying") }
                .map { $0.components(separatedBy: "\r")[0].components(separatedBy: "\n")[0] }.max { $0.count < $1.count } ?? ""
        }
        let wide = try longestLine(columns: 160)
        #expect(wide.hasPrefix("verifying how phones at versions 1…1 reach version 2, with sqlite3 ["), "\(wide)")
        #expect(wide.count > 80 && wide.count < 160, "\(wide.count): \(wide)")
        let bar = wide.split(separator: "[").last?.split(separator: "]").first ?? ""
        #expect(bar.count == 40 && bar.allSatisfy { $0 == "#" || $0 == "-" }, "the bar grows with the terminal: \(wide)")
        let narrow = try longestLine(columns: 60)
        #expect(narrow.count <= 59 && narrow.contains("…") && narrow.contains("/1"), "\(narrow.count): \(narrow)")
    }
}
