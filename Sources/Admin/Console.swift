import CStandardStreams
import Foundation

/// What the tool writes to the terminal: text lines escaped, errors on stderr, stdout flushed
/// and checked at the end; JSON in Console+JSON.swift.
enum Console {
    /// One line of text output: control characters in names are shown escaped, so that
    /// data cannot forge extra lines or redraw the terminal (JSON keeps the exact value).
    static func line(_ text: String) {
        print(text.escapingControlCharacters)
    }

    /// One line of tab-separated fields: each field escaped, the tabs between them kept.
    static func fields(_ fields: [String]) {
        print(fields.map(\.escapingControlCharacters).joined(separator: "\t"))
    }

    /// A message on stderr. When stderr itself cannot be written (a full disk, a closed pipe),
    /// there is nowhere to say so: the command exits 1 at once, never 0 and never by a crash.
    static func error(_ message: String) {
        let bytes = Array((message + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { exit(1) }
            written += count
        }
    }

    /// Flushes what `print` buffered on stdout; a write that failed (a full disk behind a
    /// redirection, a closed pipe) is an error, not a success with a truncated file. A command
    /// that wrote to the master did so before its output: its status says what it committed.
    static func finishStandardOutput() -> Bool {
        let failure = station_admin_finish_stdout()
        if failure == 0 { return true }
        let reason = String(cString: strerror(failure))
        error("Error: cannot write standard output (\(reason)); what the command wrote to the master stands (station-admin status shows the version).")
        return false
    }
}
