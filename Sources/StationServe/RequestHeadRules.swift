import HTTPTypes
import NIOCore
import NIOHTTP1

/// What a request head says before Hummingbird converts it to a version-less `HTTPRequest`:
///
/// - HTTP/1.0's connection rule (RFC 9112, 9.3): without `Connection: keep-alive` the request gets
///   `Connection: close` (so Hummingbird closes after the response); with it, the response says
///   `Connection: keep-alive`, without which an HTTP/1.0 client waits for the close. Many such
///   clients (ApacheBench, old proxies, embedded HTTP stacks) read until the close.
/// - An HTTP/1.1 request without exactly one `Host` (RFC 9112, 3.2) is marked with `hostProblem`,
///   which the responder answers with 400, and the connection is closed after it; a client's own
///   header of that name is dropped.
/// - Whether the connection has a request in hand, for `ConnectionLimit`, which closes idle
///   connections first.
final class RequestHeadRules: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    static let hostProblem = HTTPField.Name("X-Station-Serve-Host-Problem")!

    let connections: ConnectionLimit
    /// For each request not yet answered, in order: whether it is HTTP/1.0 with keep-alive.
    private var keepsHTTP10Alive: [Bool] = []

    init(connections: ConnectionLimit) {
        self.connections = connections
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        connections.requestStarted(context.channel)
        let isHTTP10 = head.version.major == 1 && head.version.minor == 0
        keepsHTTP10Alive.append(isHTTP10 && head.isKeepAlive)
        if isHTTP10 && !head.isKeepAlive {
            head.headers.replaceOrAdd(name: "Connection", value: "close")
        }
        head.headers.remove(name: Self.hostProblem.rawName)
        if head.version == .http1_1 && head.headers["Host"].count != 1 {
            head.headers.add(name: Self.hostProblem.rawName, value: "1")
            // Nothing more is read from a client that does not speak HTTP/1.1 as it says it does.
            head.headers.replaceOrAdd(name: "Connection", value: "close")
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .end:
            context.write(data, promise: promise)
            connections.requestFinished(context.channel)
        // An informational head (100 Continue) is not the request's answer.
        case .head(var head) where head.status.code >= 200 && !keepsHTTP10Alive.isEmpty:
            if keepsHTTP10Alive.removeFirst() {
                head.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }
}
