import Foundation
import GRDB
import StationCSV
import StationImport
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// Where the test fixtures and the repository's bundled data live.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
    static let base = root.appendingPathComponent("base")
    static let bad = root.appendingPathComponent("bad")
    static let repository = root.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let ekidata2019 = repository.appendingPathComponent("datasets/ekidata/2019-12-27").path
    static let ekidata2021 = repository.appendingPathComponent("datasets/ekidata/2021-03-12").path
}

/// The library's messages spell the commands they suggest as `station-admin` does, so that
/// what a test reads from the library is what the command prints (`CommandHint`).
enum ProgramSpelling {
    static let installed: Void = CommandHint.spellHints { hint in (["station-admin"] + hint.shellWords).joined(separator: " ") }
}

/// A temporary folder, removed when the test is done with it.
final class Scratch {
    let url: URL
    init() {
        ProgramSpelling.installed
        url = FileManager.default.temporaryDirectory.appendingPathComponent("station-admin-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// A new master database with the base fixture imported as version 1.
    func baseDatabase(name: String = "master.sqlite") throws -> MasterDatabase {
        let database = try MasterDatabase.create(at: path(name))
        try Importer(database).importSnapshot([Fixtures.base.path], options: ImportOptions(memo: "base"))
        return database
    }

    /// An editable copy of the base snapshot in a new folder.
    func snapshot(_ name: String = "snapshot") throws -> EditableSnapshot {
        let folder = url.appendingPathComponent(name)
        try FileManager.default.copyItem(at: Fixtures.base, to: folder)
        return EditableSnapshot(folder: folder)
    }
}

/// A snapshot folder edited line by line, as a curator's CSV would change.
struct EditableSnapshot {
    let folder: URL
    var path: String { folder.path }
    func file(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func replace(_ file: String, _ old: String, with new: String) throws {
        let path = self.file(file)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        precondition(text.contains(old), "\(old) not in \(file)")
        try text.replacingOccurrences(of: old, with: new).write(toFile: path, atomically: true, encoding: .utf8)
    }

    func removeLine(_ file: String, containing fragment: String) throws {
        let path = self.file(file)
        let lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        precondition(lines.contains { $0.contains(fragment) }, "\(fragment) not in \(file)")
        try lines.filter { !$0.contains(fragment) }.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    func appendLine(_ file: String, _ line: String) throws {
        let path = self.file(file)
        var text = try String(contentsOfFile: path, encoding: .utf8)
        if !text.hasSuffix("\n") { text += "\n" }
        try (text + line + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    func remove(_ file: String) throws { try FileManager.default.removeItem(atPath: self.file(file)) }
}

extension MasterDatabase {
    /// A value of one master row, for assertions.
    func value<T: DatabaseValueConvertible>(_ sql: String, _ arguments: StatementArguments = []) throws -> T? {
        try read { try T.fetchOne($0, sql: sql, arguments: arguments) }
    }
}

extension MasterDatabase {
    /// The SHA-256 of the master file once everything committed is in it: the WAL is
    /// checkpointed into the file first. A command that committed nothing leaves it unchanged
    /// whichever process checkpointed last; one that committed anything changes it.
    func settledSHA256() throws -> String {
        try queue.writeWithoutTransaction { _ = try $0.checkpoint(.truncate) }
        return try FileDigest.sha256(ofFile: path)
    }
}

/// A value shared with a `@Sendable` closure (a release's step hook) and read afterwards.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

extension Scratch {
    /// What `scripts/validate-json` says of `json` against the schema (a path in the repository):
    /// "" when it is valid.
    /// - Parameter items: each line against the schema's `items` (`scripts/validate-json --items`).
    func schemaFindings(_ json: String, against schema: String, lines: Bool = false, items: Bool = false) throws -> String {
        let file = path("validate-\(UUID().uuidString).json")
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try CommandRunner.run(
            [Fixtures.repository.appendingPathComponent(schema).path, file] + (lines ? ["--lines"] : []) + (items ? ["--items"] : []),
            program: Fixtures.repository.appendingPathComponent("scripts/validate-json"))
        #expect(result.status == 0 || !result.stdout.isEmpty, "\(result.stderr)")
        return result.stdout + (result.status == 0 ? "" : result.stderr)
    }
}
