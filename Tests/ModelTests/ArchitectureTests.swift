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
        let declaration = try NSRegularExpression(pattern: #"(?:struct|enum|class)\s+(\w+)\s*:[^{]*\b(?:Error)\b"#)
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
        #expect(owner["ImportError"] == "Import" && owner["InputError"] == "Support" && owner["ReleaseError"] == "Release" && owner["FileError"] == "Support",
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
        // A quantity: a duration, a fraction or a multiple, a share (a workload's "1 % import" is none).
        let quantity = try NSRegularExpression(pattern: #"[0-9](\.[0-9]+)? ?(s|ms|µs)\b|\b(a|one|two) (third|fifth|quarter|tenth|half)s?\b|\bthirds\b|\b(tripled|doubled|halved) the\b|\b(twice|two times|three times|five times|ten times) (the|as|level)\b|[0-9] ?%(?! (import|change))"#)
        let comparison = try NSRegularExpression(pattern: #"\b(took|takes|against|instead of|cost|costs|lived|spent|slowed|time|work)\b|\bof an? [0-9]|->|→"#)
        // A threshold is a constant, not a measurement.
        let threshold = try NSRegularExpression(pattern: #"\b(slower|faster|more|longer) than [0-9]"#)
        // Where a measurement was cited rather than kept: a session, an issue, a heading gone.
        let citation = try NSRegularExpression(pattern: #"RESULTS\.md, (session|section) [0-9]|\(issue[:)]|the core issue"#)
        var quoted: [String] = []
        // The manifest of the package too: its comments are code's comments.
        let package = try String(contentsOf: Fixtures.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        for (path, text) in try Self.sources() + [("Package.swift", package)] {
            for (number, line) in text.components(separatedBy: "\n").enumerated() {
                guard let start = line.range(of: "//") else { continue }
                let comment = String(line[start.lowerBound...])
                let range = NSRange(comment.startIndex..., in: comment)
                func matches(_ expression: NSRegularExpression) -> Bool { expression.firstMatch(in: comment, range: range) != nil }
                if (matches(quantity) && matches(comparison) && !matches(threshold)) || matches(citation) {
                    quoted.append("\(path):\(number + 1): \(comment)")
                }
            }
        }
        #expect(quoted == [])
    }

    /// Each `DOMAIN.md, "…"` the code cites names a heading (or a paragraph's bold title) of
    /// docs/DOMAIN.md, so that a renamed heading is renamed in the code too.
    @Test func everyDomainCitationNamesAHeading() throws {
        let domain = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/DOMAIN.md"), encoding: .utf8)
        let titles = domain.components(separatedBy: "\n").compactMap { line -> String? in
            if line.hasPrefix("## ") { return String(line.dropFirst(3)) }
            if line.hasPrefix("**"), let end = line.dropFirst(2).range(of: "**") { return String(line[line.index(line.startIndex, offsetBy: 2)..<end.lowerBound]) }
            return nil
        }
        let citation = try NSRegularExpression(pattern: #"DOMAIN\.md, "([^"]+)""#)
        var unknown: [String] = [], cited = 0
        for (path, text) in try Self.sources() {
            // A citation may wrap: the comment's lines joined.
            func commentText(_ line: String) -> String {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("///") { return String(trimmed.dropFirst(3)) }
                if trimmed.hasPrefix("//") { return String(trimmed.dropFirst(2)) }
                return "\n" + trimmed + "\n"
            }
            let joined = text.components(separatedBy: "\n").map(commentText).joined().replacingOccurrences(of: "  ", with: " ")
            for match in citation.matches(in: joined, range: NSRange(joined.startIndex..., in: joined)) {
                let heading = String(joined[Range(match.range(at: 1), in: joined)!]).trimmingCharacters(in: .whitespaces)
                cited += 1
                if !titles.contains(where: { $0.hasPrefix(heading) || $0.hasPrefix(heading + ".") }) { unknown.append("\(path): \(heading)") }
            }
        }
        #expect(cited > 5, "no citation was found")
        #expect(unknown == [], "citations of headings docs/DOMAIN.md does not have: \(titles)")
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
    /// What an app compiles builds for the platforms Package.swift declares: no target of the
    /// `StationClient` product's closure (docs/ARCHITECTURE.md lists it, drawn from Package.swift
    /// and checked by `scripts/architecture --check`) uses an API the floor (iOS 15, tvOS 15,
    /// watchOS 8) lacks, which Linux builds never check (`Mutex` and `Atomic` are iOS 18,
    /// `ContinuousClock` iOS 16, …), nor is any of the curator's targets among them.
    @Test func thePhoneLibraryUsesNothingAboveItsDeclaredFloor() throws {
        let architecture = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(architecture.components(separatedBy: "## What a phone app compiles").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let listed = try NSRegularExpression(pattern: #"^- `(\w+)` \(`([^`]+)`\)$"#, options: .anchorsMatchLines)
        let closure = listed.matches(in: section, range: NSRange(section.startIndex..., in: section)).map { match in
            (name: String(section[Range(match.range(at: 1), in: section)!]), path: String(section[Range(match.range(at: 2), in: section)!]))
        }
        #expect(closure.contains { $0.name == "StationClient" } && closure.contains { $0.name == "StationManifest" }, "\(closure)")
        let curators = closure.filter { $0.path.hasPrefix("Sources/Model/") && $0.name != "StationManifest" }.map(\.name)
        #expect(curators == [], "the curator's targets compile into every app")
        let aboveTheFloor: [(pattern: String, needs: String)] = [
            (#"^import Synchronization\b"#, "iOS 18"), (#"\bMutex\s*[<(]"#, "iOS 18"), (#"\bAtomic\s*<"#, "iOS 18"),
            (#"\bContinuousClock\b|\bSuspendingClock\b"#, "iOS 16"), (#"Task\.sleep\(for:"#, "iOS 16"), (#"\bDuration\b"#, "iOS 16"),
            (#"\bRegex\s*<|#/"#, "iOS 16"), (#"URL\(filePath:|\.appending\(path:"#, "iOS 16"), (#"\.withLock\s*\{"#, "iOS 16 (NSLocking)"),
            (#"\bTaskExecutor\b"#, "iOS 18"),
        ]
        var found: [String] = []
        for target in closure {
            let root = Fixtures.repository.appendingPathComponent(target.path)
            for file in FileManager.default.enumerator(atPath: root.path)!.compactMap({ $0 as? String }) where file.hasSuffix(".swift") {
                let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = String(line).components(separatedBy: "//").first ?? ""
                    for (pattern, needs) in aboveTheFloor where code.range(of: pattern, options: .regularExpression) != nil {
                        found.append("\(target.path)/\(file):\(number + 1): \(needs): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
        }
        #expect(found == [], "above the declared floor:\n\(found.joined(separator: "\n"))")
    }

    /// protocol's requirement, whose documentation is the protocol's.
    @Test func everyPublicDeclarationIsDocumented() throws {
        let declaration = try NSRegularExpression(pattern: #"^\s*(@[\w.]+(\([^)]*\))?\s+)*public\s(?!import|extension)"#)
        let requirement = try NSRegularExpression(pattern: #"var errorDescription|func encode\(to|init\(from decoder|static func [<=]|func write\(_ bytes: UnsafeRawBufferPointer\)|func finish\(\) throws|var description: String|func read\(_ request: SourceRequest"#)
        var undocumented: [String] = [], declarations = 0
        let products = ["Model/", "StationServe/", "StationWeb/", "StationClient/", "StationClientCore/", "StationSignatures/"]
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

    /// `Tests/ModelTests/<Folder>` holds the tests of `Sources/Model/<Folder>` (README.md): every
    /// target of the library has its folder of tests.
    @Test func everyLibraryTargetHasItsTestFolder() throws {
        let manager = FileManager.default
        let targets = try manager.contentsOfDirectory(atPath: Fixtures.repository.appendingPathComponent("Sources/Model").path)
            .filter { !$0.hasPrefix(".") }
        let tests = Fixtures.repository.appendingPathComponent("Tests/ModelTests")
        let missing = targets.filter { target in
            let files = (try? manager.contentsOfDirectory(atPath: tests.appendingPathComponent(target).path)) ?? []
            return !files.contains { $0.hasSuffix("Tests.swift") }
        }
        #expect(targets.count > 10 && missing == [], "library targets without a test folder")
    }

    /// docs/layout.md names every target's folder: each of `Sources/` as `Sources/NAME`, each of
    /// `Sources/Model` as `NAME/`, so that a target added or renamed is a line of the map.
    @Test func theLayoutNamesEveryTargetFolder() throws {
        let manager = FileManager.default
        let layout = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/layout.md"), encoding: .utf8)
        let sources = try manager.contentsOfDirectory(atPath: Fixtures.repository.appendingPathComponent("Sources").path).filter { !$0.hasPrefix(".") }
        let model = try manager.contentsOfDirectory(atPath: Fixtures.repository.appendingPathComponent("Sources/Model").path).filter { !$0.hasPrefix(".") }
        let unnamed = sources.filter { !layout.contains("`Sources/\($0)`") } + model.filter { !layout.contains("`\($0)/`") }
        #expect(sources.count > 10 && model.count > 10 && unnamed.isEmpty, "folders docs/layout.md does not name: \(unnamed)")
    }

    /// The release format has one home: the manifest's snake_case keys are spelled in
    /// StationManifest alone (the client decodes its `Manifest`), and what the server and the
    /// phone's client share of it links no SQLite and no master schema.
    @Test func theManifestsFormatHasOneHomeThatLinksNoSQLite() throws {
        let sources = try Self.sources()
        let keys = ["\"database_gzip\"", "\"carry_over\"", "\"carry_over_sha256\"", "\"content_hash\"", "\"sql_parts\"",
                    "\"client_schema\"", "\"published_at\""]
        // The folder's answer to a phone (`UpdateAnswer`, beside the folder's audit) names the same files in its own JSON.
        let elsewhere = sources.filter { !$0.path.hasPrefix("Model/Manifest/") && $0.path != "Model/ReleaseFolder/UpdateAnswer.swift" }.flatMap { file in
            file.text.split(separator: "\n").filter { line in
                // A coding key's raw value; a table's or a column's name of the same spelling is not one.
                line.contains("case ") && keys.contains { line.contains("= \($0)") }
            }.map { "\(file.path): \($0.trimmingCharacters(in: .whitespaces))" }
        }
        #expect(elsewhere.isEmpty, "the manifest's keys spelled outside StationManifest: \(elsewhere)")
        for folder in ["Model/Manifest/", "Model/ReleaseFolder/", "Model/Support/", "StationServe/", "StationSignatures/"] {
            let reaching = sources.filter { $0.path.hasPrefix(folder) }.filter { file in
                file.text.split(separator: "\n").contains { ["import GRDB", "import GRDBSQLite", "import CSQLiteConfig", "import StationSchema"].contains($0) }
            }.map(\.path)
            #expect(reaching.isEmpty, "\(folder) reaches SQLite or the master's schema: \(reaching)")
        }
        let package = try String(contentsOf: Fixtures.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        for target in ["StationManifest", "StationSupport"] {
            let line = package.split(separator: "\n").first { $0.contains(".target(name: \"\(target)\"") }.map(String.init) ?? ""
            #expect(!line.isEmpty && !line.contains("grdb"), "\(target) depends on GRDB: \(line)")
        }
    }
}
