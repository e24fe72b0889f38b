#if canImport(CCurlTransfer)
import CCurlTransfer
import Foundation

/// libcurl's easy interface as `HTTPReleaseSource`'s transport on Linux. curl hands each part of
/// a body to a callback on the transfer's own thread and waits for it, so a refusal (an answer
/// announcing too much, no `Content-Length`, bytes past the range, too slow, cancelled) stops
/// the transfer before another byte is read: the memory an answer takes is one part of it.
/// Foundation's `URLSession` on Linux (itself on libcurl) queues every part for its delegate
/// without limit instead, so a server sending without end grows the app's memory until a
/// cancellation reaches the transfer.
package final class CurlTransport: HTTPTransport {
    /// No byte for this long ends a transfer (a `URLSessionConfiguration`'s `timeoutIntervalForRequest`).
    let idleTimeout: TimeInterval
    /// Sent with every request (a `URLSessionConfiguration`'s `httpAdditionalHeaders`).
    let additionalHeaders: [(String, String)]

    package init(idleTimeout: TimeInterval, additionalHeaders: [(String, String)]) {
        self.idleTimeout = idleTimeout
        self.additionalHeaders = additionalHeaders
    }

    package func get(_ url: URL, headers: [(String, String)], answer: AnswerCheck, receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws {
        let call = CurlCall(answer: answer, idleTimeout: idleTimeout, receive: receive)
        let lines = (additionalHeaders + headers).map { "\($0.0): \($0.1)" }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // curl_easy_perform blocks: a thread of its own, never one of the cooperative pool's.
                let thread = Thread {
                    continuation.resume(with: Result { try call.perform(url: url.absoluteString, headers: lines) })
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
        } onCancel: {
            call.cancel()
        }
    }
}

/// One transfer's state, reached from curl's callbacks on the transfer's thread (and `cancel`
/// from any).
private final class CurlCall: Sendable {
    private struct State {
        var failure: (any Error)?
        var received = 0
        var lastByte = 0.0
        var cancelled = false
    }

    let answer: AnswerCheck
    let idleTimeout: TimeInterval
    private let receiver: @Sendable (SourceChunk) throws -> Void
    private let state = Locked(State())
    private let stopwatch = Stopwatch()

    init(answer: AnswerCheck, idleTimeout: TimeInterval, receive: @escaping @Sendable (SourceChunk) throws -> Void) {
        self.answer = answer
        self.idleTimeout = idleTimeout
        receiver = receive
    }

    func cancel() { state.withValue { $0.cancelled = true } }

    /// Runs the transfer on the calling thread; throws why it stopped, if it did.
    func perform(url: String, headers: [String]) throws {
        var strings = headers.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        strings.append(nil)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let outcome = strings.withUnsafeBufferPointer { list in
            list.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: list.count) { headerList in
                station_curl_get(url, headerList, Int(max(1, idleTimeout)), context,
                                 { context, status, length, etag in CurlCall.from(context).headers(status: status, length: length, etag: etag) },
                                 { context, bytes, count in CurlCall.from(context).body(bytes, count) },
                                 { context, received in CurlCall.from(context).progress(received) })
            }
        }
        let stopped = state.withValue { $0 }
        if stopped.cancelled { throw CancellationError() }
        if let failure = stopped.failure { throw failure }
        guard outcome.curl_code == 0 else { throw classify(outcome) }
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> CurlCall {
        Unmanaged<CurlCall>.fromOpaque(context!).takeUnretainedValue()
    }

    private func stop(_ error: any Error) -> Int32 {
        state.withValue { if $0.failure == nil { $0.failure = error } }
        return 1
    }

    private func headers(status: Int, length: Int64, etag: UnsafePointer<CChar>?) -> Int32 {
        do {
            try receiver(try answer.start(status: status, contentLength: length, etag: etag.map { String(cString: $0) }))
            return 0
        } catch {
            return stop(error)
        }
    }

    private func body(_ bytes: UnsafePointer<CChar>?, _ count: Int) -> Int32 {
        guard let bytes, count > 0 else { return 0 }
        let now = stopwatch.seconds
        state.withValue { $0.received += count; $0.lastByte = now }
        do {
            try receiver(.bytes(Data(bytes: bytes, count: count)))
            return 0
        } catch {
            return stop(error)
        }
    }

    private func progress(_ received: Int64) -> Int32 {
        let seconds = stopwatch.seconds
        let now = state.withValue { $0 }
        if now.cancelled { return 1 }
        if answer.isTooSlow(bytes: now.received, seconds: seconds) {
            return stop(StationClientError.tooSlow(path: answer.path, bytes: now.received, seconds: seconds))
        }
        if seconds - now.lastByte > idleTimeout {
            return stop(StationClientError.network(path: answer.path, cause: URLError(.timedOut)))
        }
        return 0
    }

    /// curl's failures in Foundation's words: no route or name is offline, the rest a network error.
    private func classify(_ outcome: station_curl_outcome) -> any Error {
        var message = outcome.message
        let text = withUnsafeBytes(of: &message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let info = [NSLocalizedDescriptionKey: text]
        switch outcome.curl_code {
        case 6: return StationClientError.offline(path: answer.path, cause: URLError(.cannotFindHost, userInfo: info))
        case 7: return StationClientError.offline(path: answer.path, cause: URLError(.cannotConnectToHost, userInfo: info))
        case 28: return StationClientError.network(path: answer.path, cause: URLError(.timedOut, userInfo: info))
        default: return StationClientError.network(path: answer.path, cause: URLError(.networkConnectionLost, userInfo: info))
        }
    }
}
#endif
