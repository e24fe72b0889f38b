import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The request context of `serve`: the client's address, for the access log, and its
/// connection, whose event loop a streamed file waits for (`ReleaseResponder`).
struct ServeContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: String
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress ?? "-"
        channel = source.channel
    }
}

/// Serves a release folder over HTTP (`station-admin serve`), on Hummingbird 2.
///
/// For example, `try await ReleaseServer(folder: "release").run()` answers
/// `GET /update?from=3` on 127.0.0.1:8080 until SIGINT or SIGTERM, after which it stops
/// accepting, finishes the requests in flight and returns. See `ReleaseResponder` for what it
/// answers.
public struct ReleaseServer: Sendable {
    /// The release folder served.
    public var folder: String
    /// A phone fleet reaches `serve` through a CDN or nginx with a few hundred connections; the
    /// default lets as many stalled downloads as fit `memoryBudget` be held at once.
    public static let defaultMaxConnections = memoryBudget / heldPerStalledDownload

    /// What `serve` may hold for downloads that do not drain (a slow or hostile network).
    public static let memoryBudget = 1 << 30
    /// What a stalled download holds at most: the chunk being written, NIO's outbound buffer up
    /// to its high watermark, and the connection's own state (its pipeline, request and task;
    /// `connectionState`, measured with `scripts/stalled-downloads.py`).
    static let heldPerStalledDownload = ReleaseResponder.chunkBytes + ReleaseHTTP1Channel.writeBufferWaterMark.high + connectionState
    static let connectionState = 48 << 10

    /// The address to listen on.
    public var host: String
    /// 0: a free port, chosen by the system (reported to `onRunning`).
    public var port: Int
    /// One access-log line per request (common log format) on standard error.
    public var logsRequests: Bool
    /// The most connections open at once (lowered to what the descriptor limit allows); at the
    /// limit the connection idle the longest is closed to make room.
    public var maxConnections: Int
    /// How long requests in flight may take to finish after SIGTERM or SIGINT.
    public var shutdownDeadline: Duration

    /// Settings for serving `folder`; port 0 picks a free port.
    public init(folder: String, host: String = "127.0.0.1", port: Int = 8080, logsRequests: Bool = true,
                maxConnections: Int = defaultMaxConnections, shutdownDeadline: Duration = .seconds(10)) {
        self.folder = folder
        self.host = host
        self.port = port
        self.logsRequests = logsRequests
        self.maxConnections = maxConnections
        self.shutdownDeadline = shutdownDeadline
    }

    /// The connection limit `run` will keep, once it has raised the descriptor limit.
    public func effectiveMaxConnections() -> Int {
        ConnectionLimit(requested: maxConnections, descriptorLimit: ConnectionLimit.raiseDescriptorLimit()).maximum
    }

    /// Runs until SIGINT or SIGTERM.
    ///
    /// - Parameters:
    ///   - onRunning: told the port once the server accepts connections.
    ///   - onMessage: told what a curator should read (a manifest not served, a 4xx or 5xx
    ///     answer with its reason).
    /// - Throws: `ServeStartError` when the folder holds no release, or the address cannot be bound.
    public func run(onRunning: @escaping @Sendable (Int) -> Void = { _ in },
                    onMessage: @escaping @Sendable (String) -> Void = { _ in }) async throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw ServeStartError.noFolder(folder)
        }
        let release = ServedRelease(folder: folder, onProblem: onMessage)
        guard release.current() != nil else { throw ServeStartError.noRelease(folder) }
        var logger = Logger(label: "station-admin.serve")
        logger.logLevel = .critical
        let responder = ReleaseResponder(release: release, logError: { onMessage("[\(AccessLog<ReleaseResponder>.timestamp())] \($0)") })
        let connections = ConnectionLimit(requested: maxConnections, descriptorLimit: ConnectionLimit.raiseDescriptorLimit())
        let app = Application(
            responder: logsRequests ? AnyServeResponder(AccessLog(next: responder)) : AnyServeResponder(responder),
            server: ReleaseHTTP1Channel.builder(connections: connections),
            configuration: .init(address: .hostname(host, port: port), serverName: "station-admin"),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
        // After the deadline, requests still in flight are cancelled and their connections closed.
        var configuration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownDeadline
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch let error as IOError {
            throw ServeStartError.cannotListen(host: host, port: port, reason: error.description)
        }
    }
}

/// Why `serve` could not start, naming the folder or port.
public enum ServeStartError: Error, LocalizedError, Equatable {
    case noFolder(String)
    case noRelease(String)
    case cannotListen(host: String, port: Int, reason: String)

    public var errorDescription: String? {
        switch self {
        case .noFolder(let path):
            return "\(path): no release folder here (build one with `station-admin release --out \(path)`, or choose another --out)"
        case .noRelease(let path):
            return "\(path): no manifest.json that agrees with the folder, so nothing to serve (run `station-admin verify --out \(path)` to see why, or `station-admin release --out \(path)`)"
        case let .cannotListen(host, port, reason):
            return "cannot listen on \(host):\(port): \(reason) (choose another --port, or stop what uses it)"
        }
    }
}

/// A responder of either shape, so that the access log is a choice made at start.
struct AnyServeResponder: HTTPResponder {
    typealias Context = ServeContext
    let respond: @Sendable (Request, ServeContext) async throws -> Response

    init<Wrapped: HTTPResponder>(_ wrapped: Wrapped) where Wrapped.Context == ServeContext {
        respond = { try await wrapped.respond(to: $0, context: $1) }
    }

    func respond(to request: Request, context: ServeContext) async throws -> Response {
        try await respond(request, context)
    }
}

/// One line per request on standard error, in the common log format that nginx and Apache
/// write and every log tool reads:
/// `127.0.0.1 - - [25/Nov/2026:04:50:00 +0000] "GET /update?from=3 HTTP/1.1" 200 17042`.
struct AccessLog<Next: HTTPResponder>: HTTPResponder where Next.Context == ServeContext {
    typealias Context = ServeContext
    let next: Next

    func respond(to request: Request, context: ServeContext) async throws -> Response {
        let response = try await next.respond(to: request, context: context)
        let bytes = request.method == .head ? nil : response.body.contentLength
        let line = "\(context.remoteAddress) - - [\(Self.timestamp())] \"\(request.method.rawValue) \(request.uri.string) HTTP/1.1\" "
            + "\(response.status.code) \(bytes.map(String.init) ?? "-")\n"
        FileHandle.standardError.write(Data(line.utf8))
        return response
    }

    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%d/%b/%Y:%H:%M:%S +0000", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
