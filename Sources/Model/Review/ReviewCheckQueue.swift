import StationCheck
import Synchronization

/// The rules a review checks, handed out a pass at a time to the connections that read the
/// version (the main one and its twin, each taking the next pass when it is free), the longest
/// first so that both end about together. Whichever connection checked a rule, its findings take
/// their place in listing order (`ReviewFindingParts.joined`).
///
/// Splitting by rule, not by the order findings are listed: a split by listing order left the
/// main connection idle while the twin still checked.
package final class ReviewCheckQueue: Sendable {
    /// The passes that take longest at a million stations, in that order: the connections (whose
    /// one pass finds both rules), the domains, the names on lines and the dangling groups. Every
    /// other rule is short and follows in listing order.
    private static let longestFirst: [Set<CheckRule>] = [
        [.connectionTooLong, .connectionToClosedStation, .connectionOffItsLine], [.valueOutsideDomain], [.duplicateNameOnLine], [.groupDangling],
    ]

    /// What is still to check, the next pass last.
    private let remaining: Mutex<[Set<CheckRule>]>

    package init() {
        let first = Self.longestFirst
        let rest = DataChecker.listingOrder.filter { rule in !first.contains { $0.contains(rule) } }.map { Set([$0]) }
        remaining = Mutex(Array((first + rest).reversed()))
    }

    /// The next pass, or nil when every rule is taken.
    package func next() -> Set<CheckRule>? { remaining.withLock { $0.popLast() } }

    /// Every rule not taken yet, as one pass: what a connection checks alone, and what an older
    /// version needs (its state is rebuilt for each pass).
    package func rest() -> Set<CheckRule>? {
        remaining.withLock { passes in
            defer { passes.removeAll() }
            return passes.isEmpty ? nil : passes.reduce(into: Set()) { $0.formUnion($1) }
        }
    }
}

/// The findings of the rules a connection checked, each rule's apart, so that the parts of two
/// connections come together in listing order.
package struct ReviewFindingParts: Sendable {
    package var introduced: [CheckRule: ReviewFindings] = [:]
    package var inherited: [CheckRule: ReviewFindings] = [:]

    package init() {}

    /// Both parts' rules; the queue hands each rule to one connection only.
    package mutating func merge(_ other: ReviewFindingParts) {
        introduced.merge(other.introduced) { _, _ in preconditionFailure("a rule was checked on two connections") }
        inherited.merge(other.inherited) { _, _ in preconditionFailure("a rule was checked on two connections") }
    }

    /// The findings rule by rule in listing order, as if one connection had streamed them all.
    package func joined(limits: ReviewLimits) -> (introduced: ReviewFindings, inherited: ReviewFindings) {
        var joinedIntroduced = ReviewFindings(limits: limits), joinedInherited = ReviewFindings(limits: limits)
        for rule in DataChecker.listingOrder {
            if let part = introduced[rule] { joinedIntroduced.append(part) }
            if let part = inherited[rule] { joinedInherited.append(part) }
        }
        return (joinedIntroduced, joinedInherited)
    }
}
