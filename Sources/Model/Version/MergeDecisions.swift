import Foundation
import StationSupport

/// How a person decided a merge's conflicts and adoptions: all at once (`prefer`, `adoptAll`),
/// or one by one from a resolution file (`read(_:)`). A conflict or adoption left undecided
/// makes an import or a revert refuse, writing nothing.
public struct MergeDecisions: Sendable, Equatable {
    /// The side every conflict without its own decision takes.
    public var prefer: MergeSide?
    /// Adopt every pair of provisional and upstream rows the import finds.
    public var adoptAll: Bool
    /// One conflict's decision.
    public var conflicts: [ConflictID: MergeSide]
    /// One pair's decision: `true` to adopt, `false` to keep both rows.
    public var adoptions: [AdoptionID: Bool]
    /// Where the decisions came from, for an error naming the file and line of one that does not apply.
    package var conflictLines: [ConflictID: Int] = [:], adoptionLines: [AdoptionID: Int] = [:]
    package var file: String?

    /// Decisions made up front; a resolution file adds the rest (`adding(resolutionFile:)`).
    public init(prefer: MergeSide? = nil, adoptAll: Bool = false, conflicts: [ConflictID: MergeSide] = [:], adoptions: [AdoptionID: Bool] = [:]) {
        self.prefer = prefer
        self.adoptAll = adoptAll
        self.conflicts = conflicts
        self.adoptions = adoptions
    }

    /// The side a conflict takes, if it is decided.
    public func side(of conflict: MergeConflict) -> MergeSide? { conflicts[conflict.id] ?? prefer }

    /// Whether a pair is adopted (`true`), kept apart (`false`) or undecided (nil).
    public func adopts(_ adoption: Adoption) -> Bool? { adoptions[adoption.id] ?? (adoptAll ? true : nil) }

    /// Adds the decisions of a resolution file: JSON Lines, one decision a line, `#` comments.
    ///
    ///     {"table": "stations", "key": "1110602", "column": "close_ymd", "take": "theirs"}
    ///     {"table": "stations", "provisional": 9944001, "upstream": 9942801, "take": "adopt"}
    ///
    /// `take` is `ours` or `theirs` for a conflict, `adopt` or `keep` (both rows stay) for a pair;
    /// other keys (`base`, `ours`, `theirs`, as `diff --conflicts` writes them) are for the reader.
    ///
    /// - Throws: `InputError` naming the file and line.
    public func adding(resolutionFile path: String) throws -> MergeDecisions {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw InputError(.resolution, file: path, line: nil, message: "cannot read it (expected a UTF-8 JSON Lines file of decisions)")
        }
        var decisions = self
        decisions.file = path
        for (index, raw) in text.components(separatedBy: "\n").enumerated() {
            let line = index + 1
            let content = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if content.isEmpty || content.hasPrefix("#") { continue }
            switch try Self.decision(content, file: path, line: line) {
            case .conflict(let id, let side):
                if let first = decisions.conflictLines[id] {
                    throw InputError(.resolution, file: path, line: line, message: "this conflict is decided twice (line \(first) decides it too)")
                }
                decisions.conflicts[id] = side
                decisions.conflictLines[id] = line
            case .adoption(let id, let adopt):
                if let first = decisions.adoptionLines[id] {
                    throw InputError(.resolution, file: path, line: line, message: "this pair is decided twice (line \(first) decides it too)")
                }
                decisions.adoptions[id] = adopt
                decisions.adoptionLines[id] = line
            }
        }
        return decisions
    }

    /// One line's decision.
    private enum Decision {
        case conflict(ConflictID, MergeSide)
        case adoption(AdoptionID, adopt: Bool)
    }

    /// The decision one line of a resolution file makes.
    /// - Throws: `InputError` naming the line and what it lacks.
    private static func decision(_ content: String, file path: String, line: Int) throws -> Decision {
        let decoded: DecisionLine
        do {
            decoded = try JSONDecoder().decode(DecisionLine.self, from: Data(content.utf8))
        } catch {
            throw InputError(.resolution, file: path, line: line, message: "not a decision (expected one JSON object a line, e.g. {\"table\": \"stations\", \"key\": \"1110602\", \"column\": \"close_ymd\", \"take\": \"theirs\"})")
        }
        guard let table = decoded.table, !table.isEmpty else {
            throw InputError(.resolution, file: path, line: line, message: "\"table\" is missing (expected a table name such as \"stations\")")
        }
        let take = decoded.take
        let shownTake = take.map { "\"\($0)\"" } ?? "missing or null"
        if decoded.provisional != nil || decoded.upstream != nil {
            guard let provisional = decoded.provisional, let upstream = decoded.upstream else {
                throw InputError(.resolution, file: path, line: line, message: "\"provisional\" and \"upstream\" must both be codes (expected e.g. \"provisional\": 9944001, \"upstream\": 9942801)")
            }
            guard take == "adopt" || take == "keep" else {
                throw InputError(.resolution, file: path, line: line, message: "\"take\" is \(shownTake) (expected \"adopt\" or \"keep\" for a provisional row)")
            }
            return .adoption(AdoptionID(table: table, provisional: provisional, upstream: upstream), adopt: take == "adopt")
        }
        guard let key = decoded.key else {
            throw InputError(.resolution, file: path, line: line, message: "\"key\" is missing (expected the row's key, e.g. \"1110602\" or \"11302/1130201/1130202\")")
        }
        guard let column = decoded.column, !column.isEmpty else {
            throw InputError(.resolution, file: path, line: line, message: "\"column\" is missing (expected the column in conflict, e.g. \"close_ymd\")")
        }
        guard let take, let side = MergeSide(rawValue: take) else {
            throw InputError(.resolution, file: path, line: line, message: "\"take\" is \(shownTake) (expected \"ours\" or \"theirs\")")
        }
        return .conflict(ConflictID(table: table, key: key, column: column), side)
    }

    /// A resolution file with every decision still to take (`"take": null`), one line per pair
    /// of provisional rows and per conflict, with what each side holds for the reader.
    public static func skeleton(conflicts: [MergeConflict], adoptions: [Adoption]) throws -> String {
        // Each line is the item as `--json` gives it, with its decision to take.
        func line<Item: Encodable>(_ item: Item) throws -> String {
            var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(item)) as? [String: Any] ?? [:]
            object["take"] = NSNull()
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
        }
        var lines: [String] = []
        if !adoptions.isEmpty {
            lines.append("# Provisional rows upstream now has under its own codes: \"take\": \"adopt\" (close the provisional row; for a station, DUPLICATE provisional → upstream) or \"keep\" (both stay).")
            lines += try adoptions.map { try line($0) }
        }
        if !conflicts.isEmpty {
            lines.append("# Columns in conflict: \"take\": \"ours\" (the master's value) or \"theirs\" (the file's; for a revert, the value before the version).")
            lines += try conflicts.map { try line($0) }
        }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }

    /// Refuses a decision that names no conflict or pair of this merge: a file made for
    /// another import, or a typing mistake, must not pass as decided.
    package func checkEveryDecisionApplies(conflicts found: [MergeConflict], adoptions offered: [Adoption]) throws {
        let conflictIDs = Set(found.map(\.id)), adoptionIDs = Set(offered.map(\.id))
        for id in conflicts.keys where !conflictIDs.contains(id) {
            throw InputError(.resolution, file: file ?? "resolution", line: conflictLines[id],
                                  message: "\(id.table) \(id.key) \(id.column) is no conflict of this merge (expected one that `diff --conflicts` lists)")
        }
        for id in adoptions.keys where !adoptionIDs.contains(id) {
            throw InputError(.resolution, file: file ?? "resolution", line: adoptionLines[id],
                                  message: "\(id.table) \(id.provisional) → \(id.upstream) is no pair of this import (expected one that `diff --conflicts` lists)")
        }
    }

}

/// One line of a resolution file; the keys a reader may see beside the decision are ignored.
private struct DecisionLine: Decodable {
    var table: String?
    var key: String?
    var column: String?
    var take: String?
    var provisional: Int64?
    var upstream: Int64?

    enum CodingKeys: String, CodingKey { case table, key, column, take, provisional, upstream }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        table = try container.decodeIfPresent(String.self, forKey: .table)
        column = try container.decodeIfPresent(String.self, forKey: .column)
        take = try? container.decodeIfPresent(String.self, forKey: .take)
        provisional = try Self.code(container, .provisional)
        upstream = try Self.code(container, .upstream)
        // A key as `updates.key_id` writes it, a code, or a connection's three codes.
        if let text = try? container.decodeIfPresent(String.self, forKey: .key) { key = text }
        else if let code = try? container.decodeIfPresent(Int64.self, forKey: .key) { key = String(code) }
        else if let codes = try? container.decodeIfPresent([Int64].self, forKey: .key), !codes.isEmpty { key = codes.map(String.init).joined(separator: "/") }
        else { key = nil }
    }

    private static func code(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Int64? {
        if let code = try? container.decodeIfPresent(Int64.self, forKey: key) { return code }
        if let text = try? container.decodeIfPresent(String.self, forKey: key) { return Int64(text) }
        return nil
    }
}

/// The side a conflict takes.
public enum MergeSide: String, Sendable, Codable, CaseIterable {
    /// The master's value (the curated one).
    case ours
    /// The file's value (upstream's), or for a revert the value before the reverted version.
    case theirs
}

