import Foundation

/// Where the web service's database is: `postgres://user:password@host:5432/database`, the form
/// libpq and every PostgreSQL tool read (the password may instead come from `PGPASSWORD`).
/// `?sslmode=require` asks for TLS; without it the connection is plain, as on loopback.
public struct PostgresAddress: Sendable, Equatable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// Its port (5432 unless the address says).
    public var port: Int
    /// The role the sync connects as: it must be allowed to create the schema.
    public var user: String
    /// The password, from the address or `PGPASSWORD`; never printed.
    public var password: String?
    /// The database the web service uses.
    public var database: String
    /// Whether the connection must be encrypted (`sslmode=require`).
    public var requiresTLS: Bool

    /// Reads `text`; `environment` supplies `PGPASSWORD` when the address has no password.
    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        // The text is never repeated in an error: it may hold a password, whole or cut by a character left unencoded.
        guard let components = URLComponents(string: text) else {
            throw PostgresSyncError.badAddress(text: "", reason: """
                not a URL such as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE; percent-encode any @ / : # ? % or space in the user or                 password (@ is %40, / is %2F, : is %3A, # is %23)
                """)
        }
        guard ["postgres", "postgresql"].contains(components.scheme ?? ""), let host = components.host, !host.isEmpty else {
            throw PostgresSyncError.badAddress(text: "", reason: "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else {
            throw PostgresSyncError.badAddress(text: "", reason: "no database named after the host (expected …@HOST:PORT/DATABASE)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw PostgresSyncError.badAddress(text: "", reason: "no user (expected postgres://USER@HOST/DATABASE)")
        }
        let sslmode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        guard ["disable", "require"].contains(sslmode) else {
            throw PostgresSyncError.badAddress(text: "", reason: "sslmode=\(sslmode) (expected disable or require)")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 } ?? environment["PGPASSWORD"]
        self.database = database.removingPercentEncoding ?? database
        self.requiresTLS = sslmode == "require"
    }

    /// The address without its password: what messages and reports show.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }
}
