import Foundation
import Testing

/// Runs station-admin on a real pseudo-terminal: `script` gives it a TTY for stdin, stdout and
/// stderr and records what the terminal received.
struct Terminal {
    let scratch: Scratch

    /// What a terminal `columns` wide received while `arguments` ran on it (PAGER=cat unless `environment` or `unset` says otherwise).
    func run(_ arguments: [String], columns: Int = 120, environment: [String: String] = [:], unset: [String] = ["CI"]) throws -> String {
        let typescript = scratch.path("typescript-\(UUID().uuidString)")
        let quoted = ([CommandRunner.executable.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = "stty cols \(columns) rows 40; " + quoted.joined(separator: " ")
        // No pager unless a test asks for one: less would redraw what the test reads.
        let result = try CommandRunner.run(["-qfec", command, typescript], environment: ["PAGER": "cat"].merging(environment) { $1 }, unset: unset,
                                           program: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(result.status == 0, "\(command): \(result.stdout)")
        return try String(contentsOfFile: typescript, encoding: .utf8)
    }
}
