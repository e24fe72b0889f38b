import Foundation
import NIOConcurrencyHelpers
import PostgresNIO

/// A wait of the sync's transaction for a lock another session holds, as `PostgresSync.onWaiting`
/// is told it: past `LockWatch.quietSeconds`, then each time whoever blocks it changes.
public struct PostgresLockWait: Sendable, Equatable, CustomStringConvertible {
    /// A session the sync's transaction waits for.
    public struct Holder: Sendable, Equatable, CustomStringConvertible {
        /// Its backend's process id (`pg_terminate_backend` takes it).
        public var pid: Int
        /// What the session calls itself (`application_name`): `rails`, `psql`, another sync.
        public var applicationName: String?
        /// Where it connected from, where the role may see it.
        public var clientAddress: String?
        /// `active`, `idle in transaction`, … (nil where the role may not see it).
        public var state: String?
        /// When its transaction began, UTC (`2026-12-01 19:52:00`), where the role may see it.
        public var since: String?

        /// Whether it is another run of the sync (a killed one's backend, still waiting or holding).
        public var isSync: Bool { applicationName == ServerSession.applicationName }

        public var description: String {
            var words = "backend \(pid)"
            if isSync {
                words += " (another sync-postgres run; if that run is gone: SELECT pg_terminate_backend(\(pid)))"
            } else if let applicationName, !applicationName.isEmpty {
                words += " (\(applicationName))"
            }
            if let clientAddress { words += " from \(clientAddress)" }
            if let state { words += ", \(state)" }
            if let since { words += " since \(since) UTC" }
            return words
        }
    }

    /// The step the sync is at.
    public var step: String
    /// Seconds the statement has waited.
    public var seconds: Int
    /// The limit (`--lock-timeout`).
    public var limit: Int
    /// Whom it waits for: every session `pg_blocking_pids` names.
    public var holders: [Holder]

    public var description: String {
        "waiting \(seconds) s (of --lock-timeout \(limit)) while \(step), for a lock held by " + holders.map(\.description).joined(separator: "; ")
    }
}

/// Watches the sync's own backend from a second connection while its transaction runs: the first
/// `quietSeconds` nothing (the usual run never opens the connection), then once a second whom it
/// waits for (`pg_blocking_pids`), told to `onWaiting` when that changes, and kept for the
/// lock-timeout refusal to name.
final class LockWatch: Sendable {
    static let quietSeconds = 2

    private let address: PostgresAddress
    private let backend: Int
    private let limit: Int
    private let onWaiting: @Sendable (PostgresLockWait) -> Void
    private let step = NIOLockedValueBox("starting the transaction")
    private let lastSeen = NIOLockedValueBox<[PostgresLockWait.Holder]>([])

    init(address: PostgresAddress, backend: Int, limit: Int, onWaiting: @escaping @Sendable (PostgresLockWait) -> Void) {
        self.address = address
        self.backend = backend
        self.limit = limit
        self.onWaiting = onWaiting
    }

    /// Who held what the sync last waited for, in words.
    var holders: [String] { lastSeen.withLockedValue { $0.map(\.description) } }

    /// What the sync does now, for the words.
    func at(_ step: String) { self.step.withLockedValue { $0 = step } }

    /// Runs `body` with the watch beside it, ended (and its connection closed) when `body` ends.
    func during<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let watching = Task { await watch() }
        do {
            let result = try await body()
            watching.cancel()
            await watching.value
            return result
        } catch {
            watching.cancel()
            await watching.value
            throw error
        }
    }

    private func watch() async {
        guard (try? await Task.sleep(for: .seconds(Self.quietSeconds))) != nil,
              let session = try? await ServerSession.connect(address) else { return }
        var told: [PostgresLockWait.Holder] = []
        while !Task.isCancelled {
            guard let (seconds, holders) = try? await blockers(session) else { break }
            if !holders.isEmpty {
                lastSeen.withLockedValue { $0 = holders }
                if holders != told { onWaiting(PostgresLockWait(step: step.withLockedValue { $0 }, seconds: seconds, limit: limit, holders: holders)) }
            }
            told = holders
            guard (try? await Task.sleep(for: .seconds(1))) != nil else { break }
        }
        await session.close()
    }

    /// How long the sync's statement has run, and whom it waits for.
    private func blockers(_ session: ServerSession) async throws -> (Int, [PostgresLockWait.Holder]) {
        var binds = PostgresBindings()
        binds.append(backend)
        let rows = try await session.rows("watching the sync's wait", PostgresQuery(unsafeSQL: """
            SELECT coalesce((SELECT extract(epoch FROM clock_timestamp() - query_start)::int FROM pg_stat_activity WHERE pid = $1), 0),
                   b.pid, b.application_name, host(b.client_addr), b.state,
                   to_char(b.xact_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
            FROM unnest(pg_blocking_pids($1::int)) AS p(pid) JOIN pg_stat_activity b ON b.pid = p.pid
            ORDER BY b.pid
            """, binds: binds))
        var seconds = 0
        let holders = try rows.map { row in
            let (waited, pid, application, client, state, since) = try row.decode((Int, Int, String?, String?, String?, String?).self)
            seconds = waited
            return PostgresLockWait.Holder(pid: pid, applicationName: application, clientAddress: client, state: state, since: since)
        }
        return (seconds, holders)
    }
}
