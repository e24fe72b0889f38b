import Foundation
import GRDB
import StationCheck
import StationLog
import StationManifest
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// `ContentHash` against its documented definition, computed the way the manifest tells a
/// client or a person to: the sqlite3 shell renders the lines and sha256sum hashes them.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct ContentHashTests {
    let scratch = Scratch()

    @Test func theHashIsItsDefinitionComputedWithTheShellAndSha256sum() throws {
        let database = try scratch.baseDatabase()
        let client = scratch.path("client.sqlite")
        _ = try Publisher(database).buildClientDatabase(version: 1, at: client)
        let queue = try DatabaseQueue(path: client)
        try queue.write { db in
            // Text that quote() alone would cut (NUL) or that spans lines; quotes and emoji;
            // NULL, negative and 64-bit integers in integer columns.
            try db.execute(sql: """
                UPDATE stations SET station_name = CAST(X'41004200' AS TEXT), station_g_cd = NULL WHERE station_cd = 1120101;
                UPDATE stations SET station_name = 'it''s' || char(13, 10) || '🚉', e_sort = -7 WHERE station_cd = 1120102;
                UPDATE stations SET e_sort = 9223372036854775807, address = NULL WHERE station_cd = 1120103;
                UPDATE stations SET post = '', address = '''' WHERE station_cd = 1120105;
                """)
        }
        #expect(try hash(client, queue) == shellHash(client))

        // A value of an integer column that is not an integer is rendered by quote() as well.
        try queue.write { try $0.execute(sql: "UPDATE stations SET e_sort = 2.5, line_cd = '11201x' WHERE station_cd = 1120104") }
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM stations WHERE typeof(e_sort) = 'real'") } == 1)
        #expect(try hash(client, queue) == shellHash(client))

        // And a blob in a text column.
        try queue.write { try $0.execute(sql: "UPDATE stations SET e_sort = 1, line_cd = 11201, post = X'00FF27' WHERE station_cd = 1120104") }
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM stations WHERE typeof(post) = 'blob'") } == 1)
        #expect(try hash(client, queue) == shellHash(client))
        try queue.close()
    }

    /// The hash writes integers itself: exactly as `quote()` does, the extremes and signs included.
    @Test func anIntegerIsWrittenAsQuoteWritesIt() throws {
        let queue = try DatabaseQueue()
        for value: Int64 in [0, 7, -7, 10, -10, 99_999, 1_120_101, .max, .min, .max - 1, .min + 1] {
            var buffer: [UInt8] = []
            ContentHash.appendDecimal(value, to: &buffer)
            let quoted = try queue.read { try String.fetchOne($0, sql: "SELECT quote(?)", arguments: [value]) }
            #expect(String(decoding: buffer, as: UTF8.self) == quoted)
        }
    }

    /// The hash quotes text itself: exactly as the definition's `quote()` and `nul-text:` do.
    @Test func textIsWrittenAsTheDefinitionWritesIt() throws {
        let queue = try DatabaseQueue()
        let texts: [[UInt8]] = [[], Array("東京".utf8), Array("'".utf8), Array("''".utf8), Array("it's 'x'".utf8),
                                Array("a'".utf8), Array("'a".utf8), [0x41, 0x00, 0x42], [0x00], [0x27, 0x00], [0xE3, 0x81]]
        for text in texts {
            var buffer: [UInt8] = []
            text.withUnsafeBufferPointer { ContentHash.appendQuoted($0, to: &buffer) }
            let rendered = try queue.read { db in
                try Data.fetchOne(db, sql: """
                    SELECT CAST((CASE WHEN instr(t, char(0)) > 0 THEN 'nul-text:' || hex(CAST(t AS BLOB)) ELSE quote(t) END) AS BLOB)
                    FROM (SELECT CAST(? AS TEXT) AS t)
                    """, arguments: [Data(text)])
            }
            #expect(buffer == rendered.map(Array.init), "\(text)")
        }
    }

    /// A release hashes the newest version from the master's tables: their values are the
    /// client file's only when both declare the same types.
    @Test func theMasterDeclaresTheClientsTypesAndADifferenceIsSeen() throws {
        let database = try scratch.baseDatabase()
        #expect(try database.queue.read { try ClientSchema.declaresTheMastersTypes($0, .shipped, clientSchema: 1) })
        // Tables declared as a client file's are; one column of another type is not.
        let other = try DatabaseQueue(path: scratch.path("other.sqlite"))
        try other.write { db in
            try ClientSchema.createTables(db, .shipped, schema: "main", clientSchema: 1)
            #expect(try ClientSchema.declaresTheMastersTypes(db, .shipped, clientSchema: 1))
            let linesWithATextOperator = ClientSchema.createTable(.lines, schema: "main", clientSchema: 1).replacingOccurrences(of: "company_cd INTEGER", with: "company_cd TEXT")
            #expect(linesWithATextOperator.contains("company_cd TEXT"))
            try db.execute(sql: "DROP TABLE lines")
            try db.execute(sql: linesWithATextOperator)
            #expect(try !ClientSchema.declaresTheMastersTypes(db, .shipped, clientSchema: 1))
        }
        try other.close()
        // The release's hash, made from the master, is the file's.
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release"), verify: false))
        #expect(try contentHash(ofDatabase: scratch.path("release/1/stations.sqlite")) == result.released.contentHash)
    }

    /// While another connection holds the master's write lock, the release does not start a
    /// twin reader (it could not know the twin reads its state) and hashes a copy of the file.
    @Test func aReleaseBesideAWriterHashesTheFilesCopy() throws {
        let database = try scratch.baseDatabase()
        let writer = try DatabaseQueue(path: database.path)
        let result = try writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            return try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release"), verify: false))
        }
        try writer.close()
        #expect(try contentHash(ofDatabase: scratch.path("release/1/stations.sqlite")) == result.released.contentHash)
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path("release")).filter { $0.hasPrefix(ReleaseLayout.buildingPrefix) || $0.contains("hashed") }
        #expect(left.isEmpty, "\(left)")
    }

    /// docs/clients.md's worked example: one prefecture, four empty tables, the hex it prints.
    @Test func theWorkedExampleOfTheClientGuideIsWhatTheReleaseComputes() throws {
        let queue = try DatabaseQueue()
        let computed = try queue.write { db in
            try ClientSchema.createTables(db, .shipped, clientSchema: 1)
            try db.execute(sql: "INSERT INTO prefectures (pref_cd, pref_name) VALUES (13, '東京都')")
            return try ContentHash.compute(db, .shipped, clientSchema: 1)
        }
        let guide = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/clients.md"), encoding: .utf8)
        #expect(computed == "f94e21e6e7488f824b1d842b5660b3add7710aab61f6a9560613bf415b82b347")
        #expect(guide.contains("to `\(computed)`"))
    }

    private func hash(_ path: String, _ queue: DatabaseQueue) throws -> String {
        try queue.read { try ContentHash.compute($0, .shipped) }
    }

    /// The definition in `ContentHash`'s documentation, written out for the shell.
    private func shellHash(_ path: String) throws -> String {
        var script = ".mode list\n.headers off\n"
        for table in MasterTable.all {
            let values = table.columnNames.map {
                "(CASE WHEN typeof(\($0)) = 'text' AND instr(\($0), char(0)) > 0 THEN 'nul-text:' || hex(CAST(\($0) AS BLOB)) ELSE quote(\($0)) END)"
            }
            let format = Array(repeating: "%s", count: values.count).joined(separator: ",")
            script += "SELECT 'table:\(table.name)';\n"
            script += "SELECT printf('\(format)', \(values.joined(separator: ", "))) FROM \(table.name) ORDER BY \(table.keyOrder);\n"
        }
        let scriptPath = scratch.path("hash-\(UUID().uuidString).sql")
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let result = try CommandRunner.run(["bash", "-o", "pipefail", "-c", "sqlite3 -batch '\(path)' < '\(scriptPath)' | sha256sum"],
                                           program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(result.status == 0, "\(result.stderr)")
        return String(result.stdout.prefix(64))
    }
}
