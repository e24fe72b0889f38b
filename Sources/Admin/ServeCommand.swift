import ArgumentParser
import Foundation
import StationLog
import StationRelease
import StationServe
import StationSupport

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a release folder to phones over HTTP: /update?from=V, /manifest.json and the files it lists.",
        discussion: """
            Phones ask GET /update?from=V with their data version and get the delta, a redirect to the full \
            database (with the carry-over script in X-Carry-Over), 204 when up to date, or 400. A release \
            published into the folder is served at once. Stops on Ctrl-C or SIGTERM after the requests in flight.
            Examples:
              station-admin serve --out release --port 8080 &
              curl -s localhost:8080/update?from=1 --compressed | head -n 3     the SQL a phone at version 1 receives

            \(ExitStatus.readOnly)
            """)

    @Option(help: ArgumentHelp("The release folder.", valueName: "dir")) var out = "release"
    @Option(help: "The address to listen on (another interface than loopback only when you mean it).") var host = "127.0.0.1"
    @Option(help: "The port (0: any free port, printed at start).") var port = 8080
    @Flag(help: "No access-log line per request on stderr (refusals are still logged, with their reason).") var quiet = false
    @Option(help: ArgumentHelp("The most connections open at once; at the limit the one idle the longest is closed.", valueName: "n"))
    var maxConnections = ReleaseServer.defaultMaxConnections
    @Option(help: ArgumentHelp("Seconds that requests in flight may take to finish after Ctrl-C or SIGTERM.", valueName: "seconds"))
    var shutdownDeadline = 10

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port must be from 0 to 65535.") }
        if maxConnections < 1 { throw ValidationError("--max-connections must be 1 or more.") }
        if shutdownDeadline < 0 { throw ValidationError("--shutdown-deadline must be 0 or more seconds.") }
    }

    func run() throws {
        let server = ReleaseServer(folder: out, host: host, port: port, logsRequests: !quiet,
                                   maxConnections: maxConnections, shutdownDeadline: .seconds(shutdownDeadline))
        let host = self.host, out = self.out, limit = server.effectiveMaxConnections()
        let stopping = Self.watchStopSignals(deadline: shutdownDeadline, out: out)
        defer { withExtendedLifetime(stopping) {} }
        try SynchronousWait.result {
            try await server.run(onRunning: { port in
                Console.error("Serving \(out) on http://\(host):\(port) (GET /update?from=V, /manifest.json; "
                    + "at most \(limit) connections; Ctrl-C stops)")
            }, onMessage: { Console.error($0) })
        }
        Console.error("Stopped serving \(out).")
    }

    /// A last resort beside the server's own deadline: a request stuck where cancellation cannot
    /// reach it must not keep the process alive, so 2 s after the deadline the process exits.
    static func watchStopSignals(deadline: Int, out: String) -> [DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { signalNumber in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(deadline + 2)) {
                    Console.error("Stopped serving \(out): requests still in flight after \(deadline) s were cut.")
                    Foundation.exit(0)
                }
            }
            source.resume()
            return source
        }
    }
}
