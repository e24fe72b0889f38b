import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StationClientCore

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
