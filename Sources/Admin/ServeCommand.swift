import ArgumentParser
import Foundation
import StationLog
import StationRelease
import StationServe
import Synchronization

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a release folder to phones over HTTP: /update?from=V, /manifest.json and the files it lists.",
        discussion: """
            Phones ask GET /update?from=V with their data version and get the delta, a redirect to the full \
            database (with the carry-over script in X-Carry-Over), 204 when up to date, or 400. A release \
            published into the folder is served at once. Stops on Ctrl-C or SIGTERM after the requests in flight.
            Example: station-admin serve --out release --port 8080, then curl -s localhost:8080/update?from=1 --compressed | head

            \(ExitStatus.readOnly)
            """)

    @Option(help: ArgumentHelp("The release folder.", valueName: "dir")) var out = "release"
    @Option(help: "The address to listen on (another interface than loopback only when you mean it).") var host = "127.0.0.1"
    @Option(help: "The port (0: any free port, printed at start).") var port = 8080
    @Flag(help: "No access-log line per request on stderr.") var quiet = false

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port must be from 0 to 65535.") }
    }

    func run() throws {
        let server = ReleaseServer(folder: out, host: host, port: port, logsRequests: !quiet)
        let host = self.host, out = self.out
        let failure = Mutex<Error?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await server.run(onRunning: { port in
                    Console.error("Serving \(out) on http://\(host):\(port) (GET /update?from=V, /manifest.json; Ctrl-C stops)")
                }, onMessage: { Console.error($0) })
            } catch {
                failure.withLock { $0 = error }
            }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        Console.error("Stopped serving \(out).")
    }
}
