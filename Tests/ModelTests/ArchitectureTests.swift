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
            if !path.hasSuffix("Schema/UpdateLog.swift") && !path.hasSuffix("Schema/MasterSchema.swift") && reads.firstMatch(in: text, range: range) != nil {
                readers.append(path)
            }
            if !path.hasSuffix("Schema/UpdateLog.swift") && layout.firstMatch(in: text, range: range) != nil { decoders.append(path) }
        }
        #expect(readers == [], "these read `updates` without UpdateLog")
        #expect(decoders == [], "these decode the DUPLICATE layout themselves")
    }

    /// Each target throws its own errors: a target constructs only the error types it declares,
    /// and `StationSupport`'s (`FileError`, `GzipError`), which name a file and its system error.
    @Test func eachTargetThrowsItsOwnErrors() throws {
        let declaration = try NSRegularExpression(pattern: #"(?:struct|enum|class)\s+(\w+)\s*:[^{]*\b(?:Error|LocatedProblem)\b"#)
        let thrown = try NSRegularExpression(pattern: #"\bthrow\s+([A-Z]\w*)\s*[.(]"#)
        func folder(_ path: String) -> String? {
            let parts = path.split(separator: "/")
            return parts.count >= 3 && parts[0] == "Model" ? String(parts[1]) : nil
        }
        let sources = try Self.sources()
        var owner: [String: String] = [:]
        for (path, text) in sources {
            guard let folder = folder(path) else { continue }
            for match in declaration.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                owner[String(text[Range(match.range(at: 1), in: text)!])] = folder
            }
        }
        #expect(owner["CSVError"] == "CSV" && owner["ReleaseError"] == "Release" && owner["FileError"] == "Support",
                "the error declarations were not found: \(owner)")
        var foreign: [String] = []
        for (path, text) in sources {
            guard let folder = folder(path) else { continue }
            for match in thrown.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let type = String(text[Range(match.range(at: 1), in: text)!])
                if let home = owner[type], home != folder, home != "Support" { foreign.append("\(path) throws \(type)") }
            }
        }
        #expect(foreign == [], "a target throws another target's error")
    }

    /// Comments say why; a timing measured once belongs to the commit and RESULTS.md, where it
    /// is dated, not in a comment that outlives it. A constant's own value (`75 s`, as nginx) is not
    /// a measurement: a line is flagged when a duration stands beside a comparison.
    @Test func noCommentQuotesAPastTiming() throws {
        let duration = try NSRegularExpression(pattern: #"[0-9](\.[0-9]+)? ?(s|ms|µs)\b"#)
        let comparison = try NSRegularExpression(pattern: #"\b(took|takes|against|instead of|cost|costs|lived|spent)\b|->|→"#)
        var quoted: [String] = []
        for (path, text) in try Self.sources() {
            for (number, line) in text.components(separatedBy: "\n").enumerated() {
                guard let start = line.range(of: "//") else { continue }
                let comment = String(line[start.lowerBound...])
                let range = NSRange(comment.startIndex..., in: comment)
                if duration.firstMatch(in: comment, range: range) != nil && comparison.firstMatch(in: comment, range: range) != nil {
                    quoted.append("\(path):\(number + 1): \(comment)")
                }
            }
        }
        #expect(quoted == [])
    }

    /// The command line's words live in Admin: the library names a command to run as a
    /// `CommandHint` (the subcommand and its arguments) and the program spells it, so no
    /// `station-admin` is written inside Sources/Model.
    @Test func theLibraryLeavesTheCommandLinesWordsToAdmin() throws {
        // A file format's identifier is not a command: review pages already written carry this one.
        let formatIdentifiers = ["<!-- station-admin review -->"]
        var spelled: [String] = []
        for (path, text) in try Self.sources() where path.hasPrefix("Model/") {
            for (number, line) in text.components(separatedBy: "\n").enumerated()
            where formatIdentifiers.reduce(line, { $0.replacingOccurrences(of: $1, with: "") }).contains("station-admin") {
                spelled.append("\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(spelled == [])
    }

    /// Every public declaration of every product (the library, the server, the client and the
    /// signatures both sides share) says what it is in a `///` comment
    /// (`swift package generate-documentation` shows it), except a member that implements a
    /// protocol's requirement, whose documentation is the protocol's.
    @Test func everyPublicDeclarationIsDocumented() throws {
        let declaration = try NSRegularExpression(pattern: #"^\s*(@[\w.]+(\([^)]*\))?\s+)*public\s(?!import|extension)"#)
        let requirement = try NSRegularExpression(pattern: #"var errorDescription|func encode\(to|init\(from decoder|static func [<=]|func write\(_ bytes: UnsafeRawBufferPointer\)|func finish\(\) throws|var description: String|func read\(_ request: SourceRequest"#)
        var undocumented: [String] = [], declarations = 0
        let products = ["Model/", "StationServe/", "StationWeb/", "StationClient/", "StationSignatures/"]
        for (path, text) in try Self.sources() where products.contains(where: path.hasPrefix) {
            let lines = text.components(separatedBy: "\n")
            for (index, line) in lines.enumerated() {
                let range = NSRange(line.startIndex..., in: line)
                guard declaration.firstMatch(in: line, range: range) != nil, requirement.firstMatch(in: line, range: range) == nil else { continue }
                declarations += 1
                var above = index - 1
                while above >= 0, lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("@") { above -= 1 }
                if above < 0 || !lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                    undocumented.append("\(path):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(declarations > 400, "the public declarations were not found")
        #expect(undocumented == [], "public declarations without a /// comment")
    }
}
