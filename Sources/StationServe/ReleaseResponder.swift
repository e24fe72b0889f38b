import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import StationManifest
import StationReleaseFolder
import StationSignatures
import StationSupport
import Synchronization

/// Answers phones from a release folder (docs/publishing.md, "Serving releases"):
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
    /// Told one line for every 4xx and 5xx answer, with its reason (standard error, always).
    let logError: @Sendable (String) -> Void
    let cache = SmallFileCache()
    let verified = VerifiedFiles()

    static let immutable = "public, max-age=31536000, immutable"
    static let revalidate = "no-cache"
    static let dataVersion = HTTPField.Name("X-Data-Version")!
    static let carryOver = HTTPField.Name("X-Carry-Over")!
    static let answerKind = HTTPField.Name("X-Update-Kind")!
    static let link = HTTPField.Name("Link")!

    func respond(to request: Request, context: Context) async throws -> Response {
        do {
            let response = try await answer(request, context.channel)
            return request.method == .head ? response.createHeadResponse() : response
        } catch {
            // Every refusal is logged with its reason; a phone is told what it can act on.
            let refusal = error as? Refusal
                ?? Refusal(.internalServerError, "this file cannot be sent now (the server's log says why); try again later",
                           reason: ErrorText.describe(error))
            logError("\(refusal.status.code) \(request.method.rawValue) \(request.uri.string): \(refusal.reason)")
            var response = Self.error(refusal.status, refusal.message, newest: refusal.newest)
            if refusal.status == .methodNotAllowed { response.headers[.allow] = "GET, HEAD" }
            return request.method == .head ? response.createHeadResponse() : response
        }
    }

    private func answer(_ request: Request, _ channel: any Channel) async throws -> Response {
        if request.headers[RequestHeadRules.hostProblem] != nil {
            throw Refusal(.badRequest, "an HTTP/1.1 request carries exactly one Host header (RFC 9112, 3.2)")
        }
        guard request.method == .get || request.method == .head else {
            throw Refusal(.methodNotAllowed, "only GET and HEAD are served")
        }
        guard let snapshot = release.current() else {
            throw Refusal(.serviceUnavailable, "no release is published in this folder yet (run station-admin release)")
        }
        switch request.uri.path {
        case "/update":
            return try await update(request, snapshot)
        case "/" + Manifest.fileName:
            return Self.conditional(request, etag: snapshot.sha256, cacheControl: Self.revalidate) {
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: snapshot.bytes)))
            }
        case "/" + ManifestSignatures.fileName:
            return try signatures(request)
        default:
            return try await file(request, snapshot, channel)
        }
    }

    /// `manifest.json.sig`, revalidated as the manifest is: a release renames it in just before
    /// the manifest, and it holds the signatures of both, so either manifest a phone read verifies.
    private func signatures(_ request: Request) throws -> Response {
        guard ManifestAudit.kind(release.path(of: ManifestSignatures.fileName)) != nil else {
            throw Refusal(.notFound, "this release folder is not signed (station-admin release --sign)")
        }
        let file = try ServedFile(ManifestSignatures.fileName, bytes: nil, in: release.folder)
        let bytes = try file.read(offset: 0, count: Int(file.identity.size))
        return Self.conditional(request, etag: FileDigest.sha256(bytes.readableBytesView), cacheControl: Self.revalidate) {
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: bytes))
        }
    }

    /// An answer other than the file: its status, the JSON error the phone reads, and the reason
    /// the server's log keeps (the same, unless it names what only the curator should read).
    struct Refusal: Error {
        let status: HTTPResponse.Status
        let message: String
        let reason: String
        let newest: Int?

        init(_ status: HTTPResponse.Status, _ message: String, reason: String? = nil, newest: Int? = nil) {
            self.status = status
            self.message = message
            self.reason = reason ?? message
            self.newest = newest
        }
    }

    // MARK: /update

    private func update(_ request: Request, _ snapshot: ServedRelease.Snapshot) async throws -> Response {
        let from = request.uri.queryParameters["from"].map(String.init)
        let answer = snapshot.manifest.answer(from: from)
        let acceptsGzip = Self.acceptsGzip(request)
        // The answer changes with the manifest, and the delta's bytes with the encoding.
        let etag = "update-\(snapshot.sha256.prefix(16))-\(from ?? "")\(acceptsGzip ? "-gzip" : "")"
        switch answer {
        case let .refused(status, message):
            throw Refusal(HTTPResponse.Status(code: status), message, newest: snapshot.manifest.newest)
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
            let body = FullDownloadAnswer(database: database, carryOver: carryOver, to: version)
            return Response(status: .seeOther, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try Self.json(body))))
        case let .delta(file, version):
            return try await Self.conditional(request, etag: etag, cacheControl: Self.revalidate) {
                var headers = HTTPFields()
                headers[.contentType] = "application/sql; charset=utf-8"
                headers[.vary] = "Accept-Encoding"
                headers[Self.dataVersion] = String(version)
                headers[Self.answerKind] = "delta"
                let bytes: ByteBuffer
                let gzip = try smallFileBytes(try await checkedFile(file), file)
                if acceptsGzip {
                    headers[.contentEncoding] = "gzip"
                    bytes = gzip
                } else {
                    bytes = try cache.inflated(file, gzip: gzip)
                }
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: bytes))
            }
        }
    }

    // MARK: Files

    private func file(_ request: Request, _ snapshot: ServedRelease.Snapshot, _ channel: any Channel) async throws -> Response {
        // Only a path the manifest lists, compared as text: no `..`, no listing, no lock file,
        // no link (the audit refused manifests whose paths are not plain files inside the folder).
        guard let decoded = request.uri.path.removingPercentEncoding, decoded.hasPrefix("/"),
              let listed = snapshot.manifest.listedFile(String(decoded.dropFirst()))
        else {
            throw Refusal(.notFound, "no such file in this release folder (see /manifest.json)")
        }
        // Opened and checked before any header is sent: a file that is not the manifest's is a
        // 500 with its reason in the log, never the manifest's length over other bytes.
        let opened = try await checkedFile(listed)
        return try await Self.conditional(request, etag: listed.sha256, cacheControl: Self.immutable) {
            var headers = HTTPFields()
            headers[.contentType] = Self.contentType(of: listed.path)
            headers[.acceptRanges] = "bytes"
            let size = listed.bytes
            switch ByteRange(header: Self.rangeApplies(request, etag: listed.sha256) ? request.headers[.range] : nil, size: size) {
            case .unsatisfiable:
                // Answered, not thrown (its headers are the file's), so logged here like every 4xx.
                logError("416 \(request.method.rawValue) \(request.uri.string): the range \(request.headers[.range] ?? "") starts past the end of \(listed.path) (\(size) bytes)")
                headers[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            case .part(let range):
                headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
                headers[.contentLength] = String(range.count)
                return Response(status: .partialContent, headers: headers, body: try await body(opened, listed, range, head: request.method == .head, channel))
            case .whole:
                headers[.contentLength] = String(size)
                let range = size > 0 ? 0...(size - 1) : nil
                return Response(status: .ok, headers: headers, body: try await body(opened, listed, range, head: request.method == .head, channel))
            }
        }
    }

    /// `listed` opened as `ServedFile` requires, its content checked against the manifest's hash
    /// (once per change of the file; hashing a large file is done off Swift's few worker threads).
    private func checkedFile(_ listed: ReleasedFile) async throws -> ServedFile {
        let folder = release.folder, verified = self.verified
        if listed.bytes <= SmallFileCache.largestFile {
            let file = try ServedFile(listed, in: folder)
            try verified.check(file, against: listed)
            return file
        }
        return try await NIOThreadPool.singleton.runIfActive {
            let file = try ServedFile(listed, in: folder)
            try verified.check(file, against: listed)
            return file
        }
    }

    /// A checked small file's bytes, from memory after the first read (keyed by its SHA-256).
    private func smallFileBytes(_ file: ServedFile, _ listed: ReleasedFile) throws -> ByteBuffer {
        try cache.bytes(sha256: listed.sha256) {
            try file.read(offset: 0, count: Int(file.identity.size))
        }
    }

    /// Small files from memory, shared by every response (a slice of the cached buffer, not a
    /// copy); large ones streamed from the checked file in `chunkBytes` `pread`s on NIO's thread
    /// pool, each read straight into the buffer sent. A file that shrinks while sent cuts the
    /// response short (the client sees fewer bytes than `Content-Length` and retries).
    ///
    /// A write returns once the chunk is handed to the connection's event loop, before that loop
    /// has written it and found the socket full: without waiting, a stalled download would read
    /// chunk after chunk into memory before its writer learns to wait. So after each chunk the
    /// body waits for the event loop to have taken it (a task queued behind it); by then the
    /// writability is the socket's, and the next write waits while the socket does not drain. A
    /// stalled download holds about `chunkBytes` plus `ReleaseHTTP1Channel.writeBufferWaterMark`.
    private func body(_ file: ServedFile, _ listed: ReleasedFile, _ range: ClosedRange<Int>?, head: Bool,
                      _ channel: any Channel) async throws -> ResponseBody {
        guard let range, !head else { return ResponseBody() }
        if listed.bytes <= SmallFileCache.largestFile {
            let bytes = try smallFileBytes(file, listed)
            return ResponseBody(byteBuffer: bytes.getSlice(at: bytes.readerIndex + range.lowerBound, length: range.count)!)
        }
        return ResponseBody(contentLength: range.count) { writer in
            var offset = range.lowerBound
            while offset <= range.upperBound {
                let count = min(Self.chunkBytes, range.upperBound + 1 - offset)
                let chunk = try await NIOThreadPool.singleton.runIfActive { [offset] in try file.read(offset: offset, count: count) }
                try await writer.write(chunk)
                try await channel.eventLoop.submit {}.get()
                offset += count
            }
            try await writer.finish(nil)
        }
    }

    /// What one read of a large file holds for its connection.
    static let chunkBytes = 16 << 10

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
        if let notModified = notModified(request, etag: etag, cacheControl: cacheControl) { return notModified }
        return tagged(try await make(), etag: etag, cacheControl: cacheControl)
    }

    /// `conditional`, for an answer made without waiting.
    static func conditional(_ request: Request, etag: String, cacheControl: String, _ make: () throws -> Response) rethrows -> Response {
        if let notModified = notModified(request, etag: etag, cacheControl: cacheControl) { return notModified }
        return tagged(try make(), etag: etag, cacheControl: cacheControl)
    }

    /// `304 Not Modified`, tagged, when the request's `If-None-Match` names `etag` (weak or
    /// strong) or `*`; nil otherwise.
    private static func notModified(_ request: Request, etag: String, cacheControl: String) -> Response? {
        let quoted = "\"\(etag)\""
        guard let held = request.headers[.ifNoneMatch], held.split(separator: ",").contains(where: { tag in
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == quoted || tag == "W/" + quoted
        }) else { return nil }
        return tagged(Response(status: .notModified), etag: etag, cacheControl: cacheControl)
    }

    /// A success carries the file's ETag and `cacheControl`; an error (a 416 for a range past the
    /// end) is about one request, not the file: stored by no cache, and without the file's ETag,
    /// so that no cache answers the next request for the file with it.
    private static func tagged(_ response: Response, etag: String, cacheControl: String) -> Response {
        var response = response
        guard response.status.code < 400 else {
            response.headers[.cacheControl] = errorCacheControl
            return response
        }
        response.headers[.eTag] = "\"\(etag)\""
        response.headers[.cacheControl] = cacheControl
        return response
    }

    /// What every error answer says to caches.
    static let errorCacheControl = "no-store"

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
