import Foundation
import GRDB
import StationSQLite
import StationSupport

/// A plan file: one real-world event as a list of operations, committed as one version.
///
/// Format: JSON Lines. Each non-blank line is one JSON object with an `"op"`; lines that
/// start with `#` are comments (say there where a code is invented). The optional first
/// object `{"plan": "title", "memo": "…"}` names the plan. For example:
///
///     # 2010-12-04: the Tohoku Main Line north of Morioka passes to Aoimori Railway
///     {"plan": "Aoimori Railway", "memo": "Tohoku Shinkansen reaches Shin-Aomori"}
///     {"op": "add", "table": "companies", "row": {"company_cd": 246, "company_name": "青い森鉄道", "e_status": 0}}
///     {"op": "transfer_line", "line": 11201, "to_company": 246}
///     {"op": "split", "old": 1120101, "new": 9920607, "line": 99206}
///
/// Operations: `add` (table, row), `edit` (table, key, set), `transfer_line` (line, to_company),
/// `move_stations` (stations, to_line), `close` (table, key, date?, cascade?), `restore` (table, key),
/// `split` (old, new, line?, set?, connect_to?), `record_split` (old, new: both existing),
/// `connect` / `disconnect` (line, stations).
/// A key is a code, or `[line_cd, station_cd1, station_cd2]` for connections.
public struct PlanFile: Sendable {
    /// The plan's title line, when it has one.
    public var title: String?
    /// The version's memo the plan gives (its `memo` line).
    public var memo: String?
    /// The operations, each with its line in the file.
    public var operations: [LocatedOperation]

    /// Reads and checks a plan file (JSON Lines) without touching the master.
    ///
    /// - Throws: `InputError` naming the file and line.
    public static func load(_ path: String) throws -> PlanFile {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw InputError(.plan, file: path, line: nil, message: "no such file (expected a JSON Lines plan, e.g. datasets/plans/2024-03-16-hokuriku.jsonl)")
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            throw InputError(.plan, file: path, line: nil, message: "cannot read the plan (expected a readable JSON Lines file, not a folder)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw InputError(.plan, file: path, line: nil, message: "not UTF-8 text (expected a JSON Lines plan)")
        }
        var plan = PlanFile(title: nil, memo: nil, operations: [])
        let duplicates = try JSONDuplicateKeys()
        for (index, rawLine) in text.components(separatedBy: "\n").enumerated() {
            let line = index + 1
            let content = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if content.isEmpty || content.hasPrefix("#") { continue }
            let decoded: PlanLine
            do {
                decoded = try JSONDecoder().decode(PlanLine.self, from: Data(content.utf8))
            } catch let problem as PlanLine.Problem {
                throw InputError(.plan, file: path, line: line, message: problem.message)
            } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
                throw InputError(.plan, file: path, line: line, message: "expected one JSON object on this line")
            } catch {
                throw InputError(.plan, file: path, line: line, message: "not valid JSON (expected one JSON object per line, e.g. {\"op\": \"close\", \"table\": \"stations\", \"key\": 1141543})")
            }
            if let duplicate = try duplicates.first(in: content) {
                throw InputError(.plan, file: path, line: line, message: "\"\(duplicate.key)\" is named twice in \(duplicate.object) "
                    + "(expected each key once: JSON readers disagree on which value counts, so the reviewer and the master could see different ones; keep one)")
            }
            if let operation = decoded.operation {
                plan.operations.append(LocatedOperation(operation, file: path, line: line))
            } else {
                plan.title = decoded.title
                plan.memo = decoded.memo
            }
        }
        if plan.operations.isEmpty { throw InputError(.plan, file: path, line: nil, message: "no operations (expected one JSON object per line with an \"op\")") }
        return plan
    }
}
