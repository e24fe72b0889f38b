import StationCheck
import StationReview
import StationSchema
import Testing

/// The review checks its rules a pass at a time on two connections, and joins the findings of
/// each rule in listing order: the join must list, count and mark exactly what one stream of
/// all of them would have.
@Suite struct ReviewFindingsJoinTests {
    /// A stream in listing order: `perRule[i]` findings of the i-th rule, every third waived.
    private func stream(_ perRule: [Int]) -> [(FoundRow, waived: Bool)] {
        zip(DataChecker.listingOrder, perRule).flatMap { rule, count in
            (0..<count).map { index in
                (FoundRow(rule: rule, table: .stations, key: String(1_000 + index)), waived: index % 3 == 2)
            }
        }
    }

    private func streamed(_ rows: [(FoundRow, waived: Bool)], _ limits: ReviewLimits) -> ReviewFindings {
        var findings = ReviewFindings(limits: limits)
        for (row, waived) in rows { findings.add(row, waived: waived) { "\(row.rule.rawValue) \(row.key)" } }
        return findings
    }

    private func expectSame(_ joined: ReviewFindings, _ whole: ReviewFindings, _ comment: Comment) {
        #expect(joined.total == whole.total, comment)
        #expect(joined.counts == whole.counts, comment)
        #expect(joined.blockingCount == whole.blockingCount, comment)
        #expect(joined.firstBlocking == whole.firstBlocking, comment)
        #expect(joined.leading == whole.leading, comment)
        #expect(joined.listed == whole.listed, comment)
        #expect(joined.listing.all == whole.listing.all, comment)
        #expect(joined.listing.groups.map(\.rule) == whole.listing.groups.map(\.rule), comment)
        #expect(joined.listing.groups.map(\.total) == whole.listing.groups.map(\.total), comment)
    }

    @Test(arguments: [
        // Few: listed whole, every finding marked.
        [2, 0, 1, 0, 3, 0, 1, 0, 0, 2, 1, 0, 0, 1, 2],
        // Many: the whole list is dropped and the marks run out in the fifth rule, and the
        // five error rules' 16 unwaived errors are more than the ten kept.
        [7, 4, 0, 0, 12, 9, 0, 5, 30, 0, 3, 8, 0, 2, 6],
    ])
    func rulesCheckedOnTwoConnectionsJoinAsOneStream(perRule: [Int]) {
        var limits = ReviewLimits()
        limits.findingsListed = 12; limits.findingsPerRule = 4; limits.findingMarks = 20
        let rows = stream(perRule)
        let whole = streamed(rows, limits)
        #expect(perRule.count == CheckRule.allCases.count && whole.total == perRule.reduce(0, +))

        // Two connections take the passes in turn, in the queue's order; each rule's findings
        // are gathered apart, as `review` gathers them.
        let queue = ReviewCheckQueue()
        var connections = [ReviewFindingParts(), ReviewFindingParts()]
        var taken: [CheckRule] = []
        var turn = 0
        while let pass = queue.next() {
            taken += pass
            for (row, waived) in rows where pass.contains(row.rule) {
                connections[turn].introduced[row.rule, default: ReviewFindings(limits: limits)]
                    .add(row, waived: waived) { "\(row.rule.rawValue) \(row.key)" }
            }
            turn = 1 - turn
        }
        #expect(taken.sorted { $0.rawValue < $1.rawValue } == CheckRule.allCases.sorted { $0.rawValue < $1.rawValue })
        var parts = connections[1]
        parts.merge(connections[0])
        expectSame(parts.joined(limits: limits).introduced, whole, "\(perRule)")
        #expect(parts.joined(limits: limits).inherited.isEmpty)
    }

    /// A connection alone takes every rule in one pass (an older version's state is rebuilt
    /// for each pass); after it, nothing is left for the other.
    @Test func theRestIsEveryRuleNotTakenInOnePass() {
        let queue = ReviewCheckQueue()
        let first = queue.next()!
        let rest = queue.rest()!
        #expect(first.isDisjoint(with: rest) && first.union(rest) == Set(CheckRule.allCases))
        #expect(queue.next() == nil && queue.rest() == nil)
    }
}
