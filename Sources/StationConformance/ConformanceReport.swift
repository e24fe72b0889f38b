import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One scenario's outcome.
public struct ScenarioResult: Sendable, Codable, Equatable {
    public let id: String
    public let group: ConformanceScenario.Group
    public let protects: String
    /// What differed from what the scenario expects; empty when it passed.
    public var problems: [String] = []
    /// Runs of the client, the kill runs included.
    public var runs = 0
    /// Runs the kit killed at a chosen instant (those that had not ended by then).
    public var kills = 0
    public var seconds = 0.0
    /// The largest resident memory of any run.
    public var peakMemoryBytes = 0

    public var passed: Bool { problems.isEmpty }

    init(_ scenario: ConformanceScenario) {
        id = scenario.id
        group = scenario.group
        protects = scenario.protects
    }

    private enum CodingKeys: String, CodingKey {
        case id, group, protects, passed, problems, runs, kills, seconds, peakMemoryBytes = "peak_memory_bytes"
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        group = try container.decode(ConformanceScenario.Group.self, forKey: .group)
        protects = try container.decode(String.self, forKey: .protects)
        problems = try container.decode([String].self, forKey: .problems)
        runs = try container.decode(Int.self, forKey: .runs)
        kills = try container.decode(Int.self, forKey: .kills)
        seconds = try container.decode(Double.self, forKey: .seconds)
        peakMemoryBytes = try container.decode(Int.self, forKey: .peakMemoryBytes)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(group, forKey: .group)
        try container.encode(protects, forKey: .protects)
        try container.encode(passed, forKey: .passed)
        try container.encode(problems, forKey: .problems)
        try container.encode(runs, forKey: .runs)
        try container.encode(kills, forKey: .kills)
        try container.encode((seconds * 1000).rounded() / 1000, forKey: .seconds)
        try container.encode(peakMemoryBytes, forKey: .peakMemoryBytes)
    }

    /// The report's line: `pass  delta.from-1  (0.41 s, 38 MiB)`, or `FAIL` with what differed.
    public var line: String {
        let measured = "(\(String(format: "%.2f", seconds)) s, \(peakMemoryBytes >> 20) MiB\(kills > 0 ? ", \(kills) kills" : ""))"
        return passed ? "pass  \(id)  \(measured)" : "FAIL  \(id)  \(measured): \(problems.joined(separator: "; "))"
    }
}

/// What `conformance` found: every scenario's result, as lines, JSON (docs/json.md) or JUnit XML.
public struct ConformanceReport: Sendable, Codable, Equatable {
    public let client: String
    public let seed: UInt64
    public let deadlineSeconds: Double
    public let memoryBoundBytes: Int
    public let scenarios: [ScenarioResult]
    public let seconds: Double

    public var failed: [ScenarioResult] { scenarios.filter { !$0.passed } }

    private enum CodingKeys: String, CodingKey {
        case client, seed, deadlineSeconds = "deadline_seconds", memoryBoundBytes = "memory_bound_bytes", scenarios, seconds
        case passed, failed
    }

    init(client: String, seed: UInt64, deadlineSeconds: Double, memoryBoundBytes: Int, scenarios: [ScenarioResult], seconds: Double) {
        self.client = client
        self.seed = seed
        self.deadlineSeconds = deadlineSeconds
        self.memoryBoundBytes = memoryBoundBytes
        self.scenarios = scenarios
        self.seconds = seconds
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        client = try container.decode(String.self, forKey: .client)
        seed = try container.decode(UInt64.self, forKey: .seed)
        deadlineSeconds = try container.decode(Double.self, forKey: .deadlineSeconds)
        memoryBoundBytes = try container.decode(Int.self, forKey: .memoryBoundBytes)
        scenarios = try container.decode([ScenarioResult].self, forKey: .scenarios)
        seconds = try container.decode(Double.self, forKey: .seconds)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(client, forKey: .client)
        try container.encode(seed, forKey: .seed)
        try container.encode(deadlineSeconds, forKey: .deadlineSeconds)
        try container.encode(memoryBoundBytes, forKey: .memoryBoundBytes)
        try container.encode(scenarios.count - failed.count, forKey: .passed)
        try container.encode(failed.count, forKey: .failed)
        try container.encode((seconds * 100).rounded() / 100, forKey: .seconds)
        try container.encode(scenarios, forKey: .scenarios)
    }

    /// The summary line after the scenarios' lines.
    public var summary: String {
        "\(scenarios.count - failed.count) of \(scenarios.count) scenarios passed in \(String(format: "%.1f", seconds)) s"
            + (failed.isEmpty ? "" : "; failed: \(failed.map(\.id).joined(separator: ", "))")
    }

    /// JUnit XML as CI servers read it (Jenkins' and GitLab's schema): a test case per
    /// scenario, its group as the class, a `failure` naming what differed. Written by the
    /// toolchain's XML library (libxml2 under FoundationXML on Linux), which escapes text and
    /// attributes; only the characters XML 1.0 cannot hold at all are replaced first.
    public func junitXML() -> String {
        let time = String(format: "%.3f", seconds)
        let properties = Self.element("properties", children: [
            Self.element("property", [("name", "client"), ("value", client)]),
            Self.element("property", [("name", "seed"), ("value", String(seed))]),
        ])
        let cases = scenarios.map { scenario in
            let failure = scenario.passed ? [] : [Self.element(
                "failure", [("message", scenario.problems.first ?? ""), ("type", "conformance")],
                text: scenario.protects + "\n" + scenario.problems.joined(separator: "\n"))]
            return Self.element("testcase", [("classname", "conformance.\(scenario.group.rawValue)"), ("name", scenario.id),
                                             ("time", String(format: "%.3f", scenario.seconds))], children: failure)
        }
        let counts = [("name", Self.suiteName), ("tests", String(scenarios.count)), ("failures", String(failed.count))]
        let suite = Self.element("testsuite", counts + [("errors", "0"), ("skipped", "0"), ("time", time)], children: [properties] + cases)
        let document = XMLDocument(rootElement: Self.element("testsuites", counts + [("time", time)], children: [suite]))
        document.version = "1.0"
        document.characterEncoding = "UTF-8"
        return document.xmlString(options: [.nodePrettyPrint]) + "\n"
    }

    private static let suiteName = "station-admin conformance"

    /// An element with its attributes in the order given (a dictionary's would change between runs).
    private static func element(_ name: String, _ attributes: [(String, String)] = [], text: String? = nil, children: [XMLNode] = []) -> XMLElement {
        let element = XMLElement(name: name)
        for (key, value) in attributes {
            // Typed `Any` by Foundation's API on every platform; it is always an attribute node.
            element.addAttribute(XMLNode.attribute(withName: key, stringValue: xmlCharacters(value)) as! XMLNode)
        }
        if let text { element.addChild(XMLNode.text(withStringValue: xmlCharacters(text)) as! XMLNode) }
        for child in children { element.addChild(child) }
        return element
    }

    /// The text with every character XML 1.0 cannot hold (a client's output may have any
    /// control character) as U+FFFD; tab, newline and carriage return stay.
    static func xmlCharacters(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let allowed = scalar == "\t" || scalar == "\n" || scalar == "\r" || (scalar.value >= 0x20 && scalar.value != 0xFFFE && scalar.value != 0xFFFF)
            kept.append(allowed ? scalar : "\u{FFFD}")
        }
        return String(kept)
    }
}
