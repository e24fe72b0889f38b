import Foundation
import GRDB
import StationSQLite
import Synchronization

/// The objects a master's schema may hold: exactly those its migrations made. A master file can
/// come from anywhere (a backup, a copy restored from elsewhere), and a trigger on `updates`, a
/// view shadowing a table or an index with a crafted expression runs inside every command that
/// writes or reads it, with no log row and nothing `check` would see. So every writing command
/// and `release` compare the file's `sqlite_schema` with what the migrations it has recorded make
/// on an empty database, and refuse a master holding anything else (`check --integrity` names it).
///
/// The comparison is of each object's type, name, table and SQL text (white space folded): a
/// table's text rewritten with `writable_schema` is an object of another shape.
package enum MasterSchemaObjects {
    /// One entry of `sqlite_schema`.
    package struct Object: Hashable, Sendable, CustomStringConvertible {
        package let type: String
        package let name: String
        package let table: String
        package let sql: String?

        package var description: String {
            type == "table" || name == table ? "\(type) \(name)" : "\(type) \(name) on \(table)"
        }
    }

    /// The objects of `db`'s main schema that its recorded migrations do not make, and those
    /// they make that it lacks, each with what it is: empty for a sound master.
    package static func unexpected(_ db: Database, _ declared: DeclaredSchema) throws -> (extra: [Object], missing: [Object]) {
        let applied = try db.tableExists("grdb_migrations") ? Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")) : []
        let expected = try expectedObjects(declared, applied: applied)
        let present = try objects(db)
        let extra = present.subtracting(expected).filter { !isSQLitesOwn($0) }
        let missing = expected.subtracting(present)
        return (extra.sorted { $0.name < $1.name }, missing.sorted { $0.name < $1.name })
    }

    /// Refuses a master holding objects its migrations do not make.
    ///
    /// - Throws: `MasterDatabaseError.unexpectedSchema` naming each.
    package static func refuseUnexpected(_ db: Database, _ declared: DeclaredSchema, path: String) throws {
        let found = try unexpected(db, declared)
        guard found.extra.isEmpty else {
            let changed = Set(found.missing.map(\.name))
            throw MasterDatabaseError.unexpectedSchema(path, objects: found.extra.map { changed.contains($0.name) ? "\($0) (its SQL is not the migrations')" : $0.description })
        }
    }

    /// What SQLite makes of its own accord: statistics (`ANALYZE`, `PRAGMA optimize`) and a
    /// sequence table, in the shape SQLite gives them.
    private static func isSQLitesOwn(_ object: Object) -> Bool {
        object.type == "table" && [
            "sqlite_stat1": "CREATE TABLE sqlite_stat1(tbl,idx,stat)",
            "sqlite_stat4": "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)",
        ][object.name] == object.sql
    }

    private static func objects(_ db: Database, schema: String = "main") throws -> Set<Object> {
        Set(try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM \(schema).sqlite_master").map { row in
            Object(type: row[0], name: row[1], table: row[2], sql: (row[3] as String?).map(folded))
        })
    }

    /// `sql` with each run of white space one space: SQLite keeps a statement's text as given.
    private static func folded(_ sql: String) -> String {
        sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).joined(separator: " ")
    }

    /// What the migrations `applied` make on an empty database, in the migrator's order,
    /// computed once per set in a process.
    private static func expectedObjects(_ declared: DeclaredSchema, applied: Set<String>) throws -> Set<Object> {
        let migrator = MasterSchema.migrator(declared, only: applied)
        let key = migrator.migrations.joined(separator: "\n")
        if let known = cache.withLock({ $0[key] }) { return known }
        let queue = try DatabaseQueue(configuration: SQLiteDefences.configuration())
        try migrator.migrate(queue)
        let expected = try queue.read { try objects($0) }
        cache.withLock { $0[key] = expected }
        return expected
    }

    private static let cache = Mutex<[String: Set<Object>]>([:])
}
