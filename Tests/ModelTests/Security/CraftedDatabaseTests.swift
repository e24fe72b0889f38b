import Foundation
import GRDB
import StationSchema
import StationSQLite
import StationSupport
import Testing

/// A database file from elsewhere (a backup, a restored master, a bundled release) runs nothing:
/// a master holding objects its migrations did not make is refused by every writing command and
/// named by `check --integrity`; every connection the tools open has SQLite's defences on.
@Suite struct CraftedDatabaseTests {
    let scratch = Scratch()

    /// A master as `init` and `import` make it, then `craft` run on it by an ordinary connection
    /// (no defences): what a backup from elsewhere could hold.
    private func craftedMaster(_ craft: String) throws -> String {
        let path = scratch.path("master.sqlite")
        let master = try scratch.baseDatabase()
        _ = master
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { try $0.execute(sql: craft) }
        try queue.close()
        return path
    }

    static let crafts: [(name: String, sql: String, object: String)] = [
        ("a trigger on the log", """
            CREATE TRIGGER rename_tokyo AFTER INSERT ON updates BEGIN
              UPDATE stations SET station_name = 'pwned' WHERE station_cd = 1120101;
            END
            """, "trigger rename_tokyo on updates"),
        ("a view", "CREATE VIEW everything AS SELECT * FROM stations", "view everything"),
        ("an index with an expression", "CREATE INDEX by_name ON stations(lower(station_name))", "index by_name on stations"),
        ("a table", "CREATE TABLE extra (x)", "table extra"),
    ]

    @Test(arguments: crafts.indices)
    func aCraftedMasterIsRefusedByEveryWritingCommandAndNamedByTheIntegrityCheck(_ index: Int) throws {
        let craft = Self.crafts[index]
        let path = try craftedMaster(craft.sql)
        let before = try FileDigest.sha256(ofFile: path)
        for arguments in [["edit", "stations", "1120101", "weight=3"], ["import", Fixtures.base.path, "--memo", "again"],
                          ["release", "--out", scratch.path("release")], ["check", "--integrity"]] {
            let result = try CommandRunner.run(arguments + ["--db", path])
            #expect(result.status == 1, "\(craft.name): \(arguments) exited \(result.status): \(result.stderr)")
            #expect(result.stderr.contains("\(path): the master holds schema objects StationAdmin did not make: \(craft.object)"),
                    "\(craft.name): \(arguments): \(result.stderr)")
        }
        #expect(try FileDigest.sha256(ofFile: path) == before, "\(craft.name): the master changed")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("release/manifest.json")))
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        #expect(try queue.read { try String.fetchOne($0, sql: "SELECT station_name FROM stations WHERE station_cd = 1120101") } == "八戸")
    }

    /// A table whose text was rewritten through `writable_schema` (a default that calls a
    /// function) is another table: refused as changed.
    @Test func aTableRewrittenThroughTheSchemaIsRefusedAsChanged() throws {
        let path = try craftedMaster("""
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = replace(sql, 'memo TEXT', 'memo TEXT DEFAULT (random())') WHERE name = 'versions';
            PRAGMA writable_schema = OFF;
            """)
        let result = try CommandRunner.run(["edit", "stations", "1120101", "weight=3", "--db", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("table versions (its SQL is not the migrations')"), "\(result.stderr)")
    }

    /// A sound master passes the same check: the migrations' own objects, SQLite's statistics.
    @Test func aSoundMasterPassesAndItsConnectionsAreDefended() throws {
        let master = try scratch.baseDatabase()
        try master.write { db in
            try db.execute(sql: "ANALYZE")
            return ((), true)
        }
        #expect(try master.integrityProblems() == nil)
        let defended = try master.read { SQLiteDefences.isDefended($0) }
        #expect(defended)
        let result = try CommandRunner.run(["edit", "stations", "1120101", "weight=3", "--db", master.path])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// With the defences, SQL cannot turn the schema writable or the journal off.
    @Test func aDefendedConnectionRefusesWritableSchema() throws {
        let queue = try DatabaseQueue(path: scratch.path("plain.sqlite"), configuration: SQLiteDefences.configuration())
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE t (x)")
            try db.execute(sql: "PRAGMA writable_schema = ON")
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE sqlite_master SET sql = 'CREATE TABLE t (y)' WHERE name = 't'") }
        }
    }
}
