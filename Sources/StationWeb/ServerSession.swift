import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// One connection to the web service's database, whose errors say what the sync was doing and
/// what the server answered (never the password).
struct ServerSession: Sendable {
    /// The sync's sessions' `application_name`, by which a later run knows a run's backend.
    static let applicationName = "station-admin sync-postgres"

    let connection: PostgresConnection
    let address: PostgresAddress
    let logger: Logger

    static func connect(_ address: PostgresAddress) async throws -> ServerSession {
        var logger = Logger(label: "station-admin.sync-postgres")
        logger.logLevel = .critical
        do {
            let tls: PostgresConnection.Configuration.TLS = address.requiresTLS
                ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable
            var configuration = PostgresConnection.Configuration(host: address.host, port: address.port, username: address.user,
                                                                 password: address.password, database: address.database, tls: tls)
            // What another session's pg_stat_activity (and a later run waiting on this one) shows.
            configuration.options.additionalStartupParameters = [("application_name", Self.applicationName)]
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            return ServerSession(connection: connection, address: address, logger: logger)
        } catch {
            throw PostgresSyncError.cannotConnect(address: address.description, reason: Self.describe(error))
        }
    }

    /// Runs `query`, its rows discarded.
    func run(_ step: String, _ query: PostgresQuery) async throws {
        _ = try await rows(step, query)
    }

    func run(_ step: String, _ sql: String) async throws {
        _ = try await rows(step, PostgresQuery(unsafeSQL: sql))
    }

    func rows(_ step: String, _ sql: String) async throws -> [PostgresRow] {
        try await rows(step, PostgresQuery(unsafeSQL: sql))
    }

    func rows(_ step: String, _ query: PostgresQuery) async throws -> [PostgresRow] {
        do {
            return try await connection.query(query, logger: logger).collect()
        } catch {
            throw refusal(step, error)
        }
    }

    /// A standby (in recovery) or a database that takes no writes for this role, refused first:
    /// before anything is downloaded, and also when it looks up to date.
    func refuseReadOnly() async throws {
        let (standby, readOnly) = try await rows("checking that the database takes writes",
                                                 "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'")[0].decode((Bool, Bool).self)
        if standby { throw PostgresSyncError.standby(address: address.description) }
        if readOnly { throw PostgresSyncError.readOnly(address: address.description) }
    }

    /// Runs `sql`, handing each row to `body` as it arrives (a table read whole without holding it whole).
    func each(_ step: String, _ sql: String, _ body: (PostgresRow) async throws -> Void) async throws {
        do {
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) { try await body(row) }
        } catch let error as PSQLError {
            throw refusal(step, error)
        }
    }

    /// The server's refusal in words: a missing privilege (SQLSTATE 42501) with the `GRANT` that
    /// gives it, anything else with the server's message and SQLSTATE.
    private func refusal(_ step: String, _ error: any Error) -> PostgresSyncError {
        if let error = error as? PSQLError, let info = error.serverInfo, info[.sqlState] == "42501", let message = info[.message] {
            return PostgresSyncError.missingPrivilege(address: address.description, step: step, message: message,
                                                      grant: Self.grant(fixing: message, role: address.user))
        }
        if let error = error as? PSQLError, let info = error.serverInfo, info[.sqlState] == "57014", info[.message]?.contains("statement timeout") == true {
            return PostgresSyncError.statementTimeout(address: address.description, step: step)
        }
        return PostgresSyncError.server(address: address.description, step: step, message: Self.describe(error))
    }

    /// The `GRANT` that gives what a "permission denied for KIND NAME" message says is missing
    /// (docs/web.md, "Grants").
    static func grant(fixing message: String, role: String) -> String {
        let words = message.split(separator: " ", maxSplits: 4).map(String.init)
        guard words.count == 5, words[0] == "permission", words[2] == "for" else { return "the grants docs/web.md lists for the sync's role" }
        let (kind, name) = (words[3], words[4])
        let quotedRole = "\"" + role.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        switch kind {
        case "table", "relation": return "GRANT SELECT, INSERT ON TABLE \(name) TO \(quotedRole)"
        case "sequence": return "GRANT USAGE ON SEQUENCE \(name) TO \(quotedRole)"
        case "schema": return "GRANT USAGE, CREATE ON SCHEMA \(name) TO \(quotedRole)"
        case "database": return "GRANT CREATE, TEMPORARY ON DATABASE \(name) TO \(quotedRole)"
        default: return "the grants docs/web.md lists for the sync's role"
        }
    }

    /// Several statements at once (the operator's file) inside the sync's transaction, which they
    /// cannot end: the text runs through PL/pgSQL's `EXECUTE` in a temporary function that takes
    /// it as a bound argument (no quoting), where a `COMMIT`, `ROLLBACK` or savepoint command is
    /// refused by the server and aborts the transaction; the transaction's id is checked after as
    /// well, so a script that ended it by any other way fails the run and nothing is committed.
    func script(_ step: String, _ sql: String) async throws {
        let before = try await transactionID(step)
        try await run(step, """
            CREATE FUNCTION pg_temp.station_admin_operator_sql(script text) RETURNS void LANGUAGE plpgsql
            AS $body$ BEGIN EXECUTE script; END $body$
            """)
        var binds = PostgresBindings()
        binds.append(sql)
        try await run(step, PostgresQuery(unsafeSQL: "SELECT pg_temp.station_admin_operator_sql($1)", binds: binds))
        try await run(step, "DROP FUNCTION pg_temp.station_admin_operator_sql(text)")
        guard try await transactionID(step) == before else { throw PostgresSyncError.operatorSQLEndedTransaction }
    }

    func transactionID(_ step: String) async throws -> String? {
        try await rows(step, "SELECT txid_current()::text").first?.decode(String.self)
    }

    func copy(_ step: String, into table: String, columns: [String], _ write: (PostgresCopyFromWriter) async throws -> Void) async throws {
        do {
            try await connection.copyFrom(table: table, columns: columns, logger: logger, writeData: write)
        } catch let error as PostgresSyncError {
            throw error
        } catch {
            throw PostgresSyncError.server(address: address.description, step: step, message: Self.describe(error))
        }
    }

    func close() async {
        try? await connection.close()
    }

    /// The server's own words where it gave some (`password authentication failed for user "x"
    /// [SQLSTATE 28P01]`), else what happened on the way, in words (`connection refused: no server
    /// listens on 127.0.0.1:5433`), never a driver's type name.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let info = error.serverInfo, let message = info[.message] {
                return message + (info[.hint].map { " (\($0))" } ?? "") + (info[.sqlState].map { " [SQLSTATE \($0)]" } ?? "")
            }
            switch error.code {
            case .authMechanismRequiresPassword:
                return "the server asks for a password and none was given (put it in the URL, percent-encoded, or in PGPASSWORD)"
            case .unsupportedAuthMechanism: return "the server asks for an authentication method this client does not support (use scram-sha-256 or md5)"
            case .sslUnsupported: return "the server does not offer TLS, which sslmode=require asks for"
            case .serverClosedConnection, .uncleanShutdown:
                return "the server closed the connection (it stopped or restarted, or something between cut it)"
            case .queryCancelled: return "the server cancelled the statement (a statement_timeout, or an administrator)"
            default:
                if let underlying = error.underlying { return describe(underlying) }
                return "the connection failed (\(error.code))"
            }
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil && error.dnsAAAAError != nil && error.connectionErrors.isEmpty {
                return "the host \(error.host) cannot be resolved (check the name in --database)"
            }
            if let failure = error.connectionErrors.first { return describe(failure.error) + " (\(error.host):\(error.port))" }
            return "cannot connect to \(error.host):\(error.port)"
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused: no server listens there"
            case ETIMEDOUT: return "the connection timed out"
            case EHOSTUNREACH, ENETUNREACH: return "the host cannot be reached"
            default: return String(cString: strerror(error.errnoCode))
            }
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "the connection timed out" }
        return error.localizedDescription
    }
}
