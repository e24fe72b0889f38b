import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel, with the request-head rules `RequestHeadRules` adds, every
/// connection counted by `ConnectionLimit`, and idle connections closed.
///
/// Connections that stay idle are closed after `idleTimeout`, as nginx closes its keep-alive
/// connections after 75 s, so that phones that went away hold no memory.
struct ReleaseHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    static let idleTimeout = TimeAmount.seconds(75)

    let inner: HTTP1Channel
    let connections: ConnectionLimit

    static func builder(connections: ConnectionLimit) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            ReleaseHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idleTimeout)),
                                connections: connections)
        }
    }

    /// What a connection may hold of a response in NIO's outbound buffer before its writer waits
    /// for the socket to drain; with `ReleaseResponder.chunkBytes`, what a stalled download holds.
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 8 << 10, high: 16 << 10)

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        connections.opened(channel)
        return channel.setOption(ChannelOptions.writeBufferWaterMark, value: Self.writeBufferWaterMark).flatMap {
            inner.setup(channel: channel, logger: logger)
        }.flatMapThrowing { [connections] value in
            let decoder = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(RequestHeadRules(connections: connections), position: .after(decoder.handler))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
