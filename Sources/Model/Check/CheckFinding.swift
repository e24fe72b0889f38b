import StationSchema

/// One thing a rule found wrong with one row.
public struct CheckFinding: Codable, Sendable, Equatable, Hashable {
    /// The rule that found it.
    public var rule: CheckRule
    /// The rule's severity: an unwaived error stops a release.
    public var severity: CheckRule.Severity
    /// The master table of the row.
    public var table: String
    /// The row's key as in `updates.key_id` (`1120101`, `11302/1130201/1130202`).
    public var key: String
    /// What is wrong, with the values, and how to fix it.
    public var message: String
    /// A curator accepted it (`waive`).
    public var waived: Bool

    package init(_ rule: CheckRule, _ table: MasterTable, key: String, _ message: String) {
        self.rule = rule
        self.severity = rule.severity
        self.table = table.name
        self.key = key
        self.message = message
        self.waived = false
    }

    /// What identifies a finding across versions and waivers: the rule and the row.
    public var identity: FindingIdentity { FindingIdentity(rule: rule.rawValue, table: table, key: key) }

    /// `stations 1120101: dates-out-of-order: …`
    public var line: String { "\(table) \(key): \(rule.rawValue): \(message)" }
}

/// A finding without its words: what a waiver names and what is recorded per version.
public struct FindingIdentity: Codable, Sendable, Hashable {
    /// The rule's identifier (`connection-too-long`).
    public var rule: String
    /// The master table of the row.
    public var table: String
    /// The row's key as in `updates.key_id`.
    public var key: String

    /// An identity from its three parts, as a waiver or a recorded finding holds them.
    public init(rule: String, table: String, key: String) {
        self.rule = rule
        self.table = table
        self.key = key
    }
}

/// `check`'s answer: `{"version": N, "findings": [...]}` (docs/json.md), errors first.
public struct CheckReport: Codable, Sendable, Equatable {
    /// The data version checked.
    public var version: Int
    /// Every finding, errors first, then by rule, table and key.
    public var findings: [CheckFinding]

    /// Error-level findings no waiver accepts: `release` refuses while there are any.
    public var blocking: [CheckFinding] { findings.filter { $0.severity == .error && !$0.waived } }

    /// How many findings have `severity`, waived or not.
    public func count(_ severity: CheckRule.Severity, waived: Bool) -> Int {
        findings.filter { $0.severity == severity && $0.waived == waived }.count
    }
}

/// How many findings a version has, by severity, waived or not: what a release reports of its
/// checks. A tally can come from the recorded findings, which hold no messages.
public struct CheckTally: Sendable, Equatable {
    /// The data version checked.
    public var version: Int
    private var counts: [Count: Int] = [:]

    private struct Count: Hashable {
        package var severity: CheckRule.Severity
        package var waived: Bool
    }

    package init(_ report: CheckReport) {
        version = report.version
        for finding in report.findings { add(finding) }
    }

    /// No findings yet.
    package init(version: Int) { self.version = version }

    /// Counts one more finding.
    package mutating func add(_ finding: CheckFinding) { add(severity: finding.severity, waived: finding.waived) }

    /// Counts one more finding of `severity`.
    package mutating func add(severity: CheckRule.Severity, waived: Bool) {
        counts[Count(severity: severity, waived: waived), default: 0] += 1
    }

    /// From counts per rule (`RecordedFindings.counts`); nil when one names a rule this binary
    /// does not have.
    package init?(version: Int, counts: [(rule: String, waived: Bool, count: Int)]) {
        self.version = version
        for entry in counts {
            guard let rule = CheckRule(rawValue: entry.rule) else { return nil }
            self.counts[Count(severity: rule.severity, waived: entry.waived), default: 0] += entry.count
        }
    }

    /// How many findings have `severity`, waived or not.
    public func count(_ severity: CheckRule.Severity, waived: Bool) -> Int {
        counts[Count(severity: severity, waived: waived)] ?? 0
    }
}

/// What a streamed `check` saw (`MasterDatabase.check(version:limits:rules:each:)`): the tally,
/// the rules it ran, and which waivers' findings went by.
public struct CheckOutcome: Sendable {
    /// How many findings, by severity, waived or not.
    public package(set) var tally: CheckTally
    /// The rules that ran: a waiver of another rule was not looked for.
    public let rules: Set<CheckRule>
    /// The waivers whose finding the rules found.
    public package(set) var waiversMet: Set<FindingIdentity> = []

    package init(tally: CheckTally, rules: Set<CheckRule>) {
        self.tally = tally
        self.rules = rules
    }

    /// Error-level findings no waiver accepts: `release` refuses while there are any.
    public var blocking: Int { tally.count(.error, waived: false) }
}
