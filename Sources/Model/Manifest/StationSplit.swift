/// A station split recorded in the log: every user record of `old` is copied to `new`
/// (DOMAIN.md, DUPLICATE).
///
/// In `updates` a split is a `DUPLICATE` row whose `table_name` holds the old station code and
/// `key_id` the new one (the layout the apps' sync inherited). `UpdateLog` is the only code that
/// reads that layout; everything else asks it for `StationSplit`s.
public struct StationSplit: Codable, Sendable, Hashable {
    /// The station whose records are copied.
    public var old: Int64
    /// The station that receives them.
    public var new: Int64
    /// The data version that recorded it.
    public var version: Int

    /// A split recorded by `version`.
    public init(old: Int64, new: Int64, version: Int) {
        self.old = old
        self.new = new
        self.version = version
    }
}
