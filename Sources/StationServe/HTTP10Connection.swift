import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel, with HTTP/1.0's connection rule kept and idle connections closed.
///
/// An HTTP/1.0 request without `Connection: keep-alive` expects the server to close the
/// connection after the response (RFC 9112, 9.3); many such clients (ApacheBench, old proxies,
/// embedded HTTP stacks) read until the close. Hummingbird converts requests to version-less
/// `HTTPRequest`s and keeps a connection open unless the request says `Connection: close`, so
/// those clients would wait for ever. `HTTP10ConnectionRule` keeps HTTP/1.0's rule before the
/// conversion. Connections that stay idle are closed after `idleTimeout`, as nginx closes its
/// keep-alive connections after 75 s, so that phones that went away hold no memory.
struct ReleaseHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    static let idleTimeout = TimeAmount.seconds(75)

    let inner: HTTP1Channel

    static func builder() -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            ReleaseHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idleTimeout)))
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(HTTP10ConnectionRule(), position: .after(decoder.handler))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// HTTP/1.0's connection rule: without `Connection: keep-alive` the request gets
/// `Connection: close` (so Hummingbird closes after the response); with it, the response says
/// `Connection: keep-alive`, without which an HTTP/1.0 client waits for the close.
final class HTTP10ConnectionRule: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// For each request not yet answered, in order: whether it is HTTP/1.0 with keep-alive.
    private var keepsHTTP10Alive: [Bool] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let isHTTP10 = head.version.major == 1 && head.version.minor == 0
        keepsHTTP10Alive.append(isHTTP10 && head.isKeepAlive)
        if isHTTP10 && !head.isKeepAlive {
            head.headers.replaceOrAdd(name: "Connection", value: "close")
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // An informational head (100 Continue) is not the request's answer.
        guard case .head(var head) = unwrapOutboundIn(data), head.status.code >= 200, !keepsHTTP10Alive.isEmpty else {
            context.write(data, promise: promise)
            return
        }
        if keepsHTTP10Alive.removeFirst() {
            head.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
