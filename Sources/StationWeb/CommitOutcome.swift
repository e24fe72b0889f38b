import Foundation
import PostgresNIO

/// Whether the sync's transaction committed, asked on new connections after the one that sent
/// COMMIT dropped before the answer: a server that stops while a commit waits (for a synchronous
/// standby, say) may have committed it locally first.
enum CommitOutcome: Equatable {
    case committed
    case notCommitted
    /// `reason`: why it could not be told, in words.
    case unknown(reason: String)

    /// How long the server is asked for (a restart's time), a second apart.
    static let askingSeconds = 30

    /// `transaction`: the transaction's id (`txid_current()`), read before the COMMIT.
    static func ask(_ address: PostgresAddress, transaction: String, seconds: Int = askingSeconds) async -> CommitOutcome {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var reason = "no answer"
        while true {
            do {
                let session = try await ServerSession.connect(address)
                var binds = PostgresBindings()
                binds.append(transaction)
                let rows = try? await session.rows("asking whether the sync's transaction committed",
                                                   PostgresQuery(unsafeSQL: "SELECT txid_status($1::bigint)", binds: binds))
                await session.close()
                if let row = rows?.first {
                    switch try row.decode(String?.self) {
                    case "committed"?: return .committed
                    case "aborted"?: return .notCommitted
                    case nil: return .unknown(reason: "the server no longer knows transaction \(transaction)")
                    case let status?: reason = "transaction \(transaction) is still \(status)"
                    }
                } else {
                    reason = "the server did not answer txid_status"
                }
            } catch {
                reason = error.localizedDescription
            }
            guard ContinuousClock.now < deadline else { return .unknown(reason: "\(reason), after \(seconds) s of asking") }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
