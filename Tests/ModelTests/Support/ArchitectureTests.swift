import Foundation
import Testing

/// Rules of the code's shape that the compiler cannot keep, read from the sources.
@Suite struct ArchitectureTests {
    private static func sources() throws -> [(path: String, text: String)] {
        let root = Fixtures.repository.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: root.path)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        return try files.map { ($0, try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8)) }
    }

    /// `UpdateLog` is the only reader of `updates` (the version writer appends to it, and the
    /// frozen migrations rebuilt it once), and the only code that knows a split's layout there.
    @Test func updateLogIsTheOnlyReaderOfTheLog() throws {
        let reads = try NSRegularExpression(pattern: #"\b(FROM|JOIN)\s+(\\\(schema\)\.|\w+\.)?updates\b"#)
        let layout = try NSRegularExpression(pattern: #"\\\(update\.tableName\) → |type == \.duplicate"#)
        var readers: [String] = [], decoders: [String] = []
        for (path, text) in try Self.sources() {
            let range = NSRange(text.startIndex..., in: text)
            if !path.hasSuffix("Log/UpdateLog.swift") && !path.hasSuffix("Schema/MasterSchema.swift") && reads.firstMatch(in: text, range: range) != nil {
                readers.append(path)
            }
            if !path.hasSuffix("Log/UpdateLog.swift") && layout.firstMatch(in: text, range: range) != nil { decoders.append(path) }
        }
        #expect(readers == [], "these read `updates` without UpdateLog")
        #expect(decoders == [], "these decode the DUPLICATE layout themselves")
    }
}
