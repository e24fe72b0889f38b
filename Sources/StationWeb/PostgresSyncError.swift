import Foundation

/// Why `sync-postgres` wrote nothing: each names what to fix.
public enum PostgresSyncError: Error, LocalizedError, Sendable {
    case badAddress(text: String, reason: String)
    case badIdentifier(String, role: String)
    case badUserTable(String)
    case cannotConnect(address: String, reason: String)
    case server(address: String, step: String, message: String)
    case missingPrivilege(address: String, step: String, message: String, grant: String)
    case notAFirstRun(option: String, version: Int)
    case baselineAfterRelease(baseline: Int, release: Int)
    /// `evidence`: each finding in words; `matches`: the versions the data agrees with, in words, if any.
    case baselineDisagrees(baseline: Int, evidence: [String], matches: String?)
    case standby(address: String)
    case readOnly(address: String)
    /// `holders`: who held the lock, in words (`backend 4242, psql from 10.0.0.5, idle in transaction since …`), where seen.
    case lockTimeout(address: String, step: String, seconds: Int, holders: [String])
    case statementTimeout(address: String, step: String)
    /// The connection dropped during COMMIT and the server could not be asked afterwards.
    case commitUnknown(address: String, reason: String)
    case rollback(database: Int, release: Int)
    case sameVersionOtherContent(version: Int, database: String, release: String)
    case otherDataset(database: String, release: String)
    /// `asWritten`: the `--user-table` that names the table the catalog has in another case, if one.
    case missingUserTable(table: String, asWritten: String?)
    case badUpdatedColumn(table: String, column: String, type: String)
    case missingUserColumn(table: String, column: String)
    case changedByHand(table: String, column: String, expected: String, found: String?)
    case changedMeanwhile
    case operatorSQLEndedTransaction
    case unsafeScratch(path: String, reason: String)
    case damagedState(table: String, reason: String)

    /// The case, as `--json` names it (`missing-privilege`): spelled per case, so that a new
    /// case cannot compile without its name, and a rename of a case does not rename the contract.
    public var kind: String {
        switch self {
        case .badAddress: return "bad-address"
        case .badIdentifier: return "bad-identifier"
        case .badUserTable: return "bad-user-table"
        case .cannotConnect: return "cannot-connect"
        case .server: return "server"
        case .missingPrivilege: return "missing-privilege"
        case .notAFirstRun: return "not-a-first-run"
        case .baselineAfterRelease: return "baseline-after-release"
        case .baselineDisagrees: return "baseline-disagrees"
        case .standby: return "standby"
        case .readOnly: return "read-only"
        case .lockTimeout: return "lock-timeout"
        case .statementTimeout: return "statement-timeout"
        case .commitUnknown: return "commit-unknown"
        case .rollback: return "rollback"
        case .sameVersionOtherContent: return "same-version-other-content"
        case .otherDataset: return "other-dataset"
        case .missingUserTable: return "missing-user-table"
        case .badUpdatedColumn: return "bad-updated-column"
        case .missingUserColumn: return "missing-user-column"
        case .changedByHand: return "changed-by-hand"
        case .changedMeanwhile: return "changed-meanwhile"
        case .operatorSQLEndedTransaction: return "operator-sql-ended-transaction"
        case .unsafeScratch: return "unsafe-scratch"
        case .damagedState: return "damaged-state"
        }
    }

    /// The server's SQLSTATE, where the server refused.
    public var sqlState: String? {
        switch self {
        case .missingPrivilege: return "42501"
        case .lockTimeout: return "55P03"
        case .statementTimeout: return "57014"
        case .readOnly: return "25006"
        case let .server(_, _, message), let .cannotConnect(_, message):
            guard let range = message.range(of: "[SQLSTATE ") else { return nil }
            return String(message[range.upperBound...].prefix { $0 != "]" })
        default: return nil
        }
    }

    /// Whether a COMMIT that failed so may have committed all the same: the connection dropped
    /// (no SQLSTATE), or the server ended the session (class 08, connection; 57P, shutdown),
    /// where it may have committed locally first. A refusal of the COMMIT itself did not commit.
    package var mayHaveCommitted: Bool {
        guard case .server = self else { return false }
        guard let sqlState else { return true }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57P")
    }

    public var errorDescription: String? {
        switch self {
        case let .badAddress(text, reason):
            return text.isEmpty ? "--database: \(reason)" : "--database \(text): \(reason)"
        case let .badIdentifier(name, role):
            return "\(role) \"\(name)\" is not a plain PostgreSQL name (expected lower-case letters, digits and _, not starting with a digit)"
        case let .badUserTable(text):
            return "--user-table \(text): expected TABLE:USER_COLUMN or TABLE:USER_COLUMN:STATION_COLUMN, each a plain name or one in double quotes (e.g. completions:user_id, '\"Completions\":\"userId\"')"
        case let .cannotConnect(address, reason):
            return "cannot connect to \(address): \(reason) (check the host, port, user and password of --database, or PGPASSWORD)"
        case let .missingPrivilege(address, step, message, grant):
            return "\(address) refused \(step): \(message) [SQLSTATE 42501]; the sync's role lacks a privilege: \(grant)"
        case let .notAFirstRun(option, version):
            return "\(option) is for a database no sync has written yet; this one is at version \(version) (leave \(option) out)"
        case let .baselineAfterRelease(baseline, release):
            return "--baseline \(baseline) is after the release's newest version, \(release): name the version the web database's master data is at"
        case let .baselineDisagrees(baseline, evidence, matches):
            return "--baseline \(baseline) does not agree with the database: " + evidence.joined(separator: "; ")
                + (matches.map { ". The data matches \($0): give that to --baseline" } ?? ". The data matches no version of the folder: check which release the web database was brought to")
                + "; nothing written"
        case let .standby(address):
            return "\(address) is a standby (the server is in recovery): it cannot be written, and one that looks up to date says nothing of the primary; "
                + "point --database at the primary; nothing written"
        case let .readOnly(address):
            return "\(address) takes no writes (transaction_read_only is on for this role or database; is it a read replica?): point --database at the "
                + "primary, or turn default_transaction_read_only off for the sync's role; nothing written"
        case let .lockTimeout(address, step, seconds, holders):
            return "\(address): waited \(seconds) s for a lock while \(step) (--lock-timeout \(seconds))"
                + (holders.isEmpty ? "" : ", held by " + holders.joined(separator: "; "))
                + "; nothing written. Run it again once that transaction ends, or give it longer with --lock-timeout SECONDS"
        case let .statementTimeout(address, step):
            return "\(address) cancelled \(step) at the role's statement_timeout (SHOW statement_timeout): the sync sets none inside its own transaction, "
                + "so this was a statement before it; raise it for the sync's role (ALTER ROLE … SET statement_timeout = '5min'); nothing written"
        case let .commitUnknown(address, reason):
            return "the connection to \(address) dropped during COMMIT and the server could not be asked whether it committed (\(reason)): "
                + "run the sync again once the server answers; it finds the release recorded and stops, or makes it anew"
        case let .server(address, step, message):
            return "\(address) refused \(step): \(message)"
        case let .rollback(database, release):
            return "the database is at version \(database) and the folder's newest release is \(release): an older release (a rollback); nothing written"
        case let .sameVersionOtherContent(version, database, release):
            return "the database has version \(version) with content \(database.prefix(12))…, the folder's version \(version) is \(release.prefix(12))…: "
                + "a published version changed; nothing written (is this folder the one the database follows?)"
        case let .otherDataset(database, release):
            return "the database follows dataset \(database), the folder is of dataset \(release); nothing written (choose the folder of \(database))"
        case let .badUpdatedColumn(table, column, type):
            return "user table \(table): its updated-time column \(column) is of type \(type), which a split's copy cannot set to now (expected timestamptz, timestamp, a number of seconds or text; name another with --updated-column)"
        case let .missingUserTable(table, asWritten?):
            return "user table \(table) does not exist, but one of that name in another case does: a plain name is folded to lower case, "
                + "so name it as the framework made it, in double quotes: --user-table \(asWritten)"
        case let .missingUserTable(table, nil):
            return "user table \(table) does not exist (create it, or name the right one with --user-table TABLE:USER_COLUMN)"
        case let .missingUserColumn(table, column):
            return "user table \(table) has no column \(column) (name the right ones with --user-table \(table):USER_COLUMN[:STATION_COLUMN])"
        case let .changedByHand(table, column, expected, found):
            return "\(table).\(column) " + (found.map { "is \($0), expected \(expected)" } ?? "is missing (expected \(expected))")
                + ": the table was changed by hand; put the column back (ALTER TABLE \(table) "
                + (found == nil ? "ADD COLUMN \(column) \(expected)" : "ALTER COLUMN \(column) TYPE \(expected)") + "), or drop the schema to sync it anew"
        case let .unsafeScratch(path, reason):
            return "the scratch folder \(path) \(reason): the sync keeps files there that it builds on; remove it, or name a folder of your own (mode 0700) with --scratch"
        case .operatorSQLEndedTransaction:
            return "the operator's SQL (--then) ended the sync's transaction; nothing was written. Remove its COMMIT, ROLLBACK or savepoint commands: it runs inside the sync's transaction"
        case .changedMeanwhile:
            return "another sync changed the database while this one downloaded; nothing written (run it again)"
        case let .damagedState(table, reason):
            return "\(table) cannot be read: \(reason) (it records which release the database has; restore it from a backup, or drop the schema to sync anew)"
        }
    }
}
