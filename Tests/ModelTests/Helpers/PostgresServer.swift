import Foundation
import Testing

/// A real PostgreSQL server the tests start themselves: `initdb` into a temporary folder (as the
/// `postgres` user when the tests run as root, since PostgreSQL refuses root), a free port on
/// loopback, password authentication (scram-sha-256), stopped when the test process ends. One
/// server for the process; each test makes a database of its own.
final class PostgresServer: Sendable {
    static let user = "station"
    static let password = "sync-test-password"

    let folder: String
    let port: Int
    let binaries: String

    /// The process's server, started on first use; nil when PostgreSQL is not installed.
    static let shared: PostgresServer? = {
        guard let server = try? PostgresServer() else { return nil }
        atexit { PostgresServer.shared?.stop() }
        return server
    }()

    /// A server of the test's own, for what would disturb the others (a restart, a primary with a
    /// standby): the caller stops it.
    static func ofItsOwn() throws -> PostgresServer { try PostgresServer() }

    private init() throws {
        let candidates = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let newest = candidates.compactMap(Int.init).max() else { throw CocoaError(.fileNoSuchFile) }
        binaries = "/usr/lib/postgresql/\(newest)/bin"
        folder = try Self.makeFolder("postgres")
        try Data((Self.password + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/password"))
        port = try ServeTests.freePort()
        try Self.check(try asServerUser([binaries + "/initdb", "-D", folder + "/data", "-U", Self.user, "--pwfile=" + folder + "/password",
                                         "--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"]), "initdb")
        try Self.check(try asServerUser([binaries + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/server.log", "-w", "start",
                                         "-o", "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50"]), "pg_ctl start")
    }

    private init(folder: String, port: Int, binaries: String) {
        self.folder = folder
        self.port = port
        self.binaries = binaries
    }

    /// A folder the server's user owns.
    private static func makeFolder(_ name: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if getuid() == 0 { try Self.check(try Self.spawn(["/usr/bin/chown", "-R", "postgres:", folder]), "chown") }
        return folder
    }

    /// A hot standby of this server, as an operator makes one (`pg_basebackup -R`: streaming
    /// replication from it), started on a port of its own; the caller stops it.
    func startStandby() throws -> PostgresServer {
        let folder = try Self.makeFolder("postgres-standby")
        try Self.check(try asServerUser([binaries + "/pg_basebackup", "-d", "host=127.0.0.1 port=\(port) user=\(Self.user) password=\(Self.password)",
                                         "-D", folder + "/data", "-R", "-X", "stream", "-c", "fast"]), "pg_basebackup")
        let port = try ServeTests.freePort()
        try Self.check(try asServerUser([binaries + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/server.log", "-w", "start",
                                         "-o", "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1"]), "pg_ctl start (standby)")
        return PostgresServer(folder: folder, port: port, binaries: binaries)
    }

    /// Stops the server (fast: sessions are ended as a shutdown ends them) and starts it again.
    func restart() throws {
        try Self.check(try asServerUser([binaries + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/server.log", "-m", "fast", "-w", "restart"]), "pg_ctl restart")
    }

    func stop() {
        _ = try? asServerUser([binaries + "/pg_ctl", "-D", folder + "/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `postgres://station:…@127.0.0.1:PORT/DATABASE`.
    func address(_ database: String, password: String = PostgresServer.password) -> String {
        "postgres://\(Self.user):\(password)@127.0.0.1:\(port)/\(database)"
    }

    /// A new, empty database.
    func makeDatabase() throws -> String {
        let name = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "_")
        _ = try psql("postgres", "CREATE DATABASE \(name)")
        return name
    }

    /// Runs SQL with `psql` (unaligned, tuples only, `|` between values); the output.
    @discardableResult
    func psql(_ database: String, _ sql: String) throws -> String {
        let result = try CommandRunner.run(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", Self.user,
                                            "-d", database, "-c", sql],
                                           environment: ["PGPASSWORD": Self.password], program: URL(fileURLWithPath: binaries + "/psql"))
        guard result.status == 0 else { throw PostgresCommandFailed(command: sql, output: result.stderr) }
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    private func asServerUser(_ command: [String]) throws -> Int32 {
        try Self.asServerUser(command)
    }

    static func asServerUser(_ command: [String]) throws -> Int32 {
        getuid() == 0 ? try spawn(["/usr/sbin/runuser", "-u", "postgres", "--"] + command) : try spawn(command)
    }

    /// Runs `command` with its output appended to the server's folder's `tools.log`, and waits.
    /// Not `Process`: its wait never returned for `runuser` here (the child left a zombie that
    /// Foundation's SIGCHLD monitor did not reap), so the server's tools are spawned and waited
    /// for directly.
    static func spawn(_ command: [String], log: String = "/dev/null") throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var pid = pid_t()
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw PostgresCommandFailed(command: command.joined(separator: " "), output: String(cString: strerror(spawned))) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return 0 }
        }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    private static func check(_ status: Int32, _ what: String) throws {
        guard status == 0 else { throw PostgresCommandFailed(command: what, output: "exit status \(status)") }
    }
}

struct PostgresCommandFailed: Error, CustomStringConvertible {
    let command: String
    let output: String
    var description: String { "\(command): \(output)" }
}

/// pgbouncer in front of a `PostgresServer`, as a web service pools its connections: transaction
/// pooling (each transaction may run on another server connection), the server's user and
/// password (scram-sha-256), on a free port; stopped by `stop()`. nil when pgbouncer is not
/// installed.
final class PgBouncer: Sendable {
    let port: Int
    private let folder: String

    init?(before server: PostgresServer) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/pgbouncer") else { return nil }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("pgbouncer-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        port = try ServeTests.freePort()
        try Data("\"\(PostgresServer.user)\" \"\(PostgresServer.password)\"\n".utf8).write(to: URL(fileURLWithPath: folder + "/userlist.txt"))
        try Data("""
            [databases]
            * = host=127.0.0.1 port=\(server.port)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = scram-sha-256
            auth_file = \(folder)/userlist.txt
            pool_mode = transaction
            logfile = \(folder)/pgbouncer.log
            pidfile = \(folder)/pgbouncer.pid

            """.utf8).write(to: URL(fileURLWithPath: folder + "/pgbouncer.ini"))
        // pgbouncer refuses to run as root.
        if getuid() == 0 { _ = try PostgresServer.spawn(["/usr/bin/chown", "-R", "postgres:", folder]) }
        // As the server's tools are run (`PostgresServer.asServerUser`): Foundation's Process never saw runuser end here.
        let started = try PostgresServer.asServerUser(["/usr/sbin/pgbouncer", "-d", folder + "/pgbouncer.ini"])
        guard started == 0 else { throw PostgresCommandFailed(command: "pgbouncer", output: "exit status \(started)") }
        for _ in 0..<250 where !FileManager.default.fileExists(atPath: folder + "/pgbouncer.pid") { usleep(20_000) }
    }

    /// `postgres://station:…@127.0.0.1:PORT/DATABASE`, through pgbouncer.
    func address(_ database: String) -> String {
        "postgres://\(PostgresServer.user):\(PostgresServer.password)@127.0.0.1:\(port)/\(database)"
    }

    func stop() {
        if let text = try? String(contentsOfFile: folder + "/pgbouncer.pid", encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// What pgbouncer logged, for a failing test's message.
    var log: String { (try? String(contentsOfFile: folder + "/pgbouncer.log", encoding: .utf8)) ?? "" }
}
