import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a phone reads a release folder from: an HTTP server (`station-admin serve`, nginx, a
/// CDN), or a folder on disk (a test, or an app that receives releases another way).
public protocol ReleaseSource: Sendable {
    /// `length` bytes of `path` from `offset` (nil: to the end). `ifRange` is the validator the
    /// first part came with: a server whose file changed since answers the whole file instead.
    func read(_ path: String, from offset: Int, length: Int?, ifRange: String?) async throws -> SourcePart
}

/// What a source answered for one read.
public struct SourcePart: Sendable {
    public let data: Data
    /// True when the answer is the whole file from byte 0, though a later offset was asked.
    public let isWholeFile: Bool
    /// The file's validator (an HTTP ETag), for the next part's `ifRange`.
    public let validator: String?
}

extension ReleaseSource {
    /// The whole of a small file (the manifest, its signatures); nil when the source has no such file.
    func whole(_ path: String) async throws -> Data? {
        do {
            return try await read(path, from: 0, length: nil, ifRange: nil).data
        } catch StationClientError.http(_, 404) {
            return nil
        }
    }
}

/// A release folder served over HTTP. Every request revalidates (no cache): the manifest changes
/// with every release, and versioned files are checked by hash anyway.
public struct HTTPReleaseSource: ReleaseSource {
    public let baseURL: URL
    let session: URLSession

    /// The folder at `baseURL` (`http://host:8080/`), with `timeout` seconds per request.
    public init(baseURL: URL, timeout: TimeInterval = 60) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
    }

    public func read(_ path: String, from offset: Int, length: Int?, ifRange: String?) async throws -> SourcePart {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        // The bytes as stored: a gzip file's SHA-256 is the manifest's, not an inflated copy's.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if offset > 0 || length != nil {
            let end = length.map { String(offset + $0 - 1) } ?? ""
            request.setValue("bytes=\(offset)-\(end)", forHTTPHeaderField: "Range")
            if let ifRange { request.setValue(ifRange, forHTTPHeaderField: "If-Range") }
        }
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw StationClientError.network(path: path, reason: error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else { throw StationClientError.network(path: path, reason: "not an HTTP answer") }
        switch http.statusCode {
        case 200: return SourcePart(data: data, isWholeFile: offset > 0 || length != nil, validator: http.value(forHTTPHeaderField: "ETag"))
        case 206: return SourcePart(data: data, isWholeFile: false, validator: http.value(forHTTPHeaderField: "ETag"))
        default: throw StationClientError.http(path: path, status: http.statusCode)
        }
    }
}

/// A release folder on disk.
public struct FolderReleaseSource: ReleaseSource {
    public let folder: String

    /// The release folder at `folder`.
    public init(folder: String) { self.folder = folder }

    public func read(_ path: String, from offset: Int, length: Int?, ifRange: String?) async throws -> SourcePart {
        guard let handle = FileHandle(forReadingAtPath: (folder as NSString).appendingPathComponent(path)) else {
            throw StationClientError.http(path: path, status: 404)
        }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let data = try length.map { try handle.read(upToCount: $0) ?? Data() } ?? (try handle.readToEnd() ?? Data())
        return SourcePart(data: data, isWholeFile: false, validator: nil)
    }
}
