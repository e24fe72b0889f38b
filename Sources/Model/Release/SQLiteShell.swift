import Foundation
import StationSupport

/// The real `sqlite3` command-line client: deltas are checked the way a phone runs them.
package enum SQLiteShell {
    package struct Result {
        package let status: Int32
        package let error: String
    }

    /// Runs `script` against `database` with `-bail`: the first failing statement stops
    /// the shell, and an open transaction is rolled back when it exits.
    package static func run(script: String, database: String) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", "-bail", database]
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: script))
        // A delta prints nothing; only the shell's error messages are read.
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        do {
            try process.run()
        } catch {
            throw VerificationError.noShell
        }
        let errorData = PipeReader.readAll(err.fileHandleForReading)
        process.waitUntilExit()
        if process.terminationStatus == 127 { throw VerificationError.noShell }
        return Result(
            status: process.terminationStatus, error: String(decoding: errorData, as: UTF8.self))
    }
}

package enum VerificationError: Error, LocalizedError {
    case noShell

    package var errorDescription: String? {
        "verify needs the sqlite3 command-line client: install it (apt-get install sqlite3), or release with --no-verify"
    }
}
