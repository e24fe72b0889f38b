import Foundation
import StationConformance
import Testing

/// `conformance --client`'s placeholders are filled in one pass and each value reaches the
/// client as one word, whatever it holds: a placeholder, quotes, `$()`, backticks, a newline.
@Suite struct ClientCommandTests {
    let scratch = Scratch()

    /// The words `/bin/sh` hands the client for `line`, one per line of a NUL-separated dump.
    private func words(of line: String) throws -> [String] {
        let out = scratch.path("words-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", line + " > " + ClientCommand.quotedForShell(out)]
        process.currentDirectoryURL = scratch.url
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        return data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    static let hostilePaths = [
        "v{key};touch PWNED;#",
        "it's {url} here",
        "$(touch PWNED)",
        "`touch PWNED`",
        "two\nlines {db}",
        "\"quoted\" {nothing} {",
    ]

    @Test(arguments: hostilePaths)
    func eachValueIsOneWordAndAPlaceholderInsideItStaysLiteral(_ hostile: String) throws {
        let command = try ClientCommand("printf '%s\\0' {db} {url} {key}")
        let database = scratch.path(hostile) + "/phone.sqlite", url = "http://127.0.0.1:1/" + hostile + "/", key = hostile + ".pub"
        let line = command.line(database: database, url: url, key: key)
        #expect(try words(of: line) == [database, url, key], "\(line)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("PWNED")), "the shell ran what a path held: \(line)")
    }

    /// A brace that opens no placeholder is the template's own text.
    @Test func aBraceThatIsNoPlaceholderIsKept() throws {
        let command = try ClientCommand("printf '%s\\0' '{' {db} '{url' {url}}")
        #expect(try words(of: command.line(database: "d", url: "u", key: "k")) == ["{", "d", "{url", "u}"])
    }
}
