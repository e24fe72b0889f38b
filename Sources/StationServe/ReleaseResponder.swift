import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StationCheck
import StationDelta
import StationLog
import StationRelease
import StationSchema
import StationSupport
import Synchronization
import _NIOFileSystem

/// Answers phones from a release folder (README, "Serving releases"):
///
/// - `GET /update?from=V`: the delta for V (gzip bytes with `Content-Encoding: gzip` to a client
///   that accepts it, the SQL itself to one that does not), or `303 See Other` to the full
///   database with the carry-over script named in `X-Carry-Over` and `Link`, or `204` when V is
///   the newest, or `400` with a JSON error body;
/// - `GET /manifest.json` and every file the manifest lists, nothing else; versioned files with a
///   strong ETag (their SHA-256), a year's `Cache-Control: immutable`, `304`, `206`/`416`;
///   the manifest and `/update` answers revalidated on every request.
///
/// `HEAD` answers as `GET` without the body. The answer depends only on the manifest, as nginx's
/// and a CDN's do (`deploy/nginx.conf`).
struct ReleaseResponder: HTTPResponder {
    typealias Context = ServeContext

    let release: ServedRelease
    let cache = SmallFileCache()

    static let immutable = "public, max-age=31536000, immutable"
    static let revalidate = "no-cache"
    static let dataVersion = HTTPField.Name("X-Data-Version")!
    static let carryOver = HTTPField.Name("X-Carry-Over")!
    static let answerKind = HTTPField.Name("X-Update-Kind")!
    static let link = HTTPField.Name("Link")!

    func respond(to request: Request, context: Context) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            var response = Self.error(.methodNotAllowed, "only GET and HEAD are served")
            response.headers[.allow] = "GET, HEAD"
            return response
        }
        guard let snapshot = release.current() else {
            return Self.error(.serviceUnavailable, "no release is published in this folder yet (run station-admin release)")
        }
        let response: Response
        switch request.uri.path {
        case "/update":
            response = try update(request, snapshot)
        case "/" + Manifest.fileName:
            response = Self.conditional(request, etag: snapshot.sha256, cacheControl: Self.revalidate) {
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: snapshot.bytes)))
            }
        default:
            response = try await file(request, snapshot)
        }
        return request.method == .head ? response.createHeadResponse() : response
    }

    // MARK: /update

    private func update(_ request: Request, _ snapshot: ServedRelease.Snapshot) throws -> Response {
        let from = request.uri.queryParameters["from"].map(String.init)
        let answer = snapshot.manifest.answer(from: from)
        let acceptsGzip = Self.acceptsGzip(request)
        // The answer changes with the manifest, and the delta's bytes with the encoding.
        let etag = "update-\(snapshot.sha256.prefix(16))-\(from ?? "")\(acceptsGzip ? "-gzip" : "")"
        switch answer {
        case let .refused(status, message):
            return Self.error(HTTPResponse.Status(code: status), message, newest: snapshot.manifest.newest)
        case .upToDate(let version):
            var headers = HTTPFields()
            headers[Self.dataVersion] = String(version)
            headers[Self.answerKind] = "up-to-date"
            headers[.cacheControl] = Self.revalidate
            return Response(status: .noContent, headers: headers)
        case let .full(database, carryOver, version):
            var headers = HTTPFields()
            headers[.location] = "/" + database.path
            headers[Self.dataVersion] = String(version)
            headers[Self.answerKind] = "full"
            if let carryOver {
                headers[Self.carryOver] = "/" + carryOver.path
                headers[Self.link] = "</\(carryOver.path)>; rel=\"carry-over\""
            }
            headers[.cacheControl] = Self.revalidate
            headers[.contentType] = "application/json"
            let body = FullDownloadBody(kind: "full", to: version, path: database.path, sha256: database.sha256, bytes: database.bytes,
                                        carryOver: carryOver?.path, carryOverSha256: carryOver?.sha256)
            return Response(status: .seeOther, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try Self.json(body))))
        case let .delta(file, version):
            return try Self.conditional(request, etag: etag, cacheControl: Self.revalidate) {
                var headers = HTTPFields()
                headers[.contentType] = "application/sql; charset=utf-8"
                headers[.vary] = "Accept-Encoding"
                headers[Self.dataVersion] = String(version)
                headers[Self.answerKind] = "delta"
                let bytes: Data
                if acceptsGzip {
                    headers[.contentEncoding] = "gzip"
                    bytes = try cache.bytes(of: file, at: release.path(of: file.path))
                } else {
                    bytes = try cache.inflated(file, at: release.path(of: file.path))
                }
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }
    }

    struct FullDownloadBody: Encodable {
        let kind: String
        let to: Int
        let path: String
        let sha256: String
        let bytes: Int
        let carryOver: String?
        let carryOverSha256: String?

        enum CodingKeys: String, CodingKey {
            case kind, to, path, sha256, bytes, carryOver = "carry_over", carryOverSha256 = "carry_over_sha256"
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kind, forKey: .kind)
            try container.encode(to, forKey: .to)
            try container.encode(path, forKey: .path)
            try container.encode(sha256, forKey: .sha256)
            try container.encode(bytes, forKey: .bytes)
            try container.encode(carryOver, forKey: .carryOver)
            try container.encode(carryOverSha256, forKey: .carryOverSha256)
        }
    }

    // MARK: Files

    private func file(_ request: Request, _ snapshot: ServedRelease.Snapshot) async throws -> Response {
        // Only a path the manifest lists, compared as text: no `..`, no listing, no lock file,
        // no link (the audit refused manifests whose paths are not plain files inside the folder).
        guard let decoded = request.uri.path.removingPercentEncoding, decoded.hasPrefix("/"),
              let listed = snapshot.manifest.listedFile(String(decoded.dropFirst()))
        else {
            return Self.error(.notFound, "no such file in this release folder (see /manifest.json)")
        }
        let path = release.path(of: listed.path)
        return try await Self.conditional(request, etag: listed.sha256, cacheControl: Self.immutable) {
            var headers = HTTPFields()
            headers[.contentType] = Self.contentType(of: listed.path)
            headers[.acceptRanges] = "bytes"
            let size = listed.bytes
            switch ByteRange(header: Self.rangeApplies(request, etag: listed.sha256) ? request.headers[.range] : nil, size: size) {
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            case .part(let range):
                headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
                headers[.contentLength] = String(range.count)
                return Response(status: .partialContent, headers: headers, body: try await body(path, listed, range, head: request.method == .head))
            case .whole:
                headers[.contentLength] = String(size)
                let range = size > 0 ? 0...(size - 1) : nil
                return Response(status: .ok, headers: headers, body: try await body(path, listed, range, head: request.method == .head))
            }
        }
    }

    /// Small files from memory (they are immutable: keyed by their SHA-256), large ones streamed.
    private func body(_ path: String, _ file: ReleasedFile, _ range: ClosedRange<Int>?, head: Bool) async throws -> ResponseBody {
        guard let range, !head else { return ResponseBody() }
        if file.bytes <= SmallFileCache.largestFile {
            let bytes = try cache.bytes(of: file, at: path)
            return ResponseBody(byteBuffer: ByteBuffer(bytes: bytes[range]))
        }
        return ResponseBody(contentLength: range.count) { writer in
            let handle = try await FileSystem.shared.openFile(forReadingAt: FilePath(path), options: .init(followSymbolicLinks: false))
            do {
                for try await chunk in handle.readChunks(in: Int64(range.lowerBound)..<Int64(range.upperBound + 1), chunkLength: .kibibytes(256)) {
                    try await writer.write(chunk)
                }
                try await handle.close()
            } catch {
                try? await handle.close()
                throw error
            }
            try await writer.finish(nil)
        }
    }

    static func contentType(of path: String) -> String {
        if path.hasSuffix(".gz") { return "application/gzip" }
        if path.hasSuffix(".sqlite") { return "application/vnd.sqlite3" }
        if path.hasSuffix(".sql") { return "application/sql; charset=utf-8" }
        return "application/octet-stream"
    }

    // MARK: Helpers

    /// `304 Not Modified` when the client holds `etag` already, else what `make` answers; both
    /// carry the ETag and `cacheControl`.
    static func conditional(_ request: Request, etag: String, cacheControl: String, _ make: () async throws -> Response) async rethrows -> Response {
        let quoted = "\"\(etag)\""
        var response: Response
        if let held = request.headers[.ifNoneMatch],
           held.split(separator: ",").contains(where: { tag in
               let tag = tag.trimmingCharacters(in: .whitespaces)
               return tag == "*" || tag == quoted || tag == "W/" + quoted
           }) {
            response = Response(status: .notModified)
        } else {
            response = try await make()
        }
        response.headers[.eTag] = quoted
        response.headers[.cacheControl] = cacheControl
        return response
    }

    static func conditional(_ request: Request, etag: String, cacheControl: String, _ make: () throws -> Response) rethrows -> Response {
        let quoted = "\"\(etag)\""
        var response: Response
        if let held = request.headers[.ifNoneMatch],
           held.split(separator: ",").contains(where: { tag in
               let tag = tag.trimmingCharacters(in: .whitespaces)
               return tag == "*" || tag == quoted || tag == "W/" + quoted
           }) {
            response = Response(status: .notModified)
        } else {
            response = try make()
        }
        response.headers[.eTag] = quoted
        response.headers[.cacheControl] = cacheControl
        return response
    }

    /// Whether a client accepts gzip (RFC 9110, 12.5.3): its weight for `gzip` (or `x-gzip`), else
    /// for `*`, above 0. `gzip;q=0` refuses it whatever `*` says; no header asks for identity.
    static func acceptsGzip(_ request: Request) -> Bool {
        guard let accepted = request.headers[.acceptEncoding] else { return false }
        var weights: [String: Double] = [:]
        for coding in accepted.split(separator: ",") {
            let parts = coding.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first, !name.isEmpty else { continue }
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.replacingOccurrences(of: " ", with: "").hasPrefix("q=") {
                // A weight that is not a number from 0 to 1 makes the coding unacceptable.
                let value = Double(parameter.replacingOccurrences(of: " ", with: "").dropFirst(2)) ?? 0
                weight = (0...1).contains(value) ? value : 0
            }
            weights[name == "x-gzip" ? "gzip" : name] = weight
        }
        return (weights["gzip"] ?? weights["*"] ?? 0) > 0
    }

    /// Whether a `Range` is honoured: always without `If-Range`; with it, only when it names this
    /// file's strong ETag (RFC 9110, 13.1.5). A date, a weak or another tag asks for the whole file.
    static func rangeApplies(_ request: Request, etag: String) -> Bool {
        guard let validator = request.headers[.ifRange]?.trimmingCharacters(in: .whitespaces) else { return true }
        return validator == "\"\(etag)\""
    }

    /// A JSON error body: `{"error": "…", "newest": 4}`.
    static func error(_ status: HTTPResponse.Status, _ message: String, newest: Int? = nil) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = revalidate
        let body = (try? json(ErrorBody(error: message, newest: newest))) ?? Data()
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    struct ErrorBody: Encodable {
        let error: String
        let newest: Int?

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(error, forKey: .error)
            try container.encode(newest, forKey: .newest)
        }

        enum CodingKeys: String, CodingKey { case error, newest }
    }

    static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value) + Data("\n".utf8)
    }
}

/// The small files of a release folder (deltas, carry-over scripts, small databases) in memory:
/// immutable, so keyed by their SHA-256, and bounded so that memory does not grow with history.
final class SmallFileCache: Sendable {
    static let largestFile = 1 << 20
    static let budget = 24 << 20
    private let files = Mutex<(entries: [String: Data], bytes: Int)>(([:], 0))

    /// The file's bytes, read once; a file whose size or hash is not its entry's is not served.
    func bytes(of file: ReleasedFile, at path: String) throws -> Data {
        try cached(file.sha256) {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard data.count == file.bytes, FileDigest.sha256(data) == file.sha256 else {
                throw ServeError.fileChanged(file.path)
            }
            return data
        }
    }

    /// A gzip file's content, for a client that does not accept gzip.
    func inflated(_ file: ReleasedFile, at path: String) throws -> Data {
        let gzip = try bytes(of: file, at: path)
        return try cached("inflated-" + file.sha256) { try Gunzip.inflate(gzip, name: file.path) }
    }

    private func cached(_ key: String, _ load: () throws -> Data) throws -> Data {
        if let held = files.withLock({ $0.entries[key] }) { return held }
        let data = try load()
        files.withLock { state in
            if state.bytes + data.count > Self.budget { state = ([:], 0) }
            if data.count <= Self.budget {
                state.entries[key] = data
                state.bytes += data.count
            }
        }
        return data
    }
}

enum ServeError: Error, LocalizedError {
    case fileChanged(String)

    var errorDescription: String? {
        switch self {
        case .fileChanged(let path): return "\(path): its size or SHA-256 is not the manifest's; it is not served"
        }
    }
}
