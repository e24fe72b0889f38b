import GRDB
import StationSchema
import Testing

/// The change kinds, one definition in Swift (the streaming diff) and SQL (curated rows, the
/// merge's staging), case by case.
@Suite struct ChangeKindTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let stored: Bool
        let storedStatus: Int64?, newStatus: Int64?
        let expected: Update.Kind
        var testDescription: String { name }
    }

    static let closed = Int64(MasterTable.closedStatus)

    static let cases: [Case] = [
        Case(name: "a new row", stored: false, storedStatus: nil, newStatus: 0, expected: .insert),
        Case(name: "a new row that is closed already", stored: false, storedStatus: nil, newStatus: closed, expected: .insert),
        Case(name: "an open row changed", stored: true, storedStatus: 0, newStatus: 1, expected: .update),
        Case(name: "an open row closing", stored: true, storedStatus: 0, newStatus: closed, expected: .delete),
        Case(name: "a closed row opening", stored: true, storedStatus: closed, newStatus: 0, expected: .restore),
        Case(name: "a closed row changed, still closed", stored: true, storedStatus: closed, newStatus: closed, expected: .update),
        Case(name: "a row of a file without a status", stored: true, storedStatus: 0, newStatus: nil, expected: .update),
    ]

    @Test(arguments: cases)
    func swiftAndSQLAgree(_ change: Case) throws {
        #expect(Update.Kind.change(stored: change.stored, storedStatus: change.storedStatus, newStatus: change.newStatus) == change.expected)
        let sql = Update.Kind.changeSQL(.stations, stored: "m", new: "x")
        let kind = try DatabaseQueue().read { db in
            try String.fetchOne(db, sql: "SELECT \(sql) FROM (SELECT ?1 AS station_cd, ?2 AS e_status) m, (SELECT ?3 AS e_status) x",
                                arguments: [change.stored ? 1_110_101 : nil, change.storedStatus, change.newStatus])
        }
        #expect(kind == change.expected.rawValue)
    }

    @Test func aTableWithoutAStatusOnlyInsertsAndUpdates() throws {
        #expect(Update.Kind.change(stored: true, storedStatus: nil, newStatus: nil) == .update)
        let sql = Update.Kind.changeSQL(.connections, stored: "m", new: "x")
        let kinds = try DatabaseQueue().read { db in
            try [nil, 11302].map { key -> String? in
                try String.fetchOne(db, sql: "SELECT \(sql) FROM (SELECT ? AS line_cd) m, (SELECT 1) x", arguments: [key as Int?])
            }
        }
        #expect(kinds == ["INSERT", "UPDATE"])
    }
}
