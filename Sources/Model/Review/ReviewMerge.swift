import GRDB
import StationSchema

/// What a version decided beside the rows it changed (`merge_notes`): for an import, each
/// conflict and its decision, each provisional row adopted, the curated values kept where the
/// file said otherwise; for a revert, the version it reverts and each conflict it decided. A
/// reviewer approving the version sees these decisions, not only their rows.
public struct ReviewMerge: Sendable, Equatable {
    /// How many kept values are listed; the rest are counted.
    public static let keptListed = 20

    /// The version this one reverts, when it is a revert.
    public var reverts: Int?
    /// Conflicts decided (outcome `ours` or `theirs`), every one, in table and key order.
    public var decided: [MergeNote] = []
    /// Provisional rows closed for upstream's (outcome `adopted`), every one.
    public var adopted: [MergeNote] = []
    /// The first `keptListed` curated values kept.
    public var kept: [MergeNote] = []
    /// How many curated values the version kept.
    public var keptCount = 0

    /// Whether there is nothing to show: no revert, no note.
    public var isEmpty: Bool { reverts == nil && decided.isEmpty && adopted.isEmpty && keptCount == 0 }

    /// The notes of `version`, and what its memo says it reverts.
    package static func read(version: Int, memo: String?, _ db: Database) throws -> ReviewMerge {
        var merge = ReviewMerge(reverts: RevertMark.revertedVersion(memo: memo))
        guard try db.tableExists("merge_notes") else { return merge }
        for note in try MergeNote.notes(version: version, outcomes: [.ours, .theirs, .adopted], db) {
            if note.outcome == .adopted { merge.adopted.append(note) } else { merge.decided.append(note) }
        }
        merge.keptCount = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM merge_notes WHERE version = ? AND outcome = 'kept'", arguments: [version]) ?? 0
        merge.kept = try MergeNote.notes(version: version, outcomes: [.kept], limit: keptListed, db)
        return merge
    }
}
