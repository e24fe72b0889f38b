import StationSchema

/// The findings a version brings that the version before did not have, as an import or a plan
/// reports them: how many of each rule, and the first of each rule in listing order with their
/// words. The rest are listed by `check --version V --rule RULE`: a version that
/// introduces a million findings holds twenty of each here, not a million messages.
public struct IntroducedFindings: Sendable, Equatable {
    /// How many findings of each rule a report shows in words.
    public static let shownPerRule = 20

    /// Rule → how many findings of it the version introduces (rules with none are absent).
    public private(set) var counts: [CheckRule: Int] = [:]
    /// The first `shownPerRule` of each rule, errors first, then by rule, table and key.
    public private(set) var first: [CheckFinding] = []

    /// No findings.
    public init() {}

    /// Every finding of a list already in listing order (a test's, or a small version's).
    package init(_ findings: [CheckFinding]) {
        for finding in findings {
            counts[finding.rule, default: 0] += 1
            if counts[finding.rule]! <= Self.shownPerRule { first.append(finding) }
        }
    }

    /// How many findings the version introduces.
    public var total: Int { counts.values.reduce(0, +) }

    /// Whether some of a rule's findings are not among `first`.
    public func isTruncated(_ rule: CheckRule) -> Bool { (counts[rule] ?? 0) > Self.shownPerRule }

    /// Counts the finding, and keeps it with its words while its rule has fewer than
    /// `shownPerRule`; findings must come in listing order (`DataChecker.forEachFinding`).
    package mutating func add(_ found: FoundRow, waived: Bool, message: () -> String) {
        counts[found.rule, default: 0] += 1
        guard counts[found.rule]! <= Self.shownPerRule else { return }
        var finding = found.finding(message())
        finding.waived = waived
        first.append(finding)
    }
}
