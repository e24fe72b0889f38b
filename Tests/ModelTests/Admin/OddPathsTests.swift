import Foundation
import StationCheck
import StationCurate
import StationDelta
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// Paths that are not what a command expects (a FIFO, a folder or a device named like a CSV
/// file, an output where nothing can be written, a read-only release folder, a lock held by a
/// reader) give a message that names the path and says what is wrong in words, never hang and
/// never print a raw system error.
@Suite struct OddPathsTests {
    let scratch = Scratch()

    /// station-admin under `timeout`: a command that hangs fails the test instead of the suite.
    func run(_ arguments: [String]) throws -> CommandRunner.Result {
        try CommandRunner.run(["20", CommandRunner.executable.path] + arguments, program: URL(fileURLWithPath: "/usr/bin/timeout"))
    }

    static let rawErrorWords = ["rawValue", "NSCocoaErrorDomain", "Error Domain", "The operation could not be completed"]

    func expectPlainWords(_ result: CommandRunner.Result, _ command: String) {
        #expect(result.status == 1, "\(command): \(result.stderr)")
        for words in Self.rawErrorWords { #expect(!result.stderr.contains(words), "\(command): \(result.stderr)") }
    }

    /// A command a message suggests is spelled by the program, quoted as a shell reads it back:
    /// a folder with a space and a quote in its name stays one argument when pasted.
    @Test func aSuggestedCommandIsQuotedForTheShell() throws {
        let hint = CommandHint("release", "--out", "/srv/my releases", "--sign", "KEY", "lat=…", "it's")
        #expect(hint.shellWords == ["release", "--out", "'/srv/my releases'", "--sign", "KEY", "lat=…", #"'it'\''s'"#])
        let database = try scratch.baseDatabase()
        let folder = scratch.path("my releases")
        let result = try run(["verify", "--db", database.path, "--out", folder])
        expectPlainWords(result, "verify")
        #expect(result.stderr.contains("(build one with `station-admin release --out '\(folder)'`)"), "\(result.stderr)")
        let quoted = try CommandRunner.run(["/bin/sh", "-c", "printf '%s\\n' " + hint.shellWords.dropFirst(2).joined(separator: " ")],
                                           program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(quoted.stdout == "/srv/my releases\n--sign\nKEY\nlat=…\nit's\n", "\(quoted.stdout)")
    }

    @Test func aFIFOAFolderOrADeviceNamedLikeACSVFileIsRefusedAtOnce() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let snapshot = try scratch.snapshot()
        try snapshot.remove("station.csv")
        let station = snapshot.file("station.csv")
        #expect(mkfifo(station, 0o644) == 0)
        for command in ["import", "diff"] {
            let result = try run([command, "--db", database.path, snapshot.path])
            #expect(result.stderr == "\(station): is a FIFO (named pipe), not a regular file\n", "\(command)")
            expectPlainWords(result, command)
        }
        try FileManager.default.removeItem(atPath: station)
        try FileManager.default.createDirectory(atPath: station, withIntermediateDirectories: false)
        let folder = try run(["import", "--db", database.path, snapshot.path])
        #expect(folder.stderr == "\(station): is a directory, not a regular file\n")
        for device in ["/dev/zero", "/dev/null"] {
            let result = try run(["diff", "--db", database.path, device])
            #expect(result.stderr == "\(device): is a device, not a regular file\n")
            expectPlainWords(result, device)
        }
        #expect(try database.settledSHA256() == before)
    }

    @Test func anOutputThatCannotBeWrittenNamesThePathAndTheReasonInWords() throws {
        let database = try scratch.baseDatabase()
        let cases: [([String], String)] = [
            (["release", "--out", "/proc/x"], "/proc/x: cannot write the release folder (cannot create the folder /proc/x: no such file or directory); check its permissions or choose another --out\n"),
            (["release", "--out", "/dev/null/x"], "/dev/null/x: cannot write the release folder (cannot create the folder /dev/null: not a directory); check its permissions or choose another --out\n"),
            (["review", "--output", "/dev/null/x/review.html"], "/dev/null/x/review.html: cannot write the review (cannot create the folder /dev/null: not a directory); choose another --output\n"),
            (["delta", "--from", "0", "--output", "/proc/d.sql"], "cannot write /proc/d.sql: no such file or directory (choose another --output)\n"),
        ]
        for (arguments, expected) in cases {
            let result = try run([arguments[0], "--db", database.path] + arguments.dropFirst())
            #expect(result.stderr == expected, "\(arguments)")
            expectPlainWords(result, arguments.joined(separator: " "))
        }
    }

    @Test func verifyReadsAReadOnlyReleaseFolder() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120101"], values: ["weight": "2"]))], memo: "v2")
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        try FileManager.default.removeItem(atPath: folder + "/.lock")
        // A read-only mount of the folder, as a CDN origin or a build artifact is.
        let mounted = scratch.path("mounted")
        try FileManager.default.createDirectory(atPath: mounted, withIntermediateDirectories: false)
        let bind = try CommandRunner.run(["--bind", folder, mounted], program: URL(fileURLWithPath: "/bin/mount"))
        try #require(bind.status == 0, "this test needs root and mount: \(bind.stderr)")
        defer { _ = try? CommandRunner.run([mounted], program: URL(fileURLWithPath: "/bin/umount")) }
        let readOnly = try CommandRunner.run(["-o", "remount,bind,ro", mounted], program: URL(fileURLWithPath: "/bin/mount"))
        try #require(readOnly.status == 0, "\(readOnly.stderr)")
        #expect(!FileManager.default.createFile(atPath: mounted + "/probe", contents: Data()))

        let verify = try run(["verify", "--db", database.path, "--out", mounted])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("delta, full download, app update: user records identical for versions 1…1"))
        // A release into it fails with the reason in words.
        let release = try run(["release", "--db", database.path, "--out", mounted])
        #expect(release.stderr == "\(mounted): cannot write the release folder (read-only file system); check its permissions or choose another --out\n")
    }

    @Test func aReleaseWaitingForAReaderDoesNotNameAStalePid() throws {
        let database = try scratch.baseDatabase()
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        // A pid that a dead writer might have left, and a reader holding the folder.
        try "999999\n".write(toFile: folder + "/.lock", atomically: false, encoding: .utf8)
        let reader = try ReleaseFolderLock.acquire(ReleaseFolder(path: folder), exclusive: false, timeout: 1)
        defer { withExtendedLifetime(reader) {} }
        let waited = Locked<[String]>([])
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.lockTimeout = 0.2
        options.onWait = { message in waited.withLock { $0.append(message) } }
        #expect(throws: ReleaseError.folderBusy(folder, holder: nil)) { try Publisher(database).release(options) }
        #expect(waited.withLock { $0 } == ["\(folder): waiting for another StationAdmin process that is using this release folder"])
        #expect(ReleaseError.folderBusy(folder, holder: nil).errorDescription
            == "\(folder): another StationAdmin process is using this release folder; try again when it has finished")
    }
}
