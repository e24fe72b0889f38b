import Foundation

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

    /// The folder at `baseURL`, fetched by `transport`: `StationClient`'s initializer picks the
    /// transport from a `URLSessionConfiguration`; the curator's tool, which links no
    /// FoundationNetworking on Linux, hands it libcurl's (`init(curlAt:idleTimeout:headers:)`).
    package init(baseURL: URL, transport: any HTTPTransport) {
        self.baseURL = baseURL
        self.transport = transport
    }

    #if canImport(CCurlTransfer)
    /// The folder at `baseURL`, fetched with libcurl: no byte for `idleTimeout` seconds ends a
    /// transfer, and `headers` go with every request.
    package init(curlAt baseURL: URL, idleTimeout: TimeInterval = 60, headers: [(String, String)] = []) {
        self.init(baseURL: baseURL, transport: CurlTransport(idleTimeout: idleTimeout, additionalHeaders: headers))
    }
    #endif

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
package protocol HTTPTransport: Sendable {
    func get(_ url: URL, headers: [(String, String)], answer: AnswerCheck, receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws
}

/// What an answer must be before its body is read: 200 or 206, and a `Content-Length` within what
/// the request takes. The body's size is judged from its header, before a byte of it is read: a
/// transport that queues what arrives faster than it is taken must refuse an endless answer
/// before it begins, not once the receiver has seen too much of it.
package struct AnswerCheck: Sendable {
    let request: SourceRequest
    let asksRange: Bool

    package var path: String { request.path }

    /// The receiver's first chunk for an answer of `status`, announcing `contentLength` bytes
    /// (-1: not said), with `etag`.
    package func start(status: Int, contentLength: Int64, etag: String?) throws -> SourceChunk {
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
    package func isTooSlow(bytes: Int, seconds: Double) -> Bool {
        seconds > request.limits.graceSeconds && Double(bytes) / seconds < request.limits.minimumBytesPerSecond
    }
}
