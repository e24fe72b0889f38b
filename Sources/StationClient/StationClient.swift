// What an app imports: the whole client (StationClientCore) and `HTTPReleaseSource`'s
// `URLSessionConfiguration` initializer. The initializer and `URLSession`'s transport live here,
// apart from the core, because on Linux they need FoundationNetworking, which loads libcurl and
// thirty libraries with it into every process that links it: the curator's tool links only the
// core, and loads libcurl when it first fetches over HTTP.
@_exported import StationClientCore
