/// "Did you mean …?": the name nearest to a mistyped one, as git suggests commands.
public enum NearestName {
    /// The candidate within a few edits of `given` (one for short names, at most two), if any.
    public static func nearest(to given: String, among candidates: [String]) -> String? {
        let ranked = candidates.map { ($0, distance(given, $0)) }.min { $0.1 < $1.1 }
        guard let (nearest, distance) = ranked, distance <= max(1, min(2, nearest.count / 3)) else { return nil }
        return nearest
    }

    /// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`: "stauts" is one
    /// swap from "status", "imprt" one insertion from "import".
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
