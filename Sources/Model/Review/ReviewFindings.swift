import StationCheck

/// A list of findings as the review shows it, gathered as they stream from the rules, in the
/// memory of the few it shows: how many of each rule; every finding while there are no more than
/// `ReviewLimits.findingsListed`, else the first `findingsPerRule` of each rule; the first
/// `findingMarks` for the map; and the errors no waiver accepts. A version of a million findings
/// puts a few thousand in words.
public struct ReviewFindings: Sendable {
    /// Rule → how many findings of it (rules with none are absent).
    public private(set) var counts: [CheckRule: Int] = [:]
    /// How many findings in all.
    public private(set) var total = 0
    /// The first `ReviewLimits.findingMarks`, in listing order: what the map marks.
    public private(set) var leading: [CheckFinding] = []
    /// How many are errors no waiver accepts.
    public private(set) var blockingCount = 0
    /// The first of those (`firstBlockingKept`).
    public private(set) var firstBlocking: [CheckFinding] = []
    /// How many blocking findings are kept in words: the verdict names ten.
    public static let firstBlockingKept = 10

    private let limits: ReviewLimits
    /// Every finding while `total` is within `limits.findingsListed`.
    private var whole: [CheckFinding]? = []
    private var firstOfRule: [CheckRule: [CheckFinding]] = [:]

    /// An empty list, kept within `limits`.
    public init(limits: ReviewLimits) { self.limits = limits }

    /// Whether there are none.
    public var isEmpty: Bool { total == 0 }

    /// What a page lists: every finding (`groups` nil), or per rule (in rule name order) its
    /// first findings and how many it has.
    public var listing: (all: [CheckFinding]?, groups: [(rule: CheckRule, first: [CheckFinding], total: Int)]) {
        if let whole { return (whole, []) }
        return (nil, firstOfRule.sorted { $0.key.rawValue < $1.key.rawValue }.map { (rule: $0.key, first: $0.value, total: counts[$0.key]!) })
    }

    /// What a page lists, as one list: every finding, or the first of each rule.
    public var listed: [CheckFinding] { listing.all ?? listing.groups.flatMap(\.first) }

    /// These findings and then `later`'s, as if `later`'s had streamed after these: how the
    /// findings of rules checked on two connections come together in listing order.
    package mutating func append(_ later: ReviewFindings) {
        total += later.total
        for (rule, count) in later.counts { counts[rule, default: 0] += count }
        blockingCount += later.blockingCount
        // Each part kept its own first ones of each list, so the first of both are among them.
        if let earlier = whole, let laterWhole = later.whole, total <= limits.findingsListed {
            whole = earlier + laterWhole
        } else {
            whole = nil
        }
        for (rule, first) in later.firstOfRule {
            firstOfRule[rule] = Array(((firstOfRule[rule] ?? []) + first).prefix(limits.findingsPerRule))
        }
        leading = Array((leading + later.leading).prefix(limits.findingMarks))
        firstBlocking = Array((firstBlocking + later.firstBlocking).prefix(Self.firstBlockingKept))
    }

    /// Counts the finding, and puts it in words when a list keeps it. Findings must come in
    /// listing order (`DataChecker.forEachFinding`).
    package mutating func add(_ found: FoundRow, waived: Bool, message: () -> String) {
        total += 1
        counts[found.rule, default: 0] += 1
        let blocking = found.rule.severity == .error && !waived
        if blocking { blockingCount += 1 }
        if total > limits.findingsListed { whole = nil }
        let keptInRule = counts[found.rule]! <= limits.findingsPerRule
        guard whole != nil || keptInRule || leading.count < limits.findingMarks
            || (blocking && firstBlocking.count < Self.firstBlockingKept) else { return }
        var finding = found.finding(message())
        finding.waived = waived
        whole?.append(finding)
        if keptInRule { firstOfRule[found.rule, default: []].append(finding) }
        if leading.count < limits.findingMarks { leading.append(finding) }
        if blocking && firstBlocking.count < Self.firstBlockingKept { firstBlocking.append(finding) }
    }
}
