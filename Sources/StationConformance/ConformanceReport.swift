import Foundation

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
    /// scenario, its group as the class, a `failure` naming what differed.
    public func junitXML() -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"station-admin conformance\" tests=\"\(scenarios.count)\" failures=\"\(failed.count)\" time=\(Self.attribute(String(format: "%.3f", seconds)))>\n"
        xml += "  <testsuite name=\"station-admin conformance\" tests=\"\(scenarios.count)\" failures=\"\(failed.count)\" errors=\"0\" skipped=\"0\" time=\(Self.attribute(String(format: "%.3f", seconds)))>\n"
        xml += "    <properties>\n"
        xml += "      <property name=\"client\" value=\(Self.attribute(client))/>\n"
        xml += "      <property name=\"seed\" value=\"\(seed)\"/>\n"
        xml += "    </properties>\n"
        for scenario in scenarios {
            xml += "    <testcase classname=\(Self.attribute("conformance.\(scenario.group.rawValue)")) name=\(Self.attribute(scenario.id)) time=\(Self.attribute(String(format: "%.3f", scenario.seconds)))"
            if scenario.passed {
                xml += "/>\n"
            } else {
                xml += ">\n      <failure message=\(Self.attribute(scenario.problems.first ?? "")) type=\"conformance\">\(Self.escaped(scenario.protects + "\n" + scenario.problems.joined(separator: "\n")))</failure>\n    </testcase>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// XML character data: the five characters with meaning escaped, and the control characters
    /// XML 1.0 cannot hold (a client's output may have any) as U+FFFD.
    static func escaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
            default: escaped.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF ? "\u{FFFD}" : scalar)
            }
        }
        return escaped
    }

    static func attribute(_ text: String) -> String {
        "\"" + escaped(text).replacingOccurrences(of: "\n", with: "&#10;").replacingOccurrences(of: "\r", with: "&#13;").replacingOccurrences(of: "\t", with: "&#9;") + "\""
    }
}
