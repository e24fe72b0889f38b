/// The memo of a version `revert` wrote: `revert version 5`, then `: ` and the curator's memo.
/// The mark stays when a curator gives a memo, so that `versions`, `log` and the review say what
/// the version undid; this is where it is written and read back.
public enum RevertMark {
    private static let prefix = "revert version "

    /// `revert version 5: the handover was announced too early`.
    public static func memo(reverting version: Int, curatorMemo: String?) -> String {
        let mark = prefix + String(version)
        return curatorMemo.map { "\(mark): \($0)" } ?? mark
    }

    /// The version a version's memo says it reverts, if it is a revert's.
    public static func revertedVersion(memo: String?) -> Int? {
        guard let memo, memo.hasPrefix(prefix) else { return nil }
        return Int(memo.dropFirst(prefix.count).prefix { $0.isNumber })
    }
}
