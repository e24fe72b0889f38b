import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A release folder served over HTTP(S): `station-admin serve`, nginx, a CDN.
///
/// Each answer is streamed to the receiver as it arrives (a session delegate, never a whole
/// body in memory), so an endless answer is cut at what the receiver expects; a transfer slower
/// than its `TransferLimits` is cut too. Every request revalidates (no cache): the manifest
/// changes with every release, and versioned files are checked by hash anyway.
///
/// ```swift
/// let configuration = URLSessionConfiguration.default
/// configuration.allowsExpensiveNetworkAccess = false     // the app's own choices
/// let source = HTTPReleaseSource(baseURL: URL(string: "https://cdn.example/stations/")!, configuration: configuration)
/// ```
public struct HTTPReleaseSource: ReleaseSource {
    /// The folder's URL (`http://host:8080/`).
    public let baseURL: URL
    private let transport: any HTTPTransport

    /// How the bytes are fetched.
    package enum Transport: Sendable {
        /// libcurl's easy interface, whose callbacks stop a transfer at once (Linux).
        case curl
        /// Foundation's `URLSession` (Apple's systems; on Linux it queues what arrives without limit).
        case urlSession
    }

    /// The folder at `baseURL`, fetched with a copy of `configuration` whose cache is turned off.
    /// Its `timeoutIntervalForRequest` is the idle timeout (default 60 s), and its
    /// `httpAdditionalHeaders` are sent with every request.
    public init(baseURL: URL, configuration: URLSessionConfiguration = .ephemeral) {
        #if canImport(CCurlTransfer)
        self.init(baseURL: baseURL, configuration: configuration, transport: .curl)
        #else
        self.init(baseURL: baseURL, configuration: configuration, transport: .urlSession)
        #endif
    }

    /// The folder at `baseURL`, fetched by `transport` (the tests run both where both exist).
    package init(baseURL: URL, configuration: URLSessionConfiguration, transport: Transport) {
        self.baseURL = baseURL
        switch transport {
        case .urlSession: self.transport = URLSessionTransport(configuration: configuration)
        case .curl:
            #if canImport(CCurlTransfer)
            self.transport = CurlTransport(configuration: configuration)
            #else
            preconditionFailure("libcurl's transport exists on Linux only")
            #endif
        }
    }

    public func read(_ request: SourceRequest, into receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws {
        // The bytes as stored: a gzip file's SHA-256 is the manifest's, not an inflated copy's.
        var headers = [("Accept-Encoding", "identity")]
        let asksRange = request.offset > 0 || request.length != nil
        if asksRange {
            let end = request.length.map { String(request.offset + $0 - 1) } ?? ""
            headers.append(("Range", "bytes=\(request.offset)-\(end)"))
            if let ifRange = request.ifRange { headers.append(("If-Range", ifRange)) }
        }
        try await transport.get(baseURL.appendingPathComponent(request.path), headers: headers,
                                answer: AnswerCheck(request: request, asksRange: asksRange), receive: receive)
    }
}

/// Fetches one URL, streaming its body to a receiver.
protocol HTTPTransport: Sendable {
    func get(_ url: URL, headers: [(String, String)], answer: AnswerCheck, receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws
}

/// What an answer must be before its body is read: 200 or 206, and a `Content-Length` within what
/// the request takes. The body's size is judged from its header, before a byte of it is read: a
/// transport that queues what arrives faster than it is taken must refuse an endless answer
/// before it begins, not once the receiver has seen too much of it.
struct AnswerCheck: Sendable {
    let request: SourceRequest
    let asksRange: Bool

    var path: String { request.path }

    /// The receiver's first chunk for an answer of `status`, announcing `contentLength` bytes
    /// (-1: not said), with `etag`.
    func start(status: Int, contentLength: Int64, etag: String?) throws -> SourceChunk {
        let isWholeFile: Bool
        switch status {
        case 200: isWholeFile = asksRange
        case 206: isWholeFile = false
        default: throw StationClientError.http(path: path, status: status)
        }
        if let maximum = status == 206 ? request.length ?? request.maximumBytes : request.maximumBytes {
            guard contentLength >= 0 else { throw StationClientError.noContentLength(path: path) }
            guard contentLength <= maximum else {
                throw request.length == nil ? StationClientError.tooLarge(path: path, bytes: Int(contentLength), limit: maximum)
                    : StationClientError.sizeDiffers(path: path, actual: Int(contentLength), expected: maximum)
            }
        }
        return .start(isWholeFile: isWholeFile, validator: etag)
    }

    /// Whether a transfer that has run `seconds` and brought `bytes` is too slow to go on.
    func isTooSlow(bytes: Int, seconds: Double) -> Bool {
        seconds > request.limits.graceSeconds && Double(bytes) / seconds < request.limits.minimumBytesPerSecond
    }
}

/// `URLSession`'s transport: a session and its delegate, shared by the reads of one source.
final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let router: TransferRouter

    init(configuration: URLSessionConfiguration) {
        let copy = (configuration.copy() as? URLSessionConfiguration) ?? .ephemeral
        copy.requestCachePolicy = .reloadIgnoringLocalCacheData
        copy.urlCache = nil
        router = TransferRouter()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: copy, delegate: router, delegateQueue: queue)
    }

    func get(_ url: URL, headers: [(String, String)], answer: AnswerCheck, receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let transfer = Transfer(answer: answer, receive: receive)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let task = session.dataTask(with: request)
                router.register(task.taskIdentifier, transfer)
                transfer.begin(task: task, continuation: continuation)
            }
        } onCancel: {
            transfer.fail(CancellationError())
        }
    }

    deinit { session.finishTasksAndInvalidate() }
}

/// Hands each task's delegate calls to its `Transfer`.
final class TransferRouter: NSObject, URLSessionDataDelegate, Sendable {
    private let transfers = Locked([Int: Transfer]())

    func register(_ identifier: Int, _ transfer: Transfer) { transfers.withValue { $0[identifier] = transfer } }

    private func transfer(_ task: URLSessionTask) -> Transfer? { transfers.withValue { $0[task.taskIdentifier] } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        completionHandler(transfer(dataTask)?.accept(response) == true ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(dataTask)?.receive(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.withValue { $0.removeValue(forKey: task.taskIdentifier) }
        transfer?.complete(error)
    }
}

/// One request's state: what arrived, how fast, and how it ended. Its receiver stops it by
/// throwing; a watchdog stops it when it is too slow.
final class Transfer: Sendable {
    private struct State {
        var task: URLSessionTask?
        var continuation: CheckedContinuation<Void, any Error>?
        /// The first reason this transfer stops, ours (the receiver's, too slow, cancelled) before the session's.
        var failure: (any Error)?
        var bytes = 0
    }

    private let answer: AnswerCheck
    private let receiver: @Sendable (SourceChunk) throws -> Void
    private let state = Locked(State())
    private let stopwatch = Stopwatch()

    var path: String { answer.path }

    init(answer: AnswerCheck, receive: @escaping @Sendable (SourceChunk) throws -> Void) {
        self.answer = answer
        receiver = receive
    }

    func begin(task: URLSessionTask, continuation: CheckedContinuation<Void, any Error>) {
        let cancelled = state.withValue { state in
            state.task = task
            state.continuation = continuation
            return state.failure != nil
        }
        if cancelled { task.cancel() } else { task.resume() }
        watchTheRate()
    }

    /// Stops the transfer for `error`, unless it stopped already.
    func fail(_ error: any Error) {
        let task = state.withValue { state -> URLSessionTask? in
            if state.failure == nil { state.failure = error }
            return state.task
        }
        task?.cancel()
    }

    /// Records why the answer is refused: the delegate then answers `.cancel` for its response,
    /// which stops the transfer (cancelling the task too, at that instant, raced with it).
    private func refuse(_ error: any Error) {
        state.withValue { state in if state.failure == nil { state.failure = error } }
    }

    func accept(_ response: URLResponse) -> Bool {
        guard state.withValue({ $0.failure == nil }) else { return false }
        do {
            guard let http = response as? HTTPURLResponse else { throw StationClientError.network(path: path, cause: URLError(.badServerResponse)) }
            try receiver(try answer.start(status: http.statusCode, contentLength: http.expectedContentLength,
                                          etag: http.value(forHTTPHeaderField: "ETag")))
            return true
        } catch {
            refuse(error)
            return false
        }
    }

    func receive(_ data: Data) {
        state.withValue { $0.bytes += data.count }
        _ = deliver(.bytes(data))
    }

    private func deliver(_ chunk: SourceChunk) -> Bool {
        guard state.withValue({ $0.failure == nil }) else { return false }
        do {
            try receiver(chunk)
            return true
        } catch {
            fail(error)
            return false
        }
    }

    func complete(_ error: (any Error)?) {
        let (continuation, failure) = state.withValue { state -> (CheckedContinuation<Void, any Error>?, (any Error)?) in
            defer { state.continuation = nil }
            return (state.continuation, state.failure ?? error.map(classify))
        }
        if let failure { continuation?.resume(throwing: failure) } else { continuation?.resume() }
    }

    private func classify(_ error: any Error) -> any Error {
        guard let urlError = error as? URLError else { return StationClientError.network(path: path, cause: error) }
        switch urlError.code {
        case .cancelled: return CancellationError()
        case .notConnectedToInternet, .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed, .dataNotAllowed, .internationalRoamingOff:
            return StationClientError.offline(path: path, cause: urlError)
        default:
            return StationClientError.network(path: path, cause: urlError)
        }
    }

    /// Cuts the transfer once it has run past its grace period below the minimum average rate.
    private func watchTheRate() {
        Task { [weak self] in
            while let transfer = self, transfer.isRunning {
                try? await Task.sleep(nanoseconds: 250_000_000)
                transfer.judgeTheRate()
            }
        }
    }

    private var isRunning: Bool { state.withValue { $0.continuation != nil && $0.failure == nil } }

    private func judgeTheRate() {
        let seconds = stopwatch.seconds
        let arrived = state.withValue { $0.bytes }
        if answer.isTooSlow(bytes: arrived, seconds: seconds) {
            fail(StationClientError.tooSlow(path: path, bytes: arrived, seconds: seconds))
        }
    }
}
