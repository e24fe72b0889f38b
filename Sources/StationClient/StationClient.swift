// What an app imports: the whole client (StationClientCore), `HTTPReleaseSource`'s
// `URLSessionConfiguration` initializer, and the types its public API takes (`TrustedKey`, GRDB's
// `Database` and the `DatabasePool` an app opens beside it), so that one import serves the app.
// The initializer and `URLSession`'s transport live here, apart from the core, because on Linux
// they need FoundationNetworking, which loads libcurl and thirty libraries with it into every
// process that links it: the curator's tool links only the core, and loads libcurl when it first
// fetches over HTTP.
@_exported import GRDB
@_exported import StationClientCore
@_exported import StationSignatures
#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
