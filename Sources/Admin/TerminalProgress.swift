import ArgumentParser
import Foundation
import Glibc
import StationSupport
import Synchronization

/// `--quiet`, for the commands that show progress.
struct ProgressOptions: ParsableArguments {
    @Flag(name: .long, help: "Show no progress on a terminal (none is shown in a pipe, a file or CI anyway).")
    var quiet = false
}

/// A command whose long work shows progress on a terminal.
protocol ShowsProgress {
    var progress: ProgressOptions { get }
}

/// Draws the phase and a progress bar with rate and time left on stderr, in place, when
/// stderr is a terminal; clears it when the command ends. Nothing in a pipe, a file, CI
/// (`CI` set), a dumb terminal, or with `--quiet`.
final class TerminalProgress: Sendable {
    /// What the line shows and when it was drawn, changed by whichever thread reports progress.
    private struct Line {
        var phase = ""
        var total: Int?
        var completed = 0
        var phaseStart = Date()
        var lastDraw = Date.distantPast
        var drawn = false
    }

    private let line = Mutex(Line())
    private let output: Int32

    private init(output: Int32) { self.output = output }

    static func isWanted(quiet: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        !quiet && isatty(STDERR_FILENO) == 1 && environment["CI"] == nil && environment["TERM"] != "dumb"
    }

    /// Runs `body` with progress drawn, if wanted.
    static func around<T>(quiet: Bool, _ body: () throws -> T) throws -> T {
        guard isWanted(quiet: quiet) else { return try body() }
        let progress = TerminalProgress(output: STDERR_FILENO)
        defer { progress.clear() }
        let observer = ProgressObserver(begin: { progress.begin($0, $1) }, update: { progress.update($0) }, finish: { progress.clear() })
        return try Progress.$observer.withValue(observer) { try body() }
    }

    private func begin(_ name: String, _ total: Int?) {
        line.withLock { line in
            line.phase = name
            line.total = total
            line.completed = 0
            line.phaseStart = Date()
            draw(&line, force: true)
        }
    }

    private func update(_ completed: Int) {
        line.withLock { line in
            line.completed = completed
            draw(&line, force: false)
        }
    }

    /// Redraws at most ten times a second (a phase change at once).
    private func draw(_ state: inout Line, force: Bool) {
        let (phase, total, completed, phaseStart, lastDraw) = (state.phase, state.total, state.completed, state.phaseStart, state.lastDraw)
        let now = Date()
        guard force || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        state.lastDraw = now
        let elapsed = now.timeIntervalSince(phaseStart)
        let columns = Self.columns(output)
        // The line fits the terminal: the bar grows with it, and a long phase gives way first
        // (the counts and time left are what a reader waits for).
        var stats = ""
        if let total, total > 0 {
            let fraction = min(1, Double(completed) / Double(total))
            let width = min(max(columns / 4, 10), 40), filled = Int(fraction * Double(width))
            stats += " [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
            stats += String(format: " %3d%%  %@/%@", Int(fraction * 100), Self.count(completed), Self.count(total))
            if elapsed > 0.5, completed > 0 {
                let rate = Double(completed) / elapsed
                stats += "  \(Self.count(Int(rate)))/s"
                if fraction < 1 { stats += "  \(Self.duration(Double(total - completed) / rate)) left" }
            }
        } else {
            stats += " …"
            if elapsed >= 1 { stats += "  \(Self.duration(elapsed))" }
        }
        var line = phase + stats
        if line.count > columns - 1 {
            let room = columns - 2 - stats.count
            line = room >= 8 ? String(phase.prefix(room)) + "…" + stats : String(line.prefix(columns - 2)) + "…"
        }
        write("\r\u{1B}[K" + line)
        state.drawn = true
    }

    private func clear() {
        line.withLock { line in
            if line.drawn { write("\r\u{1B}[K") }
            line.drawn = false
        }
    }

    private func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(output, $0.baseAddress, $0.count) }
    }

    /// The terminal's width; `$COLUMNS` where the terminal does not say, 80 where neither does.
    private static func columns(_ descriptor: Int32) -> Int {
        var size = winsize()
        if ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 10 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 10 { return columns }
        return 80
    }

    private static func count(_ value: Int) -> String {
        value >= 10_000_000 ? "\(value / 1_000_000)M" : value >= 10_000 ? "\(value / 1_000)k" : String(value)
    }

    private static func duration(_ seconds: Double) -> String {
        seconds < 60 ? "\(Int(seconds.rounded(.up)))s" : "\(Int(seconds) / 60)m\(String(format: "%02d", Int(seconds) % 60))s"
    }
}
