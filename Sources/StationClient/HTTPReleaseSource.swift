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
    private let transport: HTTPTransport

    /// The folder at `baseURL`, fetched with a copy of `configuration` whose cache is turned off.
    /// Its `timeoutIntervalForRequest` is the idle timeout (default 60 s).
    public init(baseURL: URL, configuration: URLSessionConfiguration = .ephemeral) {
        self.baseURL = baseURL
        transport = HTTPTransport(configuration: configuration)
    }

    public func read(_ request: SourceRequest, into receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws {
        var urlRequest = URLRequest(url: baseURL.appendingPathComponent(request.path))
        // The bytes as stored: a gzip file's SHA-256 is the manifest's, not an inflated copy's.
        urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let asksRange = request.offset > 0 || request.length != nil
        if asksRange {
            let end = request.length.map { String(request.offset + $0 - 1) } ?? ""
            urlRequest.setValue("bytes=\(request.offset)-\(end)", forHTTPHeaderField: "Range")
            if let ifRange = request.ifRange { urlRequest.setValue(ifRange, forHTTPHeaderField: "If-Range") }
        }
        let transfer = Transfer(request: request, asksRange: asksRange, receive: receive)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                transport.start(urlRequest, transfer: transfer, continuation: continuation)
            }
        } onCancel: {
            transfer.fail(CancellationError())
        }
    }
}

/// The session and its delegate, shared by the reads of one source.
final class HTTPTransport: Sendable {
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

    func start(_ request: URLRequest, transfer: Transfer, continuation: CheckedContinuation<Void, any Error>) {
        let task = session.dataTask(with: request)
        router.register(task.taskIdentifier, transfer)
        transfer.begin(task: task, continuation: continuation)
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

    let path: String
    private let request: SourceRequest
    private let asksRange: Bool
    private let receiver: @Sendable (SourceChunk) throws -> Void
    private let state = Locked(State())
    private let stopwatch = Stopwatch()

    init(request: SourceRequest, asksRange: Bool, receive: @escaping @Sendable (SourceChunk) throws -> Void) {
        path = request.path
        self.request = request
        self.asksRange = asksRange
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
        guard let http = response as? HTTPURLResponse else {
            refuse(StationClientError.network(path: path, cause: URLError(.badServerResponse)))
            return false
        }
        let isWholeFile: Bool
        switch http.statusCode {
        case 200: isWholeFile = asksRange
        case 206: isWholeFile = false
        default:
            refuse(StationClientError.http(path: path, status: http.statusCode))
            return false
        }
        // The body's size is judged from its header, before a byte of it is read: bytes that
        // arrive faster than they are taken queue up in memory, so an endless answer must be
        // refused before it begins, not once the receiver has seen too much of it.
        if let maximum = http.statusCode == 206 ? request.length ?? request.maximumBytes : request.maximumBytes {
            let announced = http.expectedContentLength
            guard announced >= 0 else {
                refuse(StationClientError.noContentLength(path: path))
                return false
            }
            guard announced <= maximum else {
                refuse(request.length == nil ? StationClientError.tooLarge(path: path, bytes: Int(announced), limit: maximum)
                     : StationClientError.sizeDiffers(path: path, actual: Int(announced), expected: maximum))
                return false
            }
        }
        guard state.withValue({ $0.failure == nil }) else { return false }
        do {
            try receiver(.start(isWholeFile: isWholeFile, validator: http.value(forHTTPHeaderField: "ETag")))
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
        if seconds > request.limits.graceSeconds && Double(arrived) / seconds < request.limits.minimumBytesPerSecond {
            fail(StationClientError.tooSlow(path: path, bytes: arrived, seconds: seconds))
        }
    }
}
