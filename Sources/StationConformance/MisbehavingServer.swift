import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The kit's HTTP server on loopback (Hummingbird 2): every `ReleaseVariant`'s folder under a
/// path of its own, answered honestly or as a hostile network would (`ServerBehaviour`).
///
/// `GET /BEHAVIOUR/VARIANT/FILE` answers FILE of VARIANT's folder as BEHAVIOUR says: `{url}` in a
/// client's command is `http://127.0.0.1:PORT/BEHAVIOUR/VARIANT/`. Like a static host or a CDN it
/// serves whatever the folder holds, checking nothing: the client must. Every endless or slow
/// answer stops by itself after `answerBound` or 2 GiB, and when the client goes away; an
/// endless one comes at 16 MiB a second.
struct MisbehavingServer: Sendable {
    let releases: ConformanceReleases
    static let answerBound: Duration = .seconds(60)

    /// Runs `body` with the server's base URL (`http://127.0.0.1:PORT`), then stops the server.
    func serving<Result: Sendable>(_ body: @escaping @Sendable (String) async throws -> Result) async throws -> Result {
        var logger = Logger(label: "station-admin.conformance")
        logger.logLevel = .critical
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            responder: MisbehavingResponder(releases: releases),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "station-admin-conformance"),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0); portContinuation.finish() },
            logger: logger)
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                try await app.runService(gracefulShutdownSignals: [])
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                group.cancelAll()
                throw ConformanceError.kit("the kit's server could not listen on 127.0.0.1")
            }
            group.addTask { try await body("http://127.0.0.1:\(port)") }
            // The body's answer; then the server is cancelled (it stops listening and closes its connections).
            while let finished = try await group.next() {
                if let result = finished {
                    group.cancelAll()
                    return result
                }
            }
            throw ConformanceError.kit("the kit's server stopped before the scenarios ended")
        }
    }
}

struct MisbehavingResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let releases: ConformanceReleases

    func respond(to request: Request, context: Context) async throws -> Response {
        let parts = request.uri.path.split(separator: "/", maxSplits: 2).map(String.init)
        guard request.method == .get || request.method == .head, parts.count == 3,
              let behaviour = ServerBehaviour(rawValue: parts[0]), let variant = ReleaseVariant(rawValue: parts[1]),
              !parts[2].split(separator: "/").contains(where: { $0 == ".." || $0.hasPrefix(".") }) else {
            return Response(status: .notFound)
        }
        let name = parts[2]
        let path = releases.path(of: variant) + "/" + name
        let range = request.headers[.range]
        switch behaviour {
        case .endlessManifest where name == "manifest.json":
            return Response(status: .ok, headers: [.contentType: "application/json"], body: Self.endless(contentLength: nil))
        case .hugeManifest where name == "manifest.json":
            return Response(status: .ok, headers: [.contentType: "application/json"], body: Self.endless(contentLength: 1_000_000_000_000))
        case .endlessRange where range != nil:
            return Response(status: .partialContent, headers: [.contentType: "application/octet-stream"], body: Self.endless(contentLength: nil))
        default:
            break
        }
        guard let data = FileManager.default.contents(atPath: path) else { return Response(status: .notFound) }
        var status = HTTPResponse.Status.ok
        var headers: HTTPFields = [.contentType: "application/octet-stream", .acceptRanges: "bytes"]
        var body = data
        if let range, let (start, end) = Self.parse(range, size: data.count) {
            status = .partialContent
            headers[.contentRange] = "bytes \(start)-\(end)/\(data.count)"
            body = data.subdata(in: start..<(end + 1))
        } else if range != nil {
            return Response(status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(data.count)"])
        }
        let bytes = body
        guard name.hasSuffix(".gz") else {
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        switch behaviour {
        case .oneByteASecond:
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: bytes.count) { writer in
                let clock = ContinuousClock(), start = clock.now
                for byte in bytes where clock.now - start < MisbehavingServer.answerBound {
                    try await writer.write(ByteBuffer(bytes: [byte]))
                    try await Task.sleep(for: .seconds(1))
                }
                throw CancellationError()
            })
        case .lyingContentLength:
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: bytes.count + 1_000) { writer in
                try await writer.write(ByteBuffer(bytes: bytes))
                // Ending the body short closes the connection: the client sees fewer bytes than promised.
                throw CancellationError()
            })
        case .diesMidDownload:
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: bytes.count) { writer in
                try await writer.write(ByteBuffer(bytes: bytes.prefix(bytes.count / 2)))
                throw CancellationError()
            })
        default:
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    /// A body of spaces without end (or until the bounds), with the length it claims, if any.
    static func endless(contentLength: Int?) -> ResponseBody {
        ResponseBody(contentLength: contentLength) { writer in
            let chunk = ByteBuffer(repeating: UInt8(ascii: " "), count: 64 << 10)
            let clock = ContinuousClock(), start = clock.now
            var sent = 0
            // 16 MiB a second: without end for a client that sets no limit, yet no flood of its disk.
            while clock.now - start < MisbehavingServer.answerBound && sent < 2 << 30 {
                try await writer.write(chunk)
                sent += chunk.readableBytes
                try await Task.sleep(for: .milliseconds(4))
            }
            throw CancellationError()
        }
    }

    /// `bytes=START-[END]` within a file of `size` bytes; nil for any other range.
    static func parse(_ header: String, size: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let bounds = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int(bounds[0]), start < size else { return nil }
        let end = bounds[1].isEmpty ? size - 1 : min(Int(bounds[1]) ?? -1, size - 1)
        return end >= start ? (start, end) : nil
    }
}
