import Foundation
import GRDB

/// The curators' master database: one SQLite file holding the master tables,
/// their history and the `updates` log.
///
/// Opening never writes; every change goes through one immediate transaction,
/// so a second process waits for the first (up to `busyTimeout`) and a failure
/// leaves the file byte-for-byte as it was.
public final class MasterDatabase: Sendable {
    public let path: String
    let queue: DatabaseQueue
    public static let busyTimeout: TimeInterval = 15

    private init(path: String, queue: DatabaseQueue) {
        self.path = path
        self.queue = queue
    }

    /// Creates an empty master database (version 0) at `path`.
    ///
    /// - Throws: `MasterDatabaseError.alreadyExists` rather than overwrite a file.
    public static func create(at path: String) throws -> MasterDatabase {
        if FileManager.default.fileExists(atPath: path) { throw MasterDatabaseError.alreadyExists(path) }
        let temporary = AtomicFile.temporaryPath(for: path)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        do {
            let queue = try DatabaseQueue(path: temporary, configuration: configuration())
            try MasterSchema.migrator.migrate(queue)
            try queue.close()
        }
        try AtomicFile.moveIntoPlace(temporary, path, replacing: false)
        return try open(at: path)
    }

    /// Opens an existing master database, bringing its schema up to date.
    ///
    /// - Parameter busyTimeout: how long to wait for another process's write to finish.
    public static func open(at path: String, busyTimeout: TimeInterval = busyTimeout) throws -> MasterDatabase {
        guard FileManager.default.fileExists(atPath: path) else { throw MasterDatabaseError.missing(path) }
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration(busyTimeout: busyTimeout))
            let migrator = MasterSchema.migrator
            if try queue.read({ try !migrator.hasCompletedMigrations($0) }) {
                try migrator.migrate(queue)
            }
            return MasterDatabase(path: path, queue: queue)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw MasterDatabaseError.notADatabase(path)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw MasterDatabaseError.busy(path)
        }
    }

    private static func configuration(busyTimeout: TimeInterval = busyTimeout) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "master"
        if PhaseLog.isOn {
            // Statements slower than 5 ms, to stderr: where an import or a release spends its time.
            configuration.prepareDatabase { db in
                db.trace(options: .profile) { event in
                    if case let .profile(statement, duration) = event, duration > 0.005 {
                        FileHandle.standardError.write(Data(String(format: "%8.3f s  %@\n", duration, statement.sql).utf8))
                    }
                }
            }
        }
        return configuration
    }

    /// The newest data version: the highest `user_version` in `updates`, 0 when empty.
    public func dataVersion() throws -> Int {
        try queue.read { try Self.dataVersion($0) }
    }

    static func dataVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(user_version), 0) FROM updates") ?? 0
    }

    /// Runs `body` in one immediate transaction; commits only if `body` says so,
    /// rolls back otherwise or on any error.
    ///
    /// A busy database becomes `MasterDatabaseError.busy` instead of a raw SQLite error.
    func write<T>(_ body: (Database) throws -> (result: T, commit: Bool)) throws -> T {
        do {
            var result: T?
            try queue.inTransaction(.immediate) { db in
                let outcome = try body(db)
                result = outcome.result
                return outcome.commit ? .commit : .rollback
            }
            return result!
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw MasterDatabaseError.busy(path)
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.read(body)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw MasterDatabaseError.busy(path)
        }
    }
}

public enum MasterDatabaseError: Error, LocalizedError, Equatable {
    case missing(String)
    case alreadyExists(String)
    case notADatabase(String)
    case busy(String)

    public var errorDescription: String? {
        switch self {
        case .missing(let path):
            return "\(path): no master database here (create one with `station-admin init --db \(path)`)"
        case .alreadyExists(let path):
            return "\(path): a file already exists; init never overwrites (choose another --db or remove it)"
        case .notADatabase(let path):
            return "\(path): not an SQLite database"
        case .busy(let path):
            return "\(path): another station-admin process is writing this database; try again when it has finished"
        }
    }
}
