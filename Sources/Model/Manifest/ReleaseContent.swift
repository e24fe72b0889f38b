/// What a release's `content_hash` covers, as both sides compute it: the curator's release
/// (`ContentHash`, from the master's declared tables) and the phone's install (which checks the
/// tables it installed before it commits).
///
/// The definition: SHA-256 over, for each table of `hashedTables` in order, the line
/// `table:<name>` and then one line per row in key order, the row's columns in the client
/// schema's order joined by `,`, each rendered as SQLite's `quote(c)`, except text holding a NUL
/// byte, which is `'nul-text:' || hex(CAST(c AS BLOB))`; every line ends with `\n`.
public enum ReleaseContent {
    /// The tables hashed, in the order hashed: the master tables, dependencies first.
    public static let hashedTables = ["prefectures", "companies", "lines", "stations", "connections"]
}
