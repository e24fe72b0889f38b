import Foundation
import GRDB
import StationSQLite
import StationSupport
import Synchronization

/// The curators' master database: one SQLite file holding the master tables,
/// their history and the `updates` log.
///
/// Opening never writes: the file is first recognised as ours (its stamp, see
/// `MasterStamp`), and anything else is refused byte for byte untouched. Every change
/// goes through one immediate transaction, so a second process waits for the first
/// (up to `busyTimeout`) and a failure leaves the file as it was. The file is in WAL
/// mode, so a reader (a release, a delta) sees one committed state from its first read
/// to its end while imports commit beside it; only a large first import into an empty
/// master writes with a rollback journal (`withRollbackJournal`), and readers wait for it.
public final class MasterDatabase: Sendable {
    /// The master's file.
    public let path: String
    /// Who commits the versions written through this handle (kept in the master, never published).
    public let author: String?
    /// The tables and client schema changes this handle reads and writes by: `.shipped`, or a
    /// test's own.
    public let declared: DeclaredSchema
    package let queue: DatabaseQueue
    /// Set when migrations are pending (a master made before stamps existed is recognised
    /// by its migration ids): the first write runs them, the stamp among them.
    private let needsStamp: Bool
    /// How long a command waits, by default, for another process's write to finish (seconds).
    public static let busyTimeout: TimeInterval = 15
    /// Set while `withRollbackJournal` runs: `write` leaves the journal as it is then.
    let holdsRollbackJournal = Mutex(false)

    private init(path: String, queue: DatabaseQueue, needsStamp: Bool, author: String?, declared: DeclaredSchema) {
        self.path = path
        self.author = author
        self.declared = declared
        self.queue = queue
        self.needsStamp = needsStamp
    }

    /// Creates an empty master database (version 0) at `path`, stamped with a new lineage.
    ///
    /// - Throws: `MasterDatabaseError.alreadyExists` rather than overwrite a file.
    public static func create(at path: String, author: String? = nil, declared: DeclaredSchema = .shipped) throws -> MasterDatabase {
        if FileManager.default.fileExists(atPath: path) { throw MasterDatabaseError.alreadyExists(path) }
        try MasterFileChecks.requireWritableFolder(of: path, for: path)
        let temporary = AtomicFile.temporaryPath(for: path)
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        }
        try MasterDatabaseError.translating(path) {
            let queue = try DatabaseQueue(path: temporary, configuration: configuration())
            try MasterSchema.migrator(declared).migrate(queue)
            try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
            try queue.close()
        }
        try AtomicFile.moveIntoPlace(temporary, path, replacing: false)
        return try open(at: path, author: author, declared: declared)
    }

    /// Opens an existing master database; writes nothing.
    ///
    /// - Parameters:
    ///   - path: the master's file, as `init` made it.
    ///   - busyTimeout: how long to wait for another process's write to finish.
    ///   - author: who commits the versions written through this handle.
    ///   - declared: the schema this code declares; a master of an older one is migrated on
    ///     the first write.
    /// - Throws: `MasterDatabaseError.notAMaster` for any file that is not a master database
    ///   (another application's SQLite file, a client's `stations.sqlite`, an empty file),
    ///   `.isAFolder`, `.missing`.
    public static func open(at path: String, busyTimeout: TimeInterval = busyTimeout, author: String? = nil,
                            declared: DeclaredSchema = .shipped) throws -> MasterDatabase {
        try MasterFileChecks.requireRegularFile(path)
        guard MasterStamp.hasSQLiteHeader(path) else { throw MasterDatabaseError.notAMaster(path) }
        return try MasterDatabaseError.translating(path) {
            let queue = try DatabaseQueue(path: path, configuration: configuration(busyTimeout: busyTimeout))
            switch try queue.read({ try MasterStamp.recognise($0, declared) }) {
            case .master(let isUpToDate): return MasterDatabase(path: path, queue: queue, needsStamp: !isUpToDate, author: author, declared: declared)
            case .foreign:
                try queue.close()
                throw MasterDatabaseError.notAMaster(path)
            }
        }
    }

    /// The master's connection settings, also used for the client databases a release builds.
    package static func configuration(busyTimeout: TimeInterval = busyTimeout, label: String = "master") -> Configuration {
        var configuration = SQLiteDefences.configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = label
        configuration.prepareDatabase { db in
            // Large sorts (the client database's indexes, ORDER BY over a whole table) on every
            // core, with the same bytes, unless the other cores have work of their own
            // (`ReleaseDatabaseBuilder.complete`). SQLite's default is no helper threads.
            try db.execute(sql: "PRAGMA threads = \(min(ProcessInfo.processInfo.activeProcessorCount, 8))")
        }
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
        try read { try Self.dataVersion($0) }
    }

    package static func dataVersion(_ db: Database) throws -> Int {
        try UpdateLog.newestVersion(db)
    }

    /// The random id `init` gave this master; a release folder belongs to one lineage.
    /// A master made before lineages existed gets one on its first write.
    public func lineage() throws -> String? {
        try read(MasterStamp.lineage)
    }

    /// Runs `body` in one immediate transaction; commits only if `body` says so,
    /// rolls back otherwise or on any error.
    ///
    /// The file's writability is checked first, so a read-only master fails before any
    /// work; an unstamped master made by an older StationAdmin is stamped.
    /// SQLite's busy and full-disk errors become `MasterDatabaseError`s naming the file.
    ///
    /// - Parameter checkingDamage: refuse a damaged master before committing (`refuseDamage`);
    ///   false only for a transaction that follows one of this handle's own, which checked it.
    package func write<T>(checkingDamage: Bool = true, _ body: (Database) throws -> (result: T, commit: Bool)) throws -> T {
        try MasterFileChecks.requireWritable(path)
        return try MasterDatabaseError.translating(path) {
            // Before the migrations too: a crafted trigger would run inside them.
            try queue.read { try MasterSchemaObjects.refuseUnexpected($0, declared, path: path) }
            if needsStamp { try stamp() }
            if !holdsRollbackJournal.withLock({ $0 }) { try restoreWriteAheadLog() }
            var result: T?
            let besideAWriteAheadLog = !holdsRollbackJournal.withLock({ $0 })
            try queue.inTransaction(.immediate) { db in
                let damageCheck = checkingDamage ? try checkDamage(db, besideTheWriter: besideAWriteAheadLog) : nil
                let outcome: (result: T, commit: Bool)
                do {
                    outcome = try body(db)
                } catch {
                    // Damage makes the body fail too, less clearly: the check's finding is the error.
                    if case .failure(let damage as MasterDatabaseError) = Result(catching: { try damageCheck?.wait() }) { throw damage }
                    throw error
                }
                try damageCheck?.wait()
                result = outcome.result
                return outcome.commit ? .commit : .rollback
            }
            return result!
        }
    }

    /// Refuses a damaged master (`refuseDamage`) before a write commits. Beside a write-ahead
    /// log, on a second connection while `db` works: it reads the state `db`'s immediate
    /// transaction began from, the one nothing else can change now, and its page reads overlap
    /// the import's parsing; `wait()` before committing. With a rollback journal, which keeps a
    /// reader out once the writer writes pages, here, before anything is written.
    private func checkDamage(_ db: Database, besideTheWriter: Bool) throws -> BackgroundTask<Void>? {
        guard besideTheWriter, try Self.size(db) <= Self.checkedWholeBytes else {
            try Self.refuseDamage(db, path: path)
            return nil
        }
        var configuration = Self.configuration(label: "damage check")
        configuration.readonly = true
        let checker = try DatabaseQueue(path: path, configuration: configuration)
        let path = path
        return BackgroundTask { try checker.read { try Self.refuseDamage($0, path: path) } }
    }

    /// Masters up to this size are checked with SQLite's `quick_check` (every page's structure)
    /// before every write, release and backup: its cost grows with the file, and up to this size
    /// it stays a small part of any command (benchmarks/RESULTS.md). A larger master is checked
    /// page by page as SQLite reads it, and whole by `check --integrity` and `backup`.
    package static let checkedWholeBytes: Int64 = 16 << 20

    /// Refuses a master SQLite finds damaged, before anything is written or published from it.
    ///
    /// - Throws: `MasterDatabaseError.damaged` naming the master and SQLite's first findings.
    package static func refuseDamage(_ db: Database, path: String) throws {
        guard try size(db) <= checkedWholeBytes else { return }
        // quick_check also names rows outside their CHECK or NOT NULL constraints: a master may
        // hold those on purpose (a migration keeps them for `check` to report); only the file's
        // structure is damage.
        let findings = try String.fetchAll(db, sql: "PRAGMA quick_check(20)")
            .filter { $0 != "ok" && !$0.hasPrefix("CHECK constraint failed in ") && !$0.hasPrefix("NULL value in ") }
        guard findings.isEmpty else { throw MasterDatabaseError.damaged(path, reason: findings.prefix(5).joined(separator: "; ")) }
    }

    private static func size(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()") ?? 0
    }

    /// Brings a master made before stamps to the current schema and stamp, and to WAL.
    /// Each migration is its own transaction; a failure leaves the file as it was.
    package func stamp() throws {
        try MasterFileChecks.requireWritable(path)
        try MasterDatabaseError.translating(path) {
            try MasterSchema.migrator(declared).migrate(queue)
            try queue.writeWithoutTransaction { db in
                if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                }
            }
        }
    }

    /// Stamps the master if an older StationAdmin made it; a release needs its lineage.
    package func stampIfNeeded() throws {
        if needsStamp, try lineage() == nil { try stamp() }
    }

    package func read<T>(_ body: (Database) throws -> T) throws -> T {
        try MasterDatabaseError.translating(path) { try queue.read(body) }
    }

    /// Runs `body` inside one read transaction of the master: every read sees the state
    /// committed before the first one, whatever other processes commit meanwhile.
    ///
    /// Nothing of the master is written: `body` may use temp tables, and may write to a
    /// database given as `attaching`, attached as schema `client` (created if missing); those
    /// writes are committed when `body` returns, the attached file is detached afterwards.
    package func readingOneState<T>(attaching client: String? = nil, _ body: (Database) throws -> T) throws -> T {
        try readingOneState(attaching: client, beginning: { db in _ = try Self.dataVersion(db) }, body)
    }

    /// `readingOneState`, with `alongside` run meanwhile on another connection and core, in a read
    /// transaction of the very same state, handed to `body` as it starts: nil when no such twin
    /// could be started (another writer holds the master's write lock, or this process may not
    /// take it), and the caller then does the work itself. `body` may wait for the twin (what it
    /// found and what `body` reads after are of one state) or return it, to be waited for after
    /// this read ends; if `body` throws, the twin is waited for before the error goes on.
    ///
    /// Both read transactions begin while a third connection holds the master's write lock for
    /// a moment, so no commit can come between them. Without SQLite's snapshot API (not in
    /// Debian's library) that is the way to know two connections read one state. The twin's
    /// connection is opened read-only: it may write temp tables, never the master.
    package func readingOneState<T, Twin: Sendable>(attaching client: String? = nil,
                                                    alongside: @escaping @Sendable (Database) throws -> Twin,
                                                    handing body: (Database, BackgroundTask<Twin>?) throws -> T) throws -> T {
        var twin: BackgroundTask<Twin>?
        do {
            return try readingOneState(attaching: client, beginning: { db in twin = try startTwin(of: db, alongside) }, { db in try body(db, twin) })
        } catch {
            _ = try? twin?.wait()
            throw error
        }
    }

    private func startTwin<Twin: Sendable>(of db: Database, _ work: @escaping @Sendable (Database) throws -> Twin) throws -> BackgroundTask<Twin>? {
        var configuration = Self.configuration(label: "twin")
        configuration.readonly = true
        // A writer at work is not waited for: the caller then does the work itself.
        var lockConfiguration = Self.configuration(label: "lock")
        lockConfiguration.busyMode = .immediateError
        let lock = try DatabaseQueue(path: path, configuration: lockConfiguration)
        defer { try? lock.close() }
        return try lock.writeWithoutTransaction { lockDB -> BackgroundTask<Twin>? in
            do {
                try lockDB.execute(sql: "BEGIN IMMEDIATE")
            } catch {
                _ = try Self.dataVersion(db)
                return nil
            }
            defer { try? lockDB.execute(sql: "ROLLBACK") }
            _ = try Self.dataVersion(db)
            let twinQueue = try DatabaseQueue(path: path, configuration: configuration)
            let begun = DispatchSemaphore(value: 0)
            let task = BackgroundTask {
                var hasBegun = false
                defer {
                    // A twin that failed to begin is waited for no longer: its error comes with its result.
                    if !hasBegun { begun.signal() }
                    try? twinQueue.close()
                }
                return try twinQueue.read { twinDB in
                    _ = try Self.dataVersion(twinDB)
                    hasBegun = true
                    begun.signal()
                    return try work(twinDB)
                }
            }
            // The lock is held until the twin's read transaction has begun.
            begun.wait()
            return task
        }
    }

    private func readingOneState<T>(attaching client: String?, beginning: (Database) throws -> Void,
                                    _ body: (Database) throws -> T) throws -> T {
        try MasterDatabaseError.translating(path) {
            try queue.writeWithoutTransaction { db in
                if let client {
                    try db.execute(sql: "ATTACH DATABASE ? AS client", arguments: [client])
                    // A fresh file built once and renamed into place needs no rollback journal.
                    try db.execute(sql: "PRAGMA client.journal_mode = MEMORY")
                    try db.execute(sql: "PRAGMA client.page_size = 4096")
                }
                defer { if client != nil { try? db.execute(sql: "DETACH DATABASE client") } }
                var result: T?
                try db.inTransaction(.deferred) {
                    // The first read starts the read transaction: from here on, one state.
                    try beginning(db)
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        }
    }
}

/// Checks of the master's file made before SQLite opens it, so that a command fails at once
/// with the path and a fix.
package enum MasterFileChecks {
    /// - Throws: `MasterDatabaseError.missing` or `.isAFolder`.
    package static func requireRegularFile(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard !path.isEmpty, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw MasterDatabaseError.missing(path)
        }
        if isDirectory.boolValue { throw MasterDatabaseError.isAFolder(path) }
    }

    /// The file and its folder must be writable: SQLite writes its WAL and journal beside it.
    package static func requireWritable(_ path: String) throws {
        if access(path, W_OK) != 0 { throw MasterDatabaseError.readOnly(path) }
        try requireWritableFolder(of: path, for: path)
    }

    package static func requireWritableFolder(of path: String, for reported: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if access(folder.isEmpty ? "." : folder, W_OK) != 0 { throw MasterDatabaseError.readOnly(reported) }
    }
}

/// A master database that cannot be opened or written, naming the file and the fix.
public enum MasterDatabaseError: Error, LocalizedError, Equatable {
    case missing(String)
    case alreadyExists(String)
    case isAFolder(String)
    case notAMaster(String)
    case readOnly(String)
    case busy(String)
    case diskFull(String)
    case cannotOpen(String, reason: String)
    /// SQLite found the file damaged: nothing may be written onto it.
    case damaged(String, reason: String)
    /// The file holds schema objects its migrations did not make (`MasterSchemaObjects`).
    case unexpectedSchema(String, objects: [String])

    public var errorDescription: String? {
        switch self {
        case let .unexpectedSchema(path, objects):
            return "\(path): the master holds schema objects StationAdmin did not make: \(objects.joined(separator: ", ")); nothing was written "
                + "(a trigger, view or index in a master runs inside every command: restore a backup made by `\(CommandHint("backup"))`, "
                + "or drop them with the sqlite3 shell after reading what they do)"
        case let .damaged(path, reason):
            return "\(path): the master database is damaged (SQLite: \(reason)); nothing was written. "
                + "Restore the newest backup (docs/curating.md, \"Backups and recovery\"), then redo what came after it"
        case .missing(let path):
            return "\(path): no master database here (create one with `\(CommandHint("init", "--db", path))`)"
        case .alreadyExists(let path):
            return "\(path): a file already exists; init never overwrites (choose another --db or remove it)"
        case .isAFolder(let path):
            return "\(path): a folder, not a master database (expected the path of a file made by `\(CommandHint("init"))`)"
        case .notAMaster(let path):
            return "\(path): not a StationAdmin master database (create one with \(CommandHint("init")))"
        case .readOnly(let path):
            return "\(path): the master database or its folder is read-only (expected write access to both; check the permissions, e.g. `chmod u+w`)"
        case .busy(let path):
            return "\(path): another StationAdmin process is writing this database; try again when it has finished"
        case .diskFull(let path):
            return "\(path): the disk is full (nothing was changed; free some space and run the command again)"
        case let .cannotOpen(path, reason):
            return "\(path): cannot open the master database (\(reason))"
        }
    }

    /// Runs `body`, turning SQLite's errors about the file into errors that name it.
    package static func translating<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED: throw MasterDatabaseError.busy(path)
            case .SQLITE_FULL: throw MasterDatabaseError.diskFull(path)
            case .SQLITE_READONLY: throw MasterDatabaseError.readOnly(path)
            case .SQLITE_NOTADB: throw MasterDatabaseError.notAMaster(path)
            case .SQLITE_CANTOPEN: throw MasterDatabaseError.cannotOpen(path, reason: error.message ?? "SQLite cannot open it")
            case .SQLITE_CORRUPT: throw MasterDatabaseError.damaged(path, reason: error.message ?? "database disk image is malformed")
            default: throw error
            }
        } catch where FileChecks.isDiskFull(error) {
            throw MasterDatabaseError.diskFull(path)
        }
    }
}
