import GRDB
import StationSchema

/// The three-way rule for one column: the one definition by which an import's merge lists its
/// conflicts (in Swift), stages its rows (in SQL generated from the same clauses) and `revert`
/// decides what it may undo. *Base* is the value both sides started from, *ours* the master's
/// now, *theirs* the value coming in (upstream's file; for a revert, the value before the
/// reverted version, with base what that version wrote):
///
/// | first clause that holds                              | outcome        |
/// |------------------------------------------------------|----------------|
/// | theirs equals base                                   | keep ours      |
/// | ours equals base, and upstream does not hold ours    | take theirs    |
/// | ours (an adopted code read as upstream's) is theirs  | take theirs    |
/// | otherwise                                            | conflict       |
///
/// For example, base `close_ymd NULL`, ours `2017-07-05` (a curator's fix) and theirs `NULL` keep
/// ours; theirs `2017-07-06` is a conflict; ours `NULL` takes theirs. Values are equal as
/// `FieldChange.differ` and `CuratedRowDiff.differsSQL` say: NULL-aware, coordinates within the
/// tolerance, text byte for byte.
package struct ThreeWayColumn: Sendable {
    package enum Outcome: String, Sendable, CaseIterable {
        case keepOurs, takeTheirs, conflict
    }

    /// One column on the three sides, with what may make ours count as theirs or as changed:
    /// values (`Values`) for the Swift rule, SQL expressions (`Expressions`) for the merge's
    /// set-based staging.
    package struct Sides<Value, Flag> {
        package var base: Value
        package var ours: Value
        package var theirs: Value
        /// Ours as theirs would name it (a provisional code upstream's file adopted); ours if nil.
        package var oursAsTheirs: Value?
        /// Upstream now holds ours, so ours counts as changed even where it equals base: undoing
        /// it would go against upstream, and the next import would keep the old value as curated.
        /// SQL: an expression, nil where upstream never holds it.
        package var oursHeldByUpstream: Flag

        package init(base: Value, ours: Value, theirs: Value, oursAsTheirs: Value? = nil, oursHeldByUpstream: Flag) {
            self.base = base
            self.ours = ours
            self.theirs = theirs
            self.oursAsTheirs = oursAsTheirs
            self.oursHeldByUpstream = oursHeldByUpstream
        }
    }

    package typealias Values = Sides<DatabaseValue, Bool>
    package typealias Expressions = Sides<String, String?>

    private enum Condition {
        case theirsIsBase, oursIsBaseAndNotHeld, oursIsTheirs
    }

    /// The rule, in order: the first clause that holds decides; none holding is a conflict.
    private static let clauses: [(Condition, Outcome)] = [
        (.theirsIsBase, .keepOurs),
        (.oursIsBaseAndNotHeld, .takeTheirs),
        (.oursIsTheirs, .takeTheirs),
    ]

    package let kind: MasterTable.ColumnKind

    package init(kind: MasterTable.ColumnKind) {
        self.kind = kind
    }

    package func decide(_ values: Values) -> Outcome {
        for (condition, outcome) in Self.clauses where holds(condition, values) { return outcome }
        return .conflict
    }

    /// A SQL expression for the column's merged value: ours, theirs, or `conflict` (an expression
    /// that picks by the decision recorded) where the rule finds one.
    package func mergedValueSQL(_ sides: Expressions, conflict: String) -> String {
        let whens = Self.clauses.map { condition, outcome in
            "WHEN \(sql(condition, sides)) THEN \(outcome == .keepOurs ? sides.ours : sides.theirs)"
        }
        return "CASE \(whens.joined(separator: " ")) ELSE \(conflict) END"
    }

    private func holds(_ condition: Condition, _ values: Values) -> Bool {
        switch condition {
        case .theirsIsBase: !FieldChange.differ(values.theirs, values.base, kind)
        case .oursIsBaseAndNotHeld: !values.oursHeldByUpstream && !FieldChange.differ(values.ours, values.base, kind)
        case .oursIsTheirs: !FieldChange.differ(values.oursAsTheirs ?? values.ours, values.theirs, kind)
        }
    }

    private func sql(_ condition: Condition, _ sides: Expressions) -> String {
        switch condition {
        case .theirsIsBase:
            return "NOT \(CuratedRowDiff.differsSQL(sides.theirs, sides.base, kind))"
        case .oursIsBaseAndNotHeld:
            let same = "NOT \(CuratedRowDiff.differsSQL(sides.ours, sides.base, kind))"
            return sides.oursHeldByUpstream.map { "(\(same) AND NOT (\($0)))" } ?? same
        case .oursIsTheirs:
            return "NOT \(CuratedRowDiff.differsSQL(sides.oursAsTheirs ?? sides.ours, sides.theirs, kind))"
        }
    }
}

