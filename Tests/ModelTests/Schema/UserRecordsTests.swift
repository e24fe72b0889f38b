import GRDB
import StationManifest
import StationSchema
import Testing

/// The one statement every path runs for a split, run on the client schema's own table.
@Suite struct UserRecordsTests {
    @Test func theClientSchemasTableHasTheColumnsTheCopyNames() throws {
        let db = try DatabaseQueue()
        let columns = try db.write { db in
            try db.execute(sql: ClientSchema.completionsTable)
            return try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [UserRecords.table])
        }
        #expect(columns == UserRecords.columns)
    }

    @Test(arguments: [false, true]) func aSplitCopiesTheOldRecordAndKeepsOneTheUserHasAtTheNewStation(bound: Bool) throws {
        let db = try DatabaseQueue()
        let rows = try db.write { db in
            try db.execute(sql: ClientSchema.completionsTable)
            try db.execute(sql: "INSERT INTO completions VALUES (1, '2010-01-01', 'old', 10), (3, '2010-03-03', 'third', 30), (4, '2024-04-04', 'mine', 40)")
            for (old, new) in [(Int64(1), Int64(2)), (3, 4)] {
                if bound {
                    try db.execute(sql: UserRecords.splitCopy(.bound, into: "main", from: "main"), arguments: [new, old])
                } else {
                    try db.execute(sql: UserRecords.splitCopy(.literal(old: old, new: new)))
                }
            }
            return try Row.fetchAll(db, sql: "SELECT station_cd, date, memo, updated_at FROM completions ORDER BY station_cd").map { "\($0[0] as Int64) \($0[1] as String) \($0[2] as String) \($0[3] as Int64)" }
        }
        #expect(rows == ["1 2010-01-01 old 10", "2 2010-01-01 old 10", "3 2010-03-03 third 30", "4 2024-04-04 mine 40"])
    }

    @Test func theCarryOversConditionLimitsTheRowsItCopies() throws {
        let db = try DatabaseQueue()
        let copied = try db.write { db in
            try db.execute(sql: "ATTACH ':memory:' AS incoming")
            try db.execute(sql: ClientSchema.completionsTable)
            try db.execute(sql: ClientSchema.completionsTable.replacingOccurrences(of: "CREATE TABLE ", with: "CREATE TABLE incoming."))
            try db.execute(sql: "INSERT INTO completions VALUES (1, '2010-01-01', 'old', 10)")
            try db.execute(sql: UserRecords.copyAll(into: "incoming", from: "main"))
            try db.execute(sql: UserRecords.splitCopy(.literal(old: 1, new: 2), into: "incoming", from: "incoming", where: "0"))
            try db.execute(sql: UserRecords.splitCopy(.literal(old: 1, new: 5), into: "incoming", from: "incoming", where: "1"))
            return try Int64.fetchAll(db, sql: "SELECT station_cd FROM incoming.completions ORDER BY 1")
        }
        #expect(copied == [1, 5])
    }
}
