@testable import Admin
import Foundation
import StationImport
import StationSchema
import StationSupport
import StationSynth
import StationVersion
import Testing

/// A large report's JSON is streamed key by key (`Console.JSONObjectStream`), its long array a
/// batch at a time: the bytes must be those of the whole report encoded at once, which is what
/// docs/json.md and every script reading `--json` rely on.
@Suite struct JSONObjectStreamTests {
    let scratch = Scratch()

    @Test func aStreamedReportIsTheWholeReportsBytes() throws {
        let database = try scratch.baseDatabase()
        let next = scratch.path("next")
        try SnapshotSynthesizer.next(of: Fixtures.base.path, changePercent: 30, seed: 3, into: next)
        // As `import --json` lists them: in a file, none in the report.
        let everyChange = try DescribedChangeFile()
        let listed = try Importer(database).diff([next], options: ImportOptions(allowMassClose: true, describeLimit: 0),
                                                 listingEveryChangeIn: everyChange)
        let report = try Importer(database).diff([next], options: ImportOptions(allowMassClose: true, describeLimit: nil))
        #expect(report.changes.count > 5 && report.changes.count == report.totalChanges, "every change described: \(report.changes.count) of \(report.totalChanges)")

        let streamed = scratch.path("streamed.json")
        let sink = try FileSink(path: streamed)
        try Console.printJSON(listed, listing: everyChange, to: sink)  // which finishes the sink
        let whole = try Console.jsonEncoder().encode(report) + Data("\n".utf8)
        let written = try Data(contentsOf: URL(fileURLWithPath: streamed))
        #expect(written == whole, "streamed \(written.count) bytes, whole \(whole.count)")
    }

    /// Keys before and after the streamed one, nested objects, an empty array, numbers whole and
    /// not, text that needs escapes: each comes back as the encoder wrote it.
    @Test func everyKindOfValueAroundTheStreamedKeyIsKept() throws {
        struct Document: Encodable {
            var alpha = ["b": 2.5, "a": 1]
            var emptyList: [Int] = []
            var findings: [String] = []
            var nested = ["z": ["y": [1, 2]], "x": [:]]
            var quoted = "say \"ok\"\n/path"
            var zeta: Int64? = nil
        }
        var whole = Document()
        whole.findings = ["one", "two \"2\""]
        let expected = try Console.jsonEncoder().encode(whole) + Data("\n".utf8)
        let path = scratch.path("document.json")
        let sink = try FileSink(path: path)
        try Console.JSONObjectStream(sink).write(Document(), streaming: "findings") {
            var array = Console.JSONArrayStream<String>(sink, depth: 1)
            for element in whole.findings { try array.append(element) }
            try array.finish()
        }
        try sink.finish()
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }
}
