import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StationClientCore

extension HTTPReleaseSource {
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
        #if os(Linux)
        self.init(baseURL: baseURL, configuration: configuration, transport: .curl)
        #else
        self.init(baseURL: baseURL, configuration: configuration, transport: .urlSession)
        #endif
    }

    /// The folder at `baseURL`, fetched by `transport` (the tests run both where both exist).
    package init(baseURL: URL, configuration: URLSessionConfiguration, transport: Transport) {
        switch transport {
        case .urlSession: self.init(baseURL: baseURL, transport: URLSessionTransport(configuration: configuration))
        case .curl:
            #if os(Linux)
            let headers = (configuration.httpAdditionalHeaders ?? [:]).compactMap { name, value in
                (name as? String).map { ($0, "\(value)") }
            }
            self.init(curlAt: baseURL, idleTimeout: configuration.timeoutIntervalForRequest, headers: headers)
            #else
            preconditionFailure("libcurl's transport exists on Linux only")
            #endif
        }
    }
}
