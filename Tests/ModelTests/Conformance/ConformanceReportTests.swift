import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import StationConformance
import Testing

/// The JUnit file holds whatever a client printed: read back by an XML parser and validated by
/// xmllint against the schema CI servers use, it says what the report says.
@Suite struct ConformanceReportTests {
    let scratch = Scratch()

    @Test func aClientsWordsOfAnyCharactersReachTheJUnitFileAsTheySaidThem() throws {
        let words = "exited 0: <b>\"quoted\" & 'single'</b>\nline two\ttab \u{1}\u{7}bell ]]> 新富士"
        let json = """
            {"client": "app {db} --x='1'", "seed": 7, "deadline_seconds": 20, "memory_bound_bytes": 268435456, "seconds": 1.5,
             "scenarios": [
              {"id": "trust.unsigned", "group": "trust", "protects": "a manifest without a signature", "passed": false,
               "problems": [\(try String(decoding: JSONEncoder().encode(words), as: UTF8.self))], "runs": 1, "kills": 0, "seconds": 0.25, "peak_memory_bytes": 1},
              {"id": "delta.from-1", "group": "delta", "protects": "a delta", "passed": true, "problems": [], "runs": 1, "kills": 0, "seconds": 0.5, "peak_memory_bytes": 1}]}
            """
        let report = try JSONDecoder().decode(ConformanceReport.self, from: Data(json.utf8))
        let path = scratch.path("report.xml")
        try report.junitXML().write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try ConformanceKitTests.junitFindings(path) == "")

        let document = try XMLDocument(contentsOf: URL(fileURLWithPath: path))
        let readable = words.replacingOccurrences(of: "\u{1}", with: "\u{FFFD}").replacingOccurrences(of: "\u{7}", with: "\u{FFFD}")
        let failure = try #require(try document.nodes(forXPath: "//testcase[@name='trust.unsigned']/failure").first as? XMLElement)
        #expect(failure.attribute(forName: "message")?.stringValue == readable)
        #expect(failure.stringValue == "a manifest without a signature\n" + readable)
        #expect(try document.nodes(forXPath: "//testcase").compactMap { ($0 as? XMLElement)?.attribute(forName: "time")?.stringValue } == ["0.250", "0.500"])
        #expect(try document.nodes(forXPath: "//property[@name='client']/@value").first?.stringValue == "app {db} --x='1'")
        #expect((try document.nodes(forXPath: "/testsuites/@failures").first?.stringValue) == "1")
    }
}
