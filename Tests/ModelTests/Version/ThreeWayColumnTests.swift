import GRDB
import StationSchema
import StationVersion
import Testing

/// The three-way rule itself, case by case: each case decided in Swift (the merge's conflicts,
/// `revert`) and by the SQL the merge stages with, which must agree.
@Suite struct ThreeWayColumnTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let kind: MasterTable.ColumnKind
        let base: DatabaseValue, ours: DatabaseValue, theirs: DatabaseValue
        var oursAsTheirs: DatabaseValue? = nil
        var held = false
        let expected: ThreeWayColumn.Outcome
        var testDescription: String { name }
    }

    static let coordinate = MasterTable.ColumnKind.coordinate(range: -180...180)

    static let cases: [Case] = [
        Case(name: "nobody changed it", kind: .text, base: "彦山".databaseValue, ours: "彦山".databaseValue, theirs: "彦山".databaseValue,
             expected: .keepOurs),
        Case(name: "a curator's fix upstream did not touch", kind: .date, base: .null, ours: "2017-07-05".databaseValue, theirs: .null,
             expected: .keepOurs),
        Case(name: "upstream changed what the curators left", kind: .date, base: .null, ours: .null, theirs: "2017-07-06".databaseValue,
             expected: .takeTheirs),
        Case(name: "both changed it differently", kind: .date, base: .null, ours: "2017-07-05".databaseValue, theirs: "2017-07-06".databaseValue,
             expected: .conflict),
        Case(name: "both changed it alike", kind: .text, base: "東京".databaseValue, ours: "東京駅".databaseValue, theirs: "東京駅".databaseValue,
             expected: .takeTheirs),
        Case(name: "an adopted provisional code reads as upstream's", kind: .integer, base: 11302.databaseValue, ours: 99426.databaseValue,
             theirs: 11350.databaseValue, oursAsTheirs: 11350.databaseValue, expected: .takeTheirs),
        Case(name: "a provisional code upstream did not adopt", kind: .integer, base: 11302.databaseValue, ours: 99426.databaseValue,
             theirs: 11350.databaseValue, expected: .conflict),
        Case(name: "a coordinate moved within the tolerance is unchanged", kind: coordinate, base: 139.7671.databaseValue,
             ours: 139.7672.databaseValue, theirs: 139.76710000001.databaseValue, expected: .keepOurs),
        Case(name: "both coordinates NULL are equal", kind: coordinate, base: .null, ours: 139.7671.databaseValue, theirs: .null,
             expected: .keepOurs),
        Case(name: "a coordinate given where base had none", kind: coordinate, base: .null, ours: .null, theirs: 139.7671.databaseValue,
             expected: .takeTheirs),
        Case(name: "text compared byte for byte, not by Unicode equivalence", kind: .text, base: "が".databaseValue,
             ours: "が".databaseValue, theirs: "か\u{3099}".databaseValue, expected: .takeTheirs),
        // A revert: base is what the version wrote, theirs what was before it.
        Case(name: "revert: nothing changed it since", kind: .integer, base: 2.databaseValue, ours: 2.databaseValue, theirs: 0.databaseValue,
             expected: .takeTheirs),
        Case(name: "revert: upstream holds what the version wrote", kind: .integer, base: 2.databaseValue, ours: 2.databaseValue,
             theirs: 0.databaseValue, held: true, expected: .conflict),
        Case(name: "revert: upstream holds it, and it is already back", kind: .integer, base: 2.databaseValue, ours: 0.databaseValue,
             theirs: 0.databaseValue, held: true, expected: .takeTheirs),
        Case(name: "revert: a later version changed it again", kind: .integer, base: 2.databaseValue, ours: 1.databaseValue,
             theirs: 0.databaseValue, expected: .conflict),
        Case(name: "revert: the version did not change it", kind: .integer, base: 0.databaseValue, ours: 1.databaseValue,
             theirs: 0.databaseValue, held: true, expected: .keepOurs),
        Case(name: "a row's existence", kind: .text, base: "absent".databaseValue, ours: "absent".databaseValue,
             theirs: "present".databaseValue, held: true, expected: .conflict),
    ]

    @Test(arguments: cases)
    func theRuleDecidesInSwift(_ rule: Case) {
        let values = ThreeWayColumn.Values(base: rule.base, ours: rule.ours, theirs: rule.theirs, oursAsTheirs: rule.oursAsTheirs,
                                           oursHeldByUpstream: rule.held)
        #expect(ThreeWayColumn(kind: rule.kind).decide(values) == rule.expected)
    }

    @Test(arguments: cases)
    func theSQLTheMergeStagesWithDecidesAlike(_ rule: Case) throws {
        let sides = ThreeWayColumn.Expressions(base: "?1", ours: "?2", theirs: "?3", oursAsTheirs: rule.oursAsTheirs == nil ? nil : "?4",
                                               oursHeldByUpstream: "?5")
        // Each outcome as its own marker, so that the merged value says which clause decided.
        let sql = ThreeWayColumn(kind: rule.kind).mergedValueSQL(sides, conflict: "'conflict'")
            .replacingOccurrences(of: "THEN ?2", with: "THEN 'keepOurs'").replacingOccurrences(of: "THEN ?3", with: "THEN 'takeTheirs'")
        let outcome = try DatabaseQueue().read { db in
            try String.fetchOne(db, sql: "SELECT \(sql)", arguments: [rule.base, rule.ours, rule.theirs, rule.oursAsTheirs ?? .null, rule.held])
        }
        #expect(outcome == rule.expected.rawValue, "\(sql)")
    }
}
